#include "scene_schema.hpp"

#include <map>
#include <set>
#include <type_traits>
#include <utility>

#include "moreau/nlgs/nlgs_solver.hpp"
#include "moreau/solver/solver_registry.hpp"
#include "scene_flow.hpp"

namespace moreau::scene_io {
namespace {

// An enumeration reached through `member` (a nested member, or one of several structs),
// spelled as one of `names`.
template <class Options, class Enum, class Member>
OptionAccess<std::string, Options> enum_access(std::vector<std::pair<std::string, Enum>> names,
                                               Member member) {
  return {[names, member](const Options& o) {
            for (const auto& entry : names)
              if (entry.second == member(o)) return entry.first;
            return std::string();
          },
          [names, member](Options& o, std::string word) {
            for (const auto& entry : names)
              if (entry.first == word) member(o) = entry.second;
          }};
}

template <class Enum>
std::vector<std::string> words(const std::vector<std::pair<std::string, Enum>>& names) {
  std::vector<std::string> out;
  for (const auto& entry : names) out.push_back(entry.first);
  return out;
}

// A number reached through `member` (a reference into Options).
}  // namespace

const OptionTable<Scene>& top_level_table() {
  static const OptionTable<Scene> table = [] {
    OptionTable<Scene> out{
        custom_option<Scene>("description", "string", ""),
        custom_option<Scene>("dimension", "2 or 3", "3"),
        custom_option<Scene>("gravity", "vector", "`[0, -9.81, 0]`", "m/s^2"),
        accessed_option<Scene, double>("time_step",
                                       {[](const Scene& s) { return s.step.time_step; },
                                        [](Scene& s, double x) { s.step.time_step = x; }},
                                       Bounds::above(0.0), "s"),
        custom_option<Scene>("steps", "integer >= 0", "*required, or `duration`*"),
        custom_option<Scene>("duration", "number >= 0", "", "s"),
        custom_option<Scene>("method", "`\"cd\"` or `\"dem\"`", ""),
        custom_option<Scene>("integrator", "object", ""),
        custom_option<Scene>("collision", "object", ""),
        custom_option<Scene>("solver", "object", ""),
        custom_option<Scene>("materials", "array", ""),
        custom_option<Scene>("friction", "object", ""),
        custom_option<Scene>("bodies", "array", "`[]`"),
        custom_option<Scene>("generators", "array", "`[]`"),
        custom_option<Scene>("output", "object", ""),
        custom_option<Scene>("channel_flow", "object", ""),
    };
    // The sections of the schemes that keep their own (the DEM's "dem").
    for (const SchemeRegistration& scheme : registered_schemes())
      if (scheme.section != "integrator")
        out.push_back(custom_option<Scene>(scheme.section, "object", ""));
    return out;
  }();
  return table;
}

namespace {

// Rows of keys that several registered structs declare: the first to declare a key gives its
// row; a key whose type or default differs between them gives each with the names that take it
// ("0.5 (theta); 1 (variational_theta)").
class MergedRows {
 public:
  // merge_defaults false: the first struct's default stands (the solvers' max_iterations,
  // whose defaults differ by method and are documented per solver).
  explicit MergedRows(bool merge_defaults = true) : merge_defaults_(merge_defaults) {}
  template <class Options>
  void add(const std::string& owner, const OptionTable<Options>& table) {
    for (const OptionField<Options>& field : table) {
      if (seen_.emplace(field.key, rows_.size()).second)
        rows_.push_back(
            {field.key, option_type_text(field), field.unit, option_default_text(field)});
      append(types_[field.key][option_type_text(field)], owner);
      append(defaults_[field.key][option_default_text(field)], owner);
    }
  }
  void add_row(SceneOption row) {
    seen_.emplace(row.key, rows_.size());
    rows_.push_back(std::move(row));
  }
  std::vector<SceneOption> rows() const {
    std::vector<SceneOption> out = rows_;
    for (const auto& [key, by_type] : types_)
      if (by_type.size() > 1) out[seen_.at(key)].type = joined(by_type);
    if (merge_defaults_)
      for (const auto& [key, by_default] : defaults_)
        if (by_default.size() > 1) out[seen_.at(key)].default_value = joined(by_default);
    return out;
  }

