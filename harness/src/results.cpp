#include "moreau/harness/results.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "moreau/core/error.hpp"

namespace moreau {

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

ExperimentArguments ExperimentArguments::parse(int argc, char** argv,
                                               const std::string& experiment) {
  ExperimentArguments args;
  for (int i = 1; i < argc; ++i) {
    const std::string key = argv[i];
    if (key == "--help" || key == "-h") {
      std::cout << "usage: " << experiment
                << " [--scale quick|full] --reference DIR --output DIR [--threads N]\n"
                   "Runs the experiment, checks it against DIR/expected.json and writes\n"
                   "results.json, raw CSV data and figures' data to the output directory.\n";
      std::exit(0);
    }
    if (i + 1 >= argc) throw InputError(experiment + ": option " + key + " needs a value");
    const std::string value = argv[++i];
    if (key == "--scale") {
      if (value != "quick" && value != "full")
        throw InputError(experiment + ": --scale must be quick or full, got " + value);
      args.scale = value;
    } else if (key == "--reference") {
      args.reference_directory = value;
    } else if (key == "--output") {
      args.output_directory = value;
    } else if (key == "--threads") {
      args.threads = std::stoi(value);
    } else {
      throw InputError(experiment + ": unknown option " + key);
    }
  }
  if (args.reference_directory.empty())
    throw InputError(experiment + ": --reference DIR is required");
  if (args.output_directory.empty()) throw InputError(experiment + ": --output DIR is required");
  if (args.threads > 0) omp_set_num_threads(args.threads);
  std::filesystem::create_directories(args.output_directory);
  return args;
}

ExperimentResults::ExperimentResults(std::string experiment, std::string scale, Reference reference)
    : experiment_(std::move(experiment)),
      scale_(std::move(scale)),
      reference_(std::move(reference)) {}

const CheckResult& ExperimentResults::check(const std::string& name, double measured,
                                            const std::string& note) {
  CheckResult result;
  result.reference = reference_.get(name);
  result.measured = measured;
  result.note = note;
  result.passed = passes(result.reference, measured);
  checks_.push_back(result);
  return checks_.back();
}

const CheckResult& ExperimentResults::check(const std::string& name, bool holds,
                                            const std::string& note) {
  return check(name, holds ? 1.0 : 0.0, note);
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
    if (!c.passed && c.reference.known_difference.empty()) return false;
  return true;
}

int ExperimentResults::exit_code() const {
  if (!all_passed()) return 1;
  for (const ReferenceValue& ref : reference_.values()) {
    if (!ref.applies_to(scale_)) continue;
    bool checked = false;
    for (const CheckResult& c : checks_) checked = checked || c.reference.name == ref.name;
    if (!checked) {
      std::cerr << experiment_ << ": reference value '" << ref.name << "' was never checked\n";
      return 1;
    }
  }
  return 0;
}

void ExperimentResults::write(const std::string& directory) const {
  nlohmann::json doc;
  doc["experiment"] = experiment_;
  doc["scale"] = scale_;
  doc["passed"] = exit_code() == 0;
  // OMP_THREAD_LIMIT (the single-thread variational experiments) caps every parallel region
  // without lowering omp_get_max_threads().
  doc["threads"] = std::min(omp_get_max_threads(), omp_get_thread_limit());
  doc["checks"] = nlohmann::json::array();
  for (const CheckResult& c : checks_) {
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
    entry["tolerance"] = c.reference.tolerance;
    entry["source"] = c.reference.source;
    entry["tolerance_reason"] = c.reference.reason;
    entry["note"] = c.note;
    entry["passed"] = c.passed;
    if (!c.reference.known_difference.empty())
      entry["known_difference"] = c.reference.known_difference;
    doc["checks"].push_back(entry);
  }
  doc["measurements"] = nlohmann::json::array();
  for (const Measurement& m : measurements_)
    doc["measurements"].push_back(
        {{"name", m.name}, {"value", m.value}, {"unit", m.unit}, {"note", m.note}});
  doc["files"] = nlohmann::json::array();
  for (const auto& [path, kind] : files_) doc["files"].push_back({{"path", path}, {"kind", kind}});
  std::filesystem::create_directories(directory);
  std::ofstream out(directory + "/results.json");
  out << doc.dump(2) << "\n";
  if (!out) throw InputError(directory + "/results.json: cannot write");

  std::printf("%s (%s scale)\n", experiment_.c_str(), scale_.c_str());
  std::printf("  %-44s %-10s %14s %14s %10s  %s\n", "check", "compare", "published", "measured",
              "tolerance", "result");
  for (const CheckResult& c : checks_) {
    char published[64];
    if (c.reference.comparison == Comparison::range)
      std::snprintf(published, sizeof published, "[%.3g, %.3g]", c.reference.published,
                    c.reference.published_high);
    else if (c.reference.comparison == Comparison::holds)
      std::snprintf(published, sizeof published, "true");
    else
      std::snprintf(published, sizeof published, "%.6g", c.reference.published);
    std::printf("  %-44s %-10s %14s %14.6g %10.2g  %s\n", c.reference.name.c_str(),
                to_string(c.reference.comparison).c_str(), published, c.measured,
                c.reference.tolerance, c.passed ? "pass" : "FAIL");
  }
  for (const Measurement& m : measurements_)
    std::printf("  measured %-40s %14.6g %s\n", m.name.c_str(), m.value, m.unit.c_str());
}

}  // namespace moreau
