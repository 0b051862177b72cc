#pragma once
// Published values of an experiment, read from reference/<name>/expected.json. Each entry
// carries the value, how it is compared, its tolerance, its source in the paper and the
// reason for the tolerance; beside them the published numbers the experiment reads without
// checking them ("data"). Experiments never hold published values in their code.
#include <map>
#include <string>
#include <vector>

namespace moreau {

enum class Comparison {
  relative,  // |measured - published| <= tolerance * |published|
  absolute,  // |measured - published| <= tolerance
  at_least,  // measured >= published (published is a bound)
  at_most,   // measured <= published
  range,     // published_low <= measured <= published_high
  holds,     // a property that is true or false (measured 1 or 0)
};
std::string to_string(Comparison comparison);

struct ReferenceValue {
  std::string name;
  double published = 0.0;       // value, or bound; low end for `range`
  double published_high = 0.0;  // high end for `range`
  std::string statement;        // the published claim in words (for `holds` and the report)
  Comparison comparison = Comparison::relative;
  double tolerance = 0.0;
  std::string source;               // paper, section, table or figure
  std::string reason;               // why this tolerance
  std::vector<std::string> scales;  // scales the entry applies to; empty = every scale
  // Where this suite is known not to reproduce the published claim, the short analysis of why
  // (FCLIB/Siconos "will fail"), by scale; the key "" stands for every scale. The check still
  // runs and is reported as a known difference instead of a failure. A flag on a check that
  // passes at its scale is stale: the harness reports it and the run fails, so flags cannot
  // outlive what they describe. In expected.json: a string (every scale) or an object keyed
  // by scale.
  std::map<std::string, std::string> known_differences;
  bool applies_to(const std::string& scale) const;
  // The known difference at `scale` ("" when there is none).
  std::string known_difference_at(const std::string& scale) const;
};

// Published numbers an experiment builds its runs or reports from without checking them (the
// sizes of a paper's test problems, the columns of its tables), by name: in expected.json,
// "data": {"<name>": {"source": ..., "columns": [...], "rows": {"<row>": [numbers], ...}}}.
struct PublishedData {
  std::string name;
  std::string source;  // paper, section, table or figure
  std::vector<std::string> columns;
  std::vector<std::string> row_names;
  std::vector<std::vector<double>> rows;  // a number per column
  std::string path;                       // of the expected.json, for the messages
  // The number in row `row`, column `column`; throws InputError naming the file for either
  // absent.
  double at(const std::string& row, const std::string& column) const;
};

class Reference {
 public:
  // Throws InputError naming the file and entry for a missing or malformed field.
  static Reference load(const std::string& directory);
  const ReferenceValue& get(const std::string& name) const;  // throws InputError if absent
  const std::vector<ReferenceValue>& values() const { return values_; }
  const PublishedData& data(const std::string& name) const;  // throws InputError if absent
  const std::string& experiment() const { return experiment_; }

 private:
  std::string experiment_;
  std::string path_;
  std::vector<ReferenceValue> values_;
  std::map<std::string, std::size_t> index_;
  std::map<std::string, PublishedData> data_;
};

}  // namespace moreau
