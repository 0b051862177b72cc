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
template <class Options, class Member>
OptionAccess<double, Options> number_access(Member member) {
  return {[member](const Options& o) { return member(o); },
          [member](Options& o, double x) { member(o) = x; }};
}

template <class Options, class Member>
OptionAccess<long, Options> integer_access(Member member) {
  return {[member](const Options& o) { return static_cast<long>(member(o)); },
          [member](Options& o, long x) { member(o) = static_cast<int>(x); }};
}

const std::vector<std::pair<std::string, FrictionModel>> kFrictionModels{
    {"coulomb", FrictionModel::coulomb}, {"convex_relaxation", FrictionModel::convex_relaxation}};
const std::vector<std::pair<std::string, ImpactLaw>> kImpactLaws{
    {"plastic", ImpactLaw::plastic}, {"restitution", ImpactLaw::restitution}};
const std::vector<std::pair<std::string, TrussMethod>> kTrussMethods{
    {"augmented_lagrangian", TrussMethod::augmented_lagrangian},
    {"interior_point", TrussMethod::interior_point}};

OptionField<Scene> scheme_field() {
  return accessed_option<Scene, std::string>(
      "scheme",
      {[](const Scene& s) { return to_string(s.scheme); },
       [](Scene& s, std::string name) {
         const std::vector<std::string> names = scheme_names();
         s.scheme =
             static_cast<Scheme>(std::find(names.begin(), names.end(), name) - names.begin());
       }},
      {}, "", scheme_names());
}

// integrator.frictional and friction_model set every contact-dynamics scheme that reads them.
OptionField<Scene> frictional_field() {
  return accessed_option<Scene, bool>(
      "frictional", {[](const Scene& s) { return s.semi_implicit_euler.frictional; },
                     [](Scene& s, bool x) {
                       s.semi_implicit_euler.frictional = s.theta.frictional = x;
                       s.impulse_velocity.frictional = s.shake.frictional = x;
                       s.variational.contact.frictional = x;
                     }});
}

OptionField<Scene> friction_model_field() {
  OptionField<Scene> field = accessed_option<Scene, std::string>(
      "friction_model",
      enum_access<Scene>(
          kFrictionModels, [](auto& s) -> auto& { return s.semi_implicit_euler.friction_model; }),
      {}, "", words(kFrictionModels));
  const auto set = std::get<OptionAccess<std::string, Scene>>(field.value).set;
  std::get<OptionAccess<std::string, Scene>>(field.value).set = [set](Scene& s, std::string word) {
    set(s, word);
    s.impulse_velocity.friction_model = s.shake.friction_model =
        s.semi_implicit_euler.friction_model;
  };
  field.default_text = "`\"coulomb\"`; `\"convex_relaxation\"` for shake and rattle";
  return field;
}

// Dumont Sec. 2.1: theta in [1/2, 1]; the Krabbenhoft/NURBS chapter eq. 4.7: the same range,
// e = (1 - theta) / theta in [0, 1].
OptionField<Scene> theta_field() {
  OptionField<Scene> field = accessed_option<Scene, double>(
      "theta",
      {[](const Scene& s) { return s.theta.theta; },
       [](Scene& s, double x) { s.theta.theta = s.variational.theta = x; }},
      Bounds::closed(0.5, 1.0));
  field.default_text = "0.5 (theta), 1 (variational_theta)";
  return field;
}

}  // namespace

const OptionTable<Scene>& top_level_table() {
  static const OptionTable<Scene> table{
      custom_option<Scene>("description", "string", ""),
      custom_option<Scene>("dimension", "2 or 3", "3"),
      custom_option<Scene>("gravity", "vector", "`[0, -9.81, 0]`", "m/s^2"),
      accessed_option<Scene, double>("time_step",
                                     {[](const Scene& s) { return s.time_step(); },
                                      [](Scene& s, double x) {
                                        s.semi_implicit_euler.time_step = s.theta.time_step = x;
                                        s.impulse_velocity.time_step = s.shake.time_step =
                                            s.variational.time_step = x;
                                      }},
                                     Bounds::above(0.0), "s"),
      custom_option<Scene>("steps", "integer >= 0", "*required, or `duration`*"),
      custom_option<Scene>("duration", "number >= 0", "", "s"),
      custom_option<Scene>("method", "`\"cd\"` or `\"dem\"`", ""),
      custom_option<Scene>("integrator", "object", ""),
      custom_option<Scene>("dem", "object", ""),
      custom_option<Scene>("collision", "object", ""),
      custom_option<Scene>("solver", "object", ""),
      custom_option<Scene>("materials", "array", ""),
      custom_option<Scene>("friction", "object", ""),
      custom_option<Scene>("bodies", "array", "`[]`"),
      custom_option<Scene>("generators", "array", "`[]`"),
      custom_option<Scene>("output", "object", ""),
      custom_option<Scene>("channel_flow", "object", ""),
  };
  return table;
}

