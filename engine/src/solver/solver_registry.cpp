#include "moreau/solver/solver_registry.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace moreau {
namespace {

// Filled at static initialization by the registrars, so reached through a function (its order
// across translation units is unspecified) and kept sorted by name.
std::vector<SolverRegistration>& registry() {
  static std::vector<SolverRegistration> solvers;
  return solvers;
}

std::string known_solvers() {
  std::string known;
  for (const SolverRegistration& solver : registry())
    known += (known.empty() ? "" : ", ") + solver.name;
  return known;
}

}  // namespace

bool register_solver(SolverRegistration registration) {
  std::vector<SolverRegistration>& solvers = registry();
  const auto at = std::lower_bound(
      solvers.begin(), solvers.end(), registration.name,
      [](const SolverRegistration& s, const std::string& name) { return s.name < name; });
  if (at != solvers.end() && at->name == registration.name)
    throw InputError("solver '" + registration.name + "' is registered twice");
  solvers.insert(at, std::move(registration));
  return true;
}

const std::vector<SolverRegistration>& registered_solvers() { return registry(); }

std::vector<std::string> solver_names() {
  std::vector<std::string> names;
  for (const SolverRegistration& solver : registry()) names.push_back(solver.name);
  return names;
}

const SolverRegistration& find_solver(const std::string& name) {
  for (const SolverRegistration& solver : registry())
    if (solver.name == name) return solver;
  throw InputError("unknown solver '" + name + "'; known solvers: " + known_solvers());
}

AnySolverOptions default_solver_options(const std::string& name) {
  return find_solver(name).defaults;
}

AnySolverOptions default_solver_options(const std::string& name, const SolverOptions& common) {
  AnySolverOptions options = default_solver_options(name);
  options.common() = common;
  return options;
}

std::unique_ptr<ContactSolver> make_solver(const std::string& name,
                                           const AnySolverOptions& options) {
  const SolverRegistration& solver = find_solver(name);
  if (options.type() != solver.defaults.type())
    throw InputError("solver '" + name + "' takes " + solver.defaults.type_name() + ", got " +
                     options.type_name());
  return solver.make(options);
}

namespace {

const OptionField<AnySolverOptions>& solver_field(const std::string& solver,
                                                  const std::string& key) {
  const SolverRegistration& registration = find_solver(solver);
  for (const AnySolverOptionTable* table : {&registration.options, &registration.nested_options})
    for (const OptionField<AnySolverOptions>& field : *table)
      if (field.key == key && field.value.index() != 0) return field;
  std::string keys;
  for (const OptionField<AnySolverOptions>& field : registration.options)
    if (field.value.index() != 0) keys += (keys.empty() ? "" : ", ") + field.key;
  for (const OptionField<AnySolverOptions>& field : registration.nested_options)
    keys += (keys.empty() ? "" : ", ") + field.key;
  throw OptionError(key, "not an option of solver \"" + solver + "\"; its options: " + keys);
}

}  // namespace

bool has_solver_option(const std::string& solver, const std::string& key) {
  try {
    solver_field(solver, key);
    return true;
  } catch (const OptionError&) {
    return false;
  }
}

void set_solver_option(const std::string& solver, AnySolverOptions& options, const std::string& key,
                       double value) {
  const OptionField<AnySolverOptions>& field = solver_field(solver, key);
  if (!field.bounds.contains(value) && field.bounds.bounded())
    throw OptionError(key, shortest_text(value) + " is outside " + field.bounds.interval());
  if (const auto* number = std::get_if<OptionAccess<double, AnySolverOptions>>(&field.value)) {
    if (!std::isfinite(value) && !field.bounds.bounded())
      throw OptionError(key, shortest_text(value) + " is not a finite number");
    number->set(options, value);
  } else if (const auto* integer =
                 std::get_if<OptionAccess<long, AnySolverOptions>>(&field.value)) {
    if (!(value == std::floor(value) && value >= static_cast<double>(field.integer_min) &&
          value <= static_cast<double>(field.integer_max)))
      throw OptionError(key, shortest_text(value) + " is not an integer it can hold");
    integer->set(options, static_cast<long>(value));
  } else {
    throw OptionError(key, "takes " + option_type_text(field) + ", not a number");
  }
}

void set_solver_option(const std::string& solver, AnySolverOptions& options, const std::string& key,
                       bool value) {
  const OptionField<AnySolverOptions>& field = solver_field(solver, key);
  const auto* flag = std::get_if<OptionAccess<bool, AnySolverOptions>>(&field.value);
  if (!flag) throw OptionError(key, "takes " + option_type_text(field) + ", not a bool");
  flag->set(options, value);
}

void set_solver_option(const std::string& solver, AnySolverOptions& options, const std::string& key,
                       const std::string& word) {
  const OptionField<AnySolverOptions>& field = solver_field(solver, key);
  const auto* text = std::get_if<OptionAccess<std::string, AnySolverOptions>>(&field.value);
  if (!text) throw OptionError(key, "takes " + option_type_text(field) + ", not a word");
  if (!field.choices.empty() &&
      std::find(field.choices.begin(), field.choices.end(), word) == field.choices.end())
    throw OptionError(key, "\"" + word + "\" is not one of " + option_type_text(field));
  text->set(options, word);
}

std::unique_ptr<ContactSolver> make_solver(const std::string& name) {
  return make_solver(name, default_solver_options(name));
}

}  // namespace moreau
