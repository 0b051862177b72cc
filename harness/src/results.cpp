#include "moreau/harness/results.hpp"

#include <omp.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>
#include <utility>

#include "moreau/core/error.hpp"
#include "moreau/harness/provenance.hpp"

namespace moreau {

std::string to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::pass:
      return "pass";
    case Verdict::fail:
      return "fail";
    case Verdict::known_difference:
      return "known difference";
    case Verdict::not_evaluated:
      return "not evaluated";
  }
  return "unknown";
}

std::string to_string(Measured measured) {
  switch (measured) {
    case Measured::exact:
      return "exact";
    case Measured::lower_bound:
      return "lower_bound";
    case Measured::upper_bound:
      return "upper_bound";
  }
  return "unknown";
}

bool passes(const ReferenceValue& ref, double measured) {
  if (!std::isfinite(measured)) return false;
  switch (ref.comparison) {
    case Comparison::relative:
      return std::abs(measured - ref.published) <= ref.tolerance * std::abs(ref.published);
    case Comparison::absolute:
      return std::abs(measured - ref.published) <= ref.tolerance;
    case Comparison::at_least:
      return measured >= ref.published;
    case Comparison::at_most:
      return measured <= ref.published;
    case Comparison::range:
      return ref.published <= measured && measured <= ref.published_high;
    case Comparison::holds:
      return measured == 1.0;
  }
  return false;
}

namespace {

// Whether a bound decides the comparison, and how: every value beyond a lower bound `b` is
// >= b, so `at_least p` passes when b >= p and `at_most p` fails when b > p; the mirror for an
// upper bound. Any other case leaves the true value on both sides of the threshold.
enum class BoundDecides { pass, fail, undecided };
BoundDecides decide_by_bound(const ReferenceValue& ref, double bound, Measured measured_is) {
  if (!std::isfinite(bound)) return BoundDecides::undecided;
  const bool lower = measured_is == Measured::lower_bound;
  if (ref.comparison == Comparison::at_least) {
    if (lower && bound >= ref.published) return BoundDecides::pass;
    if (!lower && bound < ref.published) return BoundDecides::fail;
  } else if (ref.comparison == Comparison::at_most) {
    if (lower && bound > ref.published) return BoundDecides::fail;
    if (!lower && bound <= ref.published) return BoundDecides::pass;
  }
  return BoundDecides::undecided;
}

}  // namespace

CheckResult judge(const ReferenceValue& reference, const std::string& scale, double measured,
                  Measured measured_is) {
  CheckResult result;
  result.reference = reference;
  result.measured = measured;
  result.measured_is = measured_is;
  if (!reference.applies_to(scale)) {
    result.verdict = Verdict::not_evaluated;
    return result;
  }
  bool passed = false;
  if (measured_is == Measured::exact) {
    passed = passes(reference, measured);
  } else {
    const BoundDecides decides = decide_by_bound(reference, measured, measured_is);
    if (decides == BoundDecides::undecided) {
      result.verdict = Verdict::not_evaluated;
      return result;
    }
    passed = decides == BoundDecides::pass;
  }
  const bool flagged = !reference.known_difference_at(scale).empty();
  if (passed) {
    result.verdict = Verdict::pass;
    result.stale_known_difference = flagged;
  } else {
    result.verdict = flagged ? Verdict::known_difference : Verdict::fail;
  }
  return result;
}

ExperimentOptions& ExperimentOptions::flag(const std::string& name, bool& value,
                                           const std::string& help) {
  Declared declared;
  declared.name = name;
  declared.help = help;
  declared.flag = &value;
  declared_.push_back(std::move(declared));
  return *this;
}

ExperimentOptions& ExperimentOptions::choices(std::vector<std::string> allowed) {
  if (declared_.empty() || declared_.back().flag != nullptr)
    throw InputError("ExperimentOptions::choices: no option declared before it");
  std::string name;
  for (const std::string& c : allowed) name += (name.empty() ? "" : "|") + c;
  declared_.back().choices = std::move(allowed);
  declared_.back().value_name = name;
  return *this;
}

ExperimentOptions& ExperimentOptions::named(std::string value_name) {
  if (declared_.empty() || declared_.back().flag != nullptr)
    throw InputError("ExperimentOptions::named: no option declared before it");
  declared_.back().value_name = std::move(value_name);
  return *this;
}