const OptionTable<Scene>& integrator_table() {
  static const OptionTable<Scene> table{
      scheme_field(),
      frictional_field(),
      friction_model_field(),
      accessed_option<Scene, std::string>(
          "impact_law",
          enum_access<Scene>(
              kImpactLaws, [](auto& s) -> auto& { return s.semi_implicit_euler.impact_law; }),
          {}, "", words(kImpactLaws)),
      custom_option<Scene>("compatible", "object", "disabled"),
      theta_field(),
      custom_option<Scene>("k_n", "number > 0 or `\"inf\"`", "`\"inf\"`",
                           "N/m (per unit thickness)"),
      custom_option<Scene>("k_t", "number > 0 or `\"inf\"`", "`\"inf\"`",
                           "N/m (per unit thickness)"),
      // e_t of Dumont eq. 20.
      accessed_option<Scene, double>(
          "tangential_restitution",
          number_access<Scene>([](auto& s) -> auto& { return s.theta.tangential_restitution; }),
          Bounds::closed(0.0, 1.0)),
      // Preclik et al. Sec. 3.1: epsilon in [0, 1].
      accessed_option<Scene, double>("error_reduction", number_access<Scene>([](auto& s) -> auto& {
                                       return s.impulse_velocity.error_reduction;
                                     }),
                                     Bounds::closed(0.0, 1.0)),
      // Kleinert et al. eq. 21: the linearized end-of-step gap below which RATTLE's velocity CCP
      // holds a contact.
      accessed_option<Scene, double>(
          "closed_gap", number_access<Scene>([](auto& s) -> auto& { return s.shake.closed_gap; }),
          Bounds::at_least(0.0), "m"),
      // Kleinert et al. start each CCP from zero; this starts it from the previous step's.
      accessed_option<Scene, bool>("warm_start",
                                   {[](const Scene& s) { return s.shake.warm_start; },
                                    [](Scene& s, bool x) { s.shake.warm_start = x; }}),
  };
  return table;
}

const OptionTable<CompatibleOptions>& compatible_table() {
  using O = CompatibleOptions;
  // The truss solver's effort: its iterations are bounded by the max_* keys, and a solve that
  // reaches a bound is reported as not converged (summary.json, progress line, warnings).
  static const OptionTable<O> table{
      bool_option("enabled", &O::enabled),
      choice_option("law", &O::law,
                    {{"hookean", ContactLaw::hookean}, {"hertzian", ContactLaw::hertzian}}),
      accessed_option<O, double>("equilibrium_tolerance", number_access<O>([](auto& o) -> auto& {
                                   return o.truss.equilibrium_tolerance;
                                 }),
                                 Bounds::above(0.0)),
      accessed_option<O, double>("optimality_tolerance", number_access<O>([](auto& o) -> auto& {
                                   return o.truss.optimality_tolerance;
                                 }),
                                 Bounds::above(0.0)),
      accessed_option<O, std::string>(
          "method",
          enum_access<O>(
              kTrussMethods, [](auto& o) -> auto& { return o.truss.method; }),
          {}, "", words(kTrussMethods)),
      accessed_option<O, long>("max_outer_iterations", integer_access<O>([](auto& o) -> auto& {
                                 return o.truss.max_outer_iterations;
                               }),
                               Bounds::at_least(1)),
      accessed_option<O, long>("max_inner_iterations", integer_access<O>([](auto& o) -> auto& {
                                 return o.truss.max_inner_iterations;
                               }),
                               Bounds::at_least(1)),
      accessed_option<O, long>(
          "max_interior_point_iterations",
          integer_access<O>([](auto& o) -> auto& { return o.truss.max_interior_point_iterations; }),
          Bounds::at_least(1)),
  };
  return table;
}

