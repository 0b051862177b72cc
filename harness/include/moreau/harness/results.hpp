#pragma once
// results.json of an experiment: every reference entry with its published value, measured
// value, tolerance, source and verdict, plus unchecked measurements (timings, counts), the raw
// data and figure files it produced, and the provenance of the run (commit, date, machine,
// threads, wall time, command).
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "moreau/harness/reference.hpp"

namespace moreau {

// The four verdicts a check can end in.
enum class Verdict {
  pass,              // the measured value meets the published one within its tolerance
  fail,              // it does not, and no known difference is flagged at this scale
  known_difference,  // it does not, and the reference explains why (flagged at this scale)
  not_evaluated,     // not at this scale, its inputs were not run, or a bound cannot decide
};
std::string to_string(Verdict verdict);  // "pass", "fail", "known difference", "not evaluated"

// What a measured number is: the value itself, or a bound of it (a run stopped by its budget
// knows only that the true value lies beyond what it measured).
enum class Measured { exact, lower_bound, upper_bound };
std::string to_string(Measured measured);

struct CheckResult {
  ReferenceValue reference;
  double measured = std::numeric_limits<double>::quiet_NaN();
  Measured measured_is = Measured::exact;
  std::string note;  // how the measured value was obtained, or why it was not evaluated
  Verdict verdict = Verdict::not_evaluated;
  // A known difference is flagged at this scale but the check passes: the flag is stale.
  bool stale_known_difference = false;
};

// The verdict of `measured` against `reference` at `scale`. A bound decides only where every
// value beyond it gives the same answer (a lower bound above an at_least threshold passes);
// otherwise the check is not evaluated. A non-finite value is a failed measurement.
CheckResult judge(const ReferenceValue& reference, const std::string& scale, double measured,
                  Measured measured_is = Measured::exact);

struct Measurement {
  std::string name;
  double value = 0.0;
  std::string unit;
  std::string note;
};

// An experiment's own command-line options, declared beside the common ones: each a name
// ("--family"), a help text and the variable its typed value goes to. ExperimentArguments::parse
// reads them with the common ones before anything runs (a malformed value is an InputError
// naming the option), and --help lists them all.
class ExperimentOptions {
 public:
  // --name alone sets `value` to true.
  ExperimentOptions& flag(const std::string& name, bool& value, const std::string& help);
  // --name VALUE, converted to the type of `value`: text (std::string), a whole number (int,
  // long) or a finite number (double); a std::optional of one is left empty unless given.
  template <class T>
  ExperimentOptions& option(const std::string& name, T& value, const std::string& help);
  // Of the option declared last: the texts its value may be (empty: any of its type).
  ExperimentOptions& choices(std::vector<std::string> allowed);
  // Of the option declared last: the name of its value in --help ("DIR", "PREFIX").
  ExperimentOptions& named(std::string value_name);
  // Of the option declared last (a number): the least and greatest values it may be.
  ExperimentOptions& within(double low, double high = std::numeric_limits<double>::infinity());

  struct Declared {
    std::string name;
    std::string help;
    std::string value_name;  // "N", "X", "TEXT", or the choices as a|b|c; empty for a flag
    bool* flag = nullptr;
    std::vector<std::string> choices;
    double low = -std::numeric_limits<double>::infinity();
    double high = std::numeric_limits<double>::infinity();
    bool whole = false, number = false;
    // Stores the value given as text, which has passed the checks above.
    std::function<void(const std::string&)> assign;
  };
  const std::vector<Declared>& declared() const { return declared_; }

 private:
  // The text of a value that has passed the checks, as the type of the variable.
  static void convert(const std::string& text, std::string& value) { value = text; }
  static void convert(const std::string& text, long& value) { value = std::stol(text); }
  static void convert(const std::string& text, int& value) { value = std::stoi(text); }
  static void convert(const std::string& text, double& value) { value = std::stod(text); }
  template <class T>
  static void convert(const std::string& text, std::optional<T>& value) {
    convert(text, value.emplace());
  }
  static void describe(Declared& declared, const std::string*);
  static void describe(Declared& declared, const long*);
  static void describe(Declared& declared, const int*);
  static void describe(Declared& declared, const double*);
  template <class T>
  static void describe(Declared& declared, const std::optional<T>*) {
    describe(declared, static_cast<const T*>(nullptr));
  }
  std::vector<Declared> declared_;
};

template <class T>
ExperimentOptions& ExperimentOptions::option(const std::string& name, T& value,
                                             const std::string& help) {
  Declared declared;
  declared.name = name;
  declared.help = help;
  describe(declared, &value);
  declared.assign = [&value](const std::string& text) { convert(text, value); };
  declared_.push_back(std::move(declared));
  return *this;
}

// Command-line arguments every experiment takes: --scale quick|full, --reference DIR,
// --output DIR, --threads N, --help; and the experiment's own (ExperimentOptions). Parsing also
// starts the run's wall clock and keeps its command line for the provenance of results.json.
struct ExperimentArguments {
  std::string scale = "quick";
  std::string reference_directory;
  std::string output_directory;
  int threads = 0;  // 0 = OpenMP default
  bool full() const { return scale == "full"; }
  // Throws InputError for unknown, malformed or missing arguments, naming the option; --help
  // prints every option with its help text and exits.
  static ExperimentArguments parse(int argc, char** argv, const std::string& experiment,
                                   const ExperimentOptions& own = {});
};

class ExperimentResults {
 public:
  ExperimentResults(std::string experiment, std::string scale, Reference reference);

  // Compares `measured` with the reference entry `name` and records the verdict.
  const CheckResult& check(const std::string& name, double measured, const std::string& note = "");
  const CheckResult& check(const std::string& name, bool holds, const std::string& note = "");
  // A measured bound of the quantity (e.g. a ratio whose run stopped at its budget).
  const CheckResult& check_bound(const std::string& name, double bound, Measured measured_is,
                                 const std::string& note);
  // The entry `name` applies at this scale but was not evaluated by this run; `reason` says why
  // (its inputs were not run, the configuration that decides it was not asked for).
  const CheckResult& not_evaluated(const std::string& name, const std::string& reason);
  void measure(const std::string& name, double value, const std::string& unit,
               const std::string& note = "");
  void add_file(const std::string& relative_path, const std::string& kind);  // "raw", "figure"

  // No check failed and no known-difference flag is stale.
  bool all_passed() const;
  const std::vector<CheckResult>& checks() const { return checks_; }
  const Reference& reference() const { return reference_; }
  // Every reference entry with its verdict at this scale, in the reference's order: the
  // recorded checks, entries of other scales and entries never checked as not evaluated.
  std::vector<CheckResult> verdicts() const;
  // Writes results.json into `directory` and prints a table to stdout.
  void write(const std::string& directory) const;
  // 0 when no check failed, no known-difference flag is stale and every reference entry that
  // applies at this scale was checked or declared not evaluated; else 1.
  int exit_code() const;

 private:
  const CheckResult& record(CheckResult result);
  std::string experiment_;
  std::string scale_;
  Reference reference_;
  std::vector<CheckResult> checks_;
  std::vector<Measurement> measurements_;
  std::vector<std::pair<std::string, std::string>> files_;
};

bool passes(const ReferenceValue& reference, double measured);

}  // namespace moreau
