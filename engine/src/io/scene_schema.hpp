#pragma once
// The option tables of the scene's sections (docs/scene-format.md): each section's keys with
// their type, unit, bounds and default, declared once. The parser reads a section through its
// table (types only), the bounds are checked once afterwards from the same table with the
// JSON path of the key, and scene_test compares the tables with the documentation. Private
// to the engine.
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "moreau/core/option_table.hpp"
#include "moreau/io/scene.hpp"
#include "scene_reader.hpp"

namespace moreau::scene_io {

// "": the top level; its keys are objects, arrays and numbers that the parser reads itself.
const OptionTable<Scene>& top_level_table();
// The integrator section: scheme, the StepSettings keys, then every registered scheme's own keys
// (merged: a key whose type or default differs between schemes gives each with its schemes).
std::vector<SceneOption> integrator_section();
const OptionTable<CollisionOptions>& collision_table();
// The solver section: name, on_failure and every registered solver's keys (each options
// struct's own table; a key the chosen solver's struct lacks is an error).
const std::vector<SceneOption>& solver_section();
const OptionTable<Scene>& solver_policy_table();  // on_failure
// The solver section's keys (not name and on_failure) into `options`, the struct of
// `solver`, bounds checked, naming the solver.
void read_solver_options(const Node& node, const std::string& solver, AnySolverOptions& options);
const OptionTable<OutputOptions>& output_table();

// Every section: its JSON path and its rows (scene_option_keys).
std::vector<SceneSection> scene_sections();

// A number, or one of `words` (the value it stands for); an error names both forms.
inline double read_number_or_word(const Node& node,
                                  const std::vector<std::pair<std::string, double>>& words) {
  if (words.empty() || node.value().is_number()) return node.number();
  if (node.value().is_string())
    for (const auto& [word, value] : words)
      if (node.value().get<std::string>() == word) return value;
  std::string expected = "a number";
  for (const auto& entry : words) expected += " or \"" + entry.first + "\"";
  node.fail_type(expected);
}

// Reads the keys of the object `node` that `table` can read into `target`: the JSON type is
// checked here (number, integer the member can hold, bool, one of the choices), the bounds
// are not (check_options). Custom fields are left to the caller.
template <class Options>
void read_fields(const Node& node, const OptionTable<Options>& table, Options& target) {
  for (const OptionField<Options>& field : table) {
    const std::optional<Node> x = node.find(field.key);
    if (!x) continue;
    std::visit(
        [&](const auto& access) {
          using Access = std::decay_t<decltype(access)>;
          if constexpr (std::is_same_v<Access, OptionAccess<double, Options>>)
            access.set(target, read_number_or_word(*x, field.number_words));
          else if constexpr (std::is_same_v<Access, OptionAccess<long, Options>>)
            access.set(target, x->integer(field.integer_min, field.integer_max));
          else if constexpr (std::is_same_v<Access, OptionAccess<bool, Options>>)
            access.set(target, x->boolean());
          else if constexpr (std::is_same_v<Access, OptionAccess<std::string, Options>>)
            access.set(target,
                       field.choices.empty() ? x->string() : x->choice(field.choices, field.key));
        },
        field.value);
  }
}

// read_fields of an object whose keys must all be the table's.
template <class Options>
void read_options(const Node& node, const OptionTable<Options>& table, Options& target) {
  node.expect_object(option_keys(table));
  read_fields(node, table, target);
}

// The bounds of the table's fields in `target` (check_bounds), an error naming the JSON path
// of the key ("solver.relaxation: 1.5 is outside (0, 1] for solver \"md_gs\"").
template <class Options>
void check_options(const Node& node, const OptionTable<Options>& table, const Options& target,
                   const std::string& context = "") {
  try {
    check_bounds(table, target, context);
  } catch (const OptionError& e) {
    if (const std::optional<Node> x = node.find(e.key())) x->fail(e.problem());
    node.fail(e.what());
  }
}

}  // namespace moreau::scene_io