const OptionTable<Scene>& dem_table() {
  static const OptionTable<Scene> table{
      accessed_option<Scene, std::string>(
          "law",
          enum_access<Scene>(
              std::vector<std::pair<std::string, NormalLaw>>{{"hookean", NormalLaw::hookean},
                                                             {"hertzian", NormalLaw::hertzian}},
              [](auto& s) -> auto& { return s.dem.law.law; }),
          {}, "", {"hookean", "hertzian"}),
      accessed_option<Scene, double>("damping_ratio", number_access<Scene>([](auto& s) -> auto& {
                                       return s.dem.law.damping_ratio;
                                     }),
                                     Bounds::at_least(0.0)),
      accessed_option<Scene, bool>("tangential",
                                   {[](const Scene& s) { return s.dem.law.tangential; },
                                    [](Scene& s, bool x) { s.dem.law.tangential = x; }}),
      [] {
        OptionField<Scene> field = accessed_option<Scene, double>(
            "tangential_stiffness_ratio", number_access<Scene>([](auto& s) -> auto& {
              return s.dem.law.tangential_stiffness_ratio;
            }),
            Bounds::at_least(0.0));
        field.default_text = "2/7";
        return field;
      }(),
      accessed_option<Scene, double>(
          "tangential_damping_ratio",
          number_access<Scene>([](auto& s) -> auto& { return s.dem.law.tangential_damping_ratio; }),
          Bounds::at_least(0.0)),
      custom_option<Scene>("time_step", "number > 0 or `\"auto\"`", "`\"auto\"`", "s"),
      accessed_option<Scene, double>(
          "skin", number_access<Scene>([](auto& s) -> auto& { return s.dem.skin; }),
          Bounds::at_least(0.0), "m"),
      [] {
        OptionField<Scene> field = accessed_option<Scene, double>(
            "duration",
            {[](const Scene& s) { return s.dem_duration.value_or(0.0); },
             [](Scene& s, double x) { s.dem_duration = x; }},
            Bounds::at_least(0.0), "s");
        field.default_text = "steps x time_step";
        return field;
      }(),
  };
  return table;
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

// The solver section's rows: name, then every registered solver's keys (the first solver to
// declare a key gives its row; a key whose type differs between solvers gives each type with
// the solvers that take it: "number in (0, 1] (md_blend, md_gs); number in (0, 2) (pgs)"),
// then on_failure.
const std::vector<SceneOption>& solver_section() {
  static const std::vector<SceneOption> rows = [] {
    std::vector<SceneOption> out{{"name", "string", "", "`\"pgs\"`"}};
    std::map<std::string, std::size_t> seen{{"name", 0}};
    std::map<std::string, std::map<std::string, std::string>> types;  // key: type -> solvers
    for (const SolverRegistration& solver : registered_solvers())
      for (const OptionField<AnySolverOptions>& field : solver.options) {
        std::string& solvers = types[field.key][option_type_text(field)];
        solvers += (solvers.empty() ? "" : ", ") + solver.name;
        if (seen.emplace(field.key, out.size()).second)
          out.push_back(
              {field.key, option_type_text(field), field.unit, option_default_text(field)});
      }
    for (const auto& [key, by_type] : types) {
      if (by_type.size() < 2) continue;
      std::string joined;
      for (const auto& [type, solvers] : by_type)
        joined += (joined.empty() ? "" : "; ") + type + " (" + solvers + ")";
      out[seen.at(key)].type = joined;
    }
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
  return {section("", top_level_table()),
          section("integrator", integrator_table()),
          section("integrator.compatible", compatible_table()),
          section("dem", dem_table()),
          section("collision", collision_table()),
          SceneSection{"solver", solver_section()},
          section("solver.nlgs", NlgsOptions::nested_fields()),
          section("output", output_table()),
          section("channel_flow", channel_flow_table())};
}

}  // namespace moreau::scene_io
