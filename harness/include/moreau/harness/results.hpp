#pragma once
// results.json of an experiment: every checked quantity with its published value, measured
// value, tolerance, source and verdict, plus unchecked measurements (timings, counts) and
// the raw data and figure files it produced.
#include <string>
#include <vector>

#include "moreau/harness/reference.hpp"

namespace moreau {

struct CheckResult {
  ReferenceValue reference;
  double measured = 0.0;
  std::string note;  // how the measured value was obtained
  bool passed = false;
};

struct Measurement {
  std::string name;
  double value = 0.0;
  std::string unit;
  std::string note;
};

// Command-line arguments every experiment takes: --scale quick|full, --reference DIR,
// --output DIR, --threads N.
struct ExperimentArguments {
  std::string scale = "quick";
  std::string reference_directory;
  std::string output_directory;
  int threads = 0;  // 0 = OpenMP default
  bool full() const { return scale == "full"; }
  // Throws InputError for unknown or missing arguments.
  static ExperimentArguments parse(int argc, char** argv, const std::string& experiment);
};

class ExperimentResults {
 public:
  ExperimentResults(std::string experiment, std::string scale, Reference reference);

  // Compares `measured` with the reference entry `name` and records the verdict.
  const CheckResult& check(const std::string& name, double measured, const std::string& note = "");
  const CheckResult& check(const std::string& name, bool holds, const std::string& note = "");
  void measure(const std::string& name, double value, const std::string& unit,
               const std::string& note = "");
  void add_file(const std::string& relative_path, const std::string& kind);  // "raw", "figure"

  bool all_passed() const;
  const std::vector<CheckResult>& checks() const { return checks_; }
  // Writes results.json into `directory` and prints a table to stdout.
  void write(const std::string& directory) const;
  // 0 when every check passed (known differences aside) and every reference entry was
  // checked, else 1.
  int exit_code() const;

 private:
  std::string experiment_;
  std::string scale_;
  Reference reference_;
  std::vector<CheckResult> checks_;
  std::vector<Measurement> measurements_;
  std::vector<std::pair<std::string, std::string>> files_;
};

bool passes(const ReferenceValue& reference, double measured);

}  // namespace moreau