ExperimentOptions& ExperimentOptions::within(double low, double high) {
  if (declared_.empty() || !(declared_.back().whole || declared_.back().number))
    throw InputError("ExperimentOptions::within: no number option declared before it");
  declared_.back().low = low;
  declared_.back().high = high;
  return *this;
}

void ExperimentOptions::describe(Declared& declared, const std::string*) {
  declared.value_name = "TEXT";
}
void ExperimentOptions::describe(Declared& declared, const long*) {
  declared.value_name = "N";
  declared.whole = true;
}
void ExperimentOptions::describe(Declared& declared, const int*) {
  declared.value_name = "N";
  declared.whole = true;
}
void ExperimentOptions::describe(Declared& declared, const double*) {
  declared.value_name = "X";
  declared.number = true;
}

namespace {

std::string number_text(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.15g", x);
  return text;
}

// What a declared option accepts, in words: "disk, angular or non_convex", "a whole number >= 1".
std::string accepted(const ExperimentOptions::Declared& d) {
  if (!d.choices.empty()) {
    std::string words;
    for (std::size_t i = 0; i < d.choices.size(); ++i)
      words += (i == 0 ? "" : i + 1 == d.choices.size() ? " or " : ", ") + d.choices[i];
    return words;
  }
  std::string words = d.whole ? "a whole number" : d.number ? "a number" : "a text";
  const bool low = std::isfinite(d.low), high = std::isfinite(d.high);
  if (low && high) return words + " from " + number_text(d.low) + " to " + number_text(d.high);
  if (low) return words + " >= " + number_text(d.low);
  if (high) return words + " <= " + number_text(d.high);
  return words;
}

// Whether `text` is a value the option accepts (its choices, its type, its range).
bool acceptable(const ExperimentOptions::Declared& d, const std::string& text) {
  if (!d.choices.empty())
    return std::find(d.choices.begin(), d.choices.end(), text) != d.choices.end();
  if (!d.whole && !d.number) return true;
  std::size_t used = 0;
  double x = std::numeric_limits<double>::quiet_NaN();
  try {
    x = d.whole ? static_cast<double>(std::stol(text, &used)) : std::stod(text, &used);
  } catch (const std::exception&) {
    return false;
  }
  return used == text.size() && std::isfinite(x) && d.low <= x && x <= d.high;
}

// Checks and stores the value of a declared option; throws InputError naming the option.
void assign(const ExperimentOptions::Declared& d, const std::string& text) {
  const std::string refused = d.name + ": expected " + accepted(d) + ", got '" + text + "'";
  if (!acceptable(d, text)) throw InputError(refused);
  try {
    d.assign(text);
  } catch (const std::invalid_argument&) {
    throw InputError(refused);
  } catch (const std::out_of_range&) {
    throw InputError(refused);
  }
}

}  // namespace