 private:
  static void append(std::string& names, const std::string& name) {
    names += (names.empty() ? "" : ", ") + name;
  }
  static std::string joined(const std::map<std::string, std::string>& by_text) {
    std::string out;
    for (const auto& [text, names] : by_text)
      out += (out.empty() ? "" : "; ") + text + " (" + names + ")";
    return out;
  }
  bool merge_defaults_;
  std::vector<SceneOption> rows_;
  std::map<std::string, std::size_t> seen_;
  std::map<std::string, std::map<std::string, std::string>> types_, defaults_;
};

}  // namespace

std::vector<SceneOption> integrator_section() {
  const std::vector<std::string> names = scheme_names();
  std::string choices;
  for (std::size_t i = 0; i < names.size(); ++i)
    choices += (i == 0 ? "" : (i + 1 == names.size() ? " or " : ", ")) + ("`\"" + names[i] + "\"`");
  MergedRows rows;
  rows.add_row({"scheme", choices, "", "`\"" + Scene().scheme + "\"`"});
  for (const auto& field : StepSettings::fields())
    rows.add_row({field.key, option_type_text(field), field.unit, option_default_text(field)});
  for (const SchemeRegistration& scheme : registered_schemes()) {
    if (scheme.section != "integrator") continue;
    rows.add(scheme.name, scheme.options);
    if (!scheme.nested_key.empty()) rows.add_row({scheme.nested_key, "object", "", "disabled"});
  }
  return rows.rows();
}

const OptionTable<CollisionOptions>& collision_table() {
  static const OptionTable<CollisionOptions> table{
      number_option("margin", &CollisionOptions::margin, Bounds::at_least(0.0), "m"),
      number_option("cell_size", &CollisionOptions::cell_size, Bounds::at_least(0.0), "m"),
  };
  return table;
}

namespace {

// solver.order: a word or a permutation of the contacts.
void read_contact_order(const Node& node, ContactOrderOptions& options) {
  if (node.value().is_array()) {
    const std::vector<Node> entries = node.elements();
    const long n = static_cast<long>(entries.size());
    std::vector<bool> used(entries.size(), false);
    for (const Node& entry : entries) {
      const long i = entry.integer(0, n - 1);
      if (used[i])
        entry.fail("contact " + std::to_string(i) +
                   " appears twice; a custom order must be a permutation of 0 .. " +
                   std::to_string(n - 1));
      used[i] = true;
      options.custom_order.push_back(static_cast<int>(i));
    }
    options.order = ContactOrder::custom;
    return;
  }
  if (!node.value().is_string())
    node.fail_type("\"natural\", \"reverse\", \"random\" or an array (a permutation)");
  const std::string text = node.choice({"natural", "reverse", "random"});
  options.order = text == "natural"   ? ContactOrder::natural
                  : text == "reverse" ? ContactOrder::reverse
                                      : ContactOrder::random;
}

// A key of the solver section that the chosen solver's options struct does not hold is an
// error naming it: it would be silently ignored.
void reject_unread_keys(const Node& node, const SolverRegistration& solver) {
  const std::vector<std::string> reads = option_keys(solver.options);
  for (const SceneOption& key : solver_section()) {
    if (key.key == "name" || key.key == "on_failure") continue;
    const std::optional<Node> x = node.find(key.key);
    if (x && std::find(reads.begin(), reads.end(), key.key) == reads.end())
      x->fail("not read by solver \"" + solver.name + "\"; its keys are: " + join(reads));
  }
}

}  // namespace

const OptionTable<Scene>& solver_policy_table() {
  static const OptionTable<Scene> table{accessed_option<Scene, std::string>(
      "on_failure",
      enum_access<Scene>(
          std::vector<std::pair<std::string, SolverFailurePolicy>>{
              {"warn", SolverFailurePolicy::warn}, {"stop", SolverFailurePolicy::stop}},
          [](auto& s) -> auto& { return s.on_solver_failure; }),
      {}, "", {"warn", "stop"})};
  return table;
}

void read_solver_options(const Node& node, const std::string& solver, AnySolverOptions& options) {
  const SolverRegistration& registration = find_solver(solver);
  reject_unread_keys(node, registration);
  read_fields(node, registration.options, options);
  // A sub-object with the solver's own section (solver.nlgs: Dumont's options of the NLGS).
  if (!registration.nested_key.empty())
    if (const std::optional<Node> x = node.find(registration.nested_key)) {
      read_options(*x, registration.nested_options, options);
      check_options(*x, registration.nested_options, options);
    }
  if (ContactOrderOptions* order = options.contact_order())
    if (const std::optional<Node> x = node.find("order")) read_contact_order(*x, *order);
  check_options(node, registration.options, options, " for solver \"" + solver + "\"");
}

// The solver section's rows: name, then every registered solver's keys (merged: a key whose
// type differs between solvers gives each type with the solvers that take it), then on_failure.
const std::vector<SceneOption>& solver_section() {
  static const std::vector<SceneOption> rows = [] {
    MergedRows merged(false);
    merged.add_row({"name", "string", "", "`\"pgs\"`"});
    for (const SolverRegistration& solver : registered_solvers())
      merged.add(solver.name, solver.options);
    std::vector<SceneOption> out = merged.rows();
    for (const auto& field : solver_policy_table())
      out.push_back({field.key, option_type_text(field), field.unit, option_default_text(field)});
    return out;
  }();
  return rows;
}

const OptionTable<OutputOptions>& output_table() {
  using O = OutputOptions;
  static const OptionTable<O> table{
      [] {
        OptionField<O> field = accessed_option<O, std::string>(
            "directory", {[](const O& o) { return o.directory; },
                          [](O& o, std::string x) { o.directory = std::move(x); }});
        field.default_text = "`out/<scene file name without extension>`";
        return field;
      }(),
      integer_option("every", &O::every, Bounds::at_least(1)),
      bool_option("csv", &O::csv),
      bool_option("vtk", &O::vtk),
      bool_option("progress", &O::progress),
      integer_option("checkpoint_every", &O::checkpoint_every, Bounds::at_least(0)),
  };
  return table;
}

namespace {

template <class Options>
SceneSection section(std::string path, const OptionTable<Options>& table) {
  SceneSection out{std::move(path), {}};
  for (const OptionField<Options>& field : table)
    out.options.push_back(
        {field.key, option_type_text(field), field.unit, option_default_text(field)});
  return out;
}

}  // namespace

std::vector<SceneSection> scene_sections() {
  std::vector<SceneSection> sections{section("", top_level_table()),
                                     SceneSection{"integrator", integrator_section()}};
  // The schemes' nested sections (integrator.compatible) and own sections (dem).
  for (const SchemeRegistration& scheme : registered_schemes())
    if (!scheme.nested_key.empty())
      sections.push_back(section("integrator." + scheme.nested_key, scheme.nested_options));
  for (const SchemeRegistration& scheme : registered_schemes())
    if (scheme.section != "integrator") sections.push_back(section(scheme.section, scheme.options));
  sections.push_back(section("collision", collision_table()));
  sections.push_back(SceneSection{"solver", solver_section()});
  sections.push_back(section("solver.nlgs", NlgsOptions::nested_fields()));
  sections.push_back(section("output", output_table()));
  sections.push_back(section("channel_flow", channel_flow_table()));
  return sections;
}

}  // namespace moreau::scene_io