ExperimentArguments ExperimentArguments::parse(int argc, char** argv, const std::string& experiment,
                                               const ExperimentOptions& own) {
  ExperimentArguments args;
  std::optional<std::string> reference, output;
  ExperimentOptions common;
  common.option("--scale", args.scale, "quick: the smaller run of README.md; full: the paper's")
      .choices({"quick", "full"});
  common.option("--reference", reference, "directory of expected.json (required)").named("DIR");
  common.option("--output", output, "directory of results.json and the raw data (required)")
      .named("DIR");
  common.option("--threads", args.threads, "OpenMP threads (default: OpenMP's)").within(1);
  CLI::App app(
      "Runs the experiment, checks it against DIR/expected.json and writes results.json,\n"
      "raw CSV data and figures' data to the output directory.",
      experiment);
  for (const ExperimentOptions* options : {&std::as_const(common), &own}) {
    for (const ExperimentOptions::Declared& d : options->declared()) {
      if (d.flag != nullptr) {
        app.add_flag(d.name, *d.flag, d.help);
        continue;
      }
      app.add_option_function<std::string>(
             d.name, [&d](const std::string& text) { assign(d, text); }, d.help)
          ->type_name(d.value_name);
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    std::exit(0);
  } catch (const CLI::ParseError& e) {
    throw InputError(experiment + ": " + e.what());
  } catch (const InputError& e) {
    throw InputError(experiment + ": " + e.what());
  }
  if (!reference) throw InputError(experiment + ": --reference DIR is required");
  if (!output) throw InputError(experiment + ": --output DIR is required");
  args.reference_directory = *reference;
  args.output_directory = *output;
  start_run(argc, argv);
  if (args.threads > 0) omp_set_num_threads(args.threads);
  std::filesystem::create_directories(args.output_directory);
  return args;
}

ExperimentResults::ExperimentResults(std::string experiment, std::string scale, Reference reference)
    : experiment_(std::move(experiment)),
      scale_(std::move(scale)),
      reference_(std::move(reference)) {}

const CheckResult& ExperimentResults::record(CheckResult result) {
  for (const CheckResult& c : checks_)
    if (c.reference.name == result.reference.name)
      throw InputError(experiment_ + ": reference value '" + result.reference.name +
                       "' was checked twice");
  if (!result.reference.applies_to(scale_))
    throw InputError(experiment_ + ": reference value '" + result.reference.name +
                     "' does not apply at the " + scale_ + " scale");
  checks_.push_back(std::move(result));
  return checks_.back();
}

const CheckResult& ExperimentResults::check(const std::string& name, double measured,
                                            const std::string& note) {
  CheckResult result = judge(reference_.get(name), scale_, measured);
  result.note = note;
  return record(std::move(result));
}

const CheckResult& ExperimentResults::check(const std::string& name, bool holds,
                                            const std::string& note) {
  return check(name, holds ? 1.0 : 0.0, note);
}

const CheckResult& ExperimentResults::check_bound(const std::string& name, double bound,
                                                  Measured measured_is, const std::string& note) {
  CheckResult result = judge(reference_.get(name), scale_, bound, measured_is);
  result.note = note;
  return record(std::move(result));
}

const CheckResult& ExperimentResults::not_evaluated(const std::string& name,
                                                    const std::string& reason) {
  if (reason.empty())
    throw InputError(experiment_ + ": '" + name + "' not evaluated without a reason");
  CheckResult result;
  result.reference = reference_.get(name);
  result.note = reason;
  result.verdict = Verdict::not_evaluated;
  return record(std::move(result));
}

void ExperimentResults::measure(const std::string& name, double value, const std::string& unit,
                                const std::string& note) {
  measurements_.push_back({name, value, unit, note});
}

void ExperimentResults::add_file(const std::string& relative_path, const std::string& kind) {
  files_.emplace_back(relative_path, kind);
}

bool ExperimentResults::all_passed() const {
  for (const CheckResult& c : checks_)
    if (c.verdict == Verdict::fail || c.stale_known_difference) return false;
  return true;
}

std::vector<CheckResult> ExperimentResults::verdicts() const {
  std::vector<CheckResult> all;
  for (const ReferenceValue& ref : reference_.values()) {
    const auto recorded = std::find_if(checks_.begin(), checks_.end(), [&](const CheckResult& c) {
      return c.reference.name == ref.name;
    });
    if (recorded != checks_.end()) {
      all.push_back(*recorded);
      continue;
    }
    CheckResult missing;
    missing.reference = ref;
    missing.verdict = Verdict::not_evaluated;
    missing.note = ref.applies_to(scale_) ? "never checked by this run"
                                          : "the entry does not apply at the " + scale_ + " scale";
    all.push_back(missing);
  }
  return all;
}

int ExperimentResults::exit_code() const {
  int code = 0;
  for (const CheckResult& c : checks_) {
    if (c.verdict == Verdict::fail) code = 1;
    if (c.stale_known_difference) {
      std::cerr << experiment_ << ": '" << c.reference.name << "' passes at the " << scale_
                << " scale but is flagged as a known difference there: the flag is stale\n";
      code = 1;
    }
  }
  for (const ReferenceValue& ref : reference_.values()) {
    if (!ref.applies_to(scale_)) continue;
    const bool recorded = std::any_of(checks_.begin(), checks_.end(), [&](const CheckResult& c) {
      return c.reference.name == ref.name;
    });
    if (!recorded) {
      std::cerr << experiment_ << ": reference value '" << ref.name << "' was never checked\n";
      code = 1;
    }
  }
  return code;
}

namespace {

std::string published_text(const ReferenceValue& ref) {
  char text[64];
  if (ref.comparison == Comparison::range)
    std::snprintf(text, sizeof text, "[%.3g, %.3g]", ref.published, ref.published_high);
  else if (ref.comparison == Comparison::holds)
    std::snprintf(text, sizeof text, "true");
  else
    std::snprintf(text, sizeof text, "%.6g", ref.published);
  return text;
}

std::string measured_text(const CheckResult& c) {
  if (c.verdict == Verdict::not_evaluated && std::isnan(c.measured)) return "-";
  if (c.reference.comparison == Comparison::holds) return c.measured == 1.0 ? "true" : "false";
  char text[64];
  const char* prefix = c.measured_is == Measured::lower_bound   ? "> "
                       : c.measured_is == Measured::upper_bound ? "< "
                                                                : "";
  std::snprintf(text, sizeof text, "%s%.6g", prefix, c.measured);
  return text;
}

}  // namespace

void ExperimentResults::write(const std::string& directory) const {
  const std::vector<CheckResult> all = verdicts();
  const int code = exit_code();
  const RunProvenance run = current_run();
  nlohmann::json doc;
  doc["experiment"] = experiment_;
  doc["scale"] = scale_;
  doc["passed"] = code == 0;
  doc["threads"] = run.threads;
  doc["provenance"] = {{"commit", run.commit},
                       {"date", run.date},
                       {"machine", run.machine},
                       {"threads", run.threads},
                       {"wall_seconds", run.wall_seconds},
                       {"command", run.command}};
  nlohmann::json counts = {{"pass", 0}, {"fail", 0}, {"known difference", 0}, {"not evaluated", 0}};
  doc["checks"] = nlohmann::json::array();
  for (const CheckResult& c : all) {
    counts[to_string(c.verdict)] = counts[to_string(c.verdict)].get<int>() + 1;
    nlohmann::json entry;
    entry["name"] = c.reference.name;
    entry["comparison"] = to_string(c.reference.comparison);
    if (c.reference.comparison == Comparison::range)
      entry["published"] = {c.reference.published, c.reference.published_high};
    else if (c.reference.comparison != Comparison::holds)
      entry["published"] = c.reference.published;
    entry["statement"] = c.reference.statement;
    entry["measured"] =
        std::isfinite(c.measured) ? nlohmann::json(c.measured) : nlohmann::json(nullptr);
    if (c.measured_is != Measured::exact) entry["measured_is"] = to_string(c.measured_is);
    entry["tolerance"] = c.reference.tolerance;
    entry["source"] = c.reference.source;
    entry["tolerance_reason"] = c.reference.reason;
    entry["note"] = c.note;
    entry["verdict"] = to_string(c.verdict);
    if (!c.reference.scales.empty()) entry["scales"] = c.reference.scales;
    const std::string flag = c.reference.known_difference_at(scale_);
    if (!flag.empty()) entry["known_difference"] = flag;
    if (c.stale_known_difference) entry["stale_known_difference"] = true;
    doc["checks"].push_back(entry);
  }
  doc["counts"] = counts;
  doc["measurements"] = nlohmann::json::array();
  for (const Measurement& m : measurements_)
    doc["measurements"].push_back(
        {{"name", m.name},
         {"value", std::isfinite(m.value) ? nlohmann::json(m.value) : nlohmann::json(nullptr)},
         {"unit", m.unit},
         {"note", m.note}});
  doc["files"] = nlohmann::json::array();
  for (const auto& [path, kind] : files_) doc["files"].push_back({{"path", path}, {"kind", kind}});
  std::filesystem::create_directories(directory);
  std::ofstream out(directory + "/results.json");
  out << doc.dump(2) << "\n";
  if (!out) throw InputError(directory + "/results.json: cannot write");

  std::printf(
      "%s (%s scale): %d checks: %d pass, %d fail, %d known differences, %d not evaluated\n",
      experiment_.c_str(), scale_.c_str(), static_cast<int>(all.size()), counts["pass"].get<int>(),
      counts["fail"].get<int>(), counts["known difference"].get<int>(),
      counts["not evaluated"].get<int>());
  std::printf("  %-44s %-10s %14s %14s %10s  %s\n", "check", "compare", "published", "measured",
              "tolerance", "verdict");
  for (const CheckResult& c : all) {
    std::string verdict = to_string(c.verdict);
    if (c.verdict == Verdict::fail) verdict = "FAIL";
    if (c.stale_known_difference) verdict += " (STALE known-difference flag)";
    std::printf("  %-44s %-10s %14s %14s %10.2g  %s\n", c.reference.name.c_str(),
                to_string(c.reference.comparison).c_str(), published_text(c.reference).c_str(),
                measured_text(c).c_str(), c.reference.tolerance, verdict.c_str());
  }
  for (const Measurement& m : measurements_)
    std::printf("  measured %-40s %14.6g %s\n", m.name.c_str(), m.value, m.unit.c_str());
}

}  // namespace moreau
