#pragma once
// The time-stepping schemes by name. A scheme registers itself by one line next to its
// implementation,
//
//   const SchemeRegistrar<ThetaStepper, ThetaOptions> kTheta{"theta", "Dumont Sec. 2.1 ..."};
//
// naming the stepper class and its options struct; the scene parser (integrator section),
// `moreau run --scheme`, `moreau schemes`, `moreau schema` and docs/scene-format.md read this
// table, so that a new scheme needs its source, its header and that line. The options struct
// derives from StepSettings (time step, frictional, collision: set once by a scene for every
// scheme) and declares its own keys in a static `fields()` option table.
#include <functional>
#include <memory>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

#include "moreau/core/any_options.hpp"
#include "moreau/core/error.hpp"
#include "moreau/core/option_table.hpp"
#include "moreau/integrator/step_settings.hpp"
#include "moreau/integrator/stepper.hpp"
#include "moreau/solver/solver.hpp"
#include "moreau/solver/solver_registry.hpp"

namespace moreau {

namespace detail {
struct SchemeOptionsModel : HeldOptions {
  virtual std::unique_ptr<SchemeOptionsModel> clone() const = 0;
  virtual StepSettings* settings() = 0;
  virtual void validate(const World& world) const = 0;
};
}  // namespace detail

// The options of any scheme, held by value: get<O>() reaches the struct as its own type,
// settings() its StepSettings part (null for a scheme that keeps its own time step, the DEM).
class AnySchemeOptions : public AnyOptions<detail::SchemeOptionsModel> {
 public:
  AnySchemeOptions() = default;
  template <class Options>
  requires(!std::is_same_v<Options, AnySchemeOptions>)
      AnySchemeOptions(Options options)  // NOLINT(google-explicit-constructor): a value of any
      : AnyOptions(std::make_unique<Holder<Options>>(std::move(options))) {}

  StepSettings* settings() { return held().settings(); }
  const StepSettings* settings() const { return held().settings(); }
  // The struct's own validate() (with the world, for a scheme whose options depend on it).
  void validate(const World& world) const { held().validate(world); }

 private:
  template <class Options>
  struct Holder final : detail::SchemeOptionsModel {
    explicit Holder(Options options) : value(std::move(options)) {}
    std::unique_ptr<SchemeOptionsModel> clone() const override {
      return std::make_unique<Holder>(value);
    }
    const std::type_info& type() const override { return typeid(Options); }
    void* address() override { return &value; }
    StepSettings* settings() override {
      if constexpr (std::is_base_of_v<StepSettings, Options>)
        return &value;
      else
        return nullptr;
    }
    void validate(const World& world) const override {
      if constexpr (requires { value.validate(world); })
        value.validate(world);
      else
        value.validate();
    }
    Options value;
  };
};

using AnySchemeOptionTable = OptionTable<AnySchemeOptions>;

// The solver of a scheme that brings its own (not the scene's solver section), as a run's
// summary names it.
struct OwnSolver {
  std::string name;
  double tolerance = 0.0;
};

struct SchemeRegistration {
  std::string name;         // "theta"
  std::string description;  // one line, with the paper it follows
  // Where the scheme's own keys are in a scene: "integrator", or a section of its own ("dem").
  std::string section = "integrator";
  // Whether it solves its contact problem with the scene's contact solver (solver section);
  // the others have their own solver or none.
  bool takes_solver = true;
  // A scheme whose scenes may also carry another scheme's keys, to be compared with it on the
  // same scene (`moreau run --scheme`): the DEM reference with semi_implicit_euler's.
  std::string accepts_keys_of;
  AnySchemeOptions defaults;  // the struct with this scheme's defaults
  AnySchemeOptionTable options;
  std::string nested_key;  // a sub-object with a table of its own ("compatible"), or empty
  AnySchemeOptionTable nested_options;
  // For a scheme with its own solver: takes the solver section's name (empty when not given)
  // and common options (of the keys given) into its options; OptionError naming the key of a
  // value it cannot use.
  std::function<void(const std::string& solver, const SolverOptions& given,
                     const std::vector<std::string>& given_keys, AnySchemeOptions&)>
      solver_section;
  std::function<OwnSolver(const AnySchemeOptions&)> own_solver;  // empty: the scene's, or none
  std::function<std::unique_ptr<Stepper>(World&, const AnySchemeOptions&,
                                         std::unique_ptr<ContactSolver>)>
      make;
};

// Adds a scheme to the registry (InputError for a name registered twice); true, so that a
// registrar can run it at static initialization.
bool register_scheme(SchemeRegistration registration);

// Every registered scheme, by name in alphabetical order.
const std::vector<SchemeRegistration>& registered_schemes();
std::vector<std::string> scheme_names();
// The scheme of that name; InputError listing the known ones for an unknown name.
const SchemeRegistration& find_scheme(const std::string& name);
AnySchemeOptions default_scheme_options(const std::string& name);

// The stepper of scheme `name` over `world` with `options` (its struct: InputError naming the
// struct it takes otherwise) and `solver` (null for a scheme that does not take one).
std::unique_ptr<Stepper> make_stepper(const std::string& name, World& world,
                                      const AnySchemeOptions& options,
                                      std::unique_ptr<ContactSolver> solver);

// An option table of `Options` as one over AnySchemeOptions, its defaults those of `defaults`
// (a registration's, which may differ from Options{}: the DEM's "auto" time step).
template <class Options>
AnySchemeOptionTable erase_scheme_option_table(const OptionTable<Options>& table,
                                               const Options& defaults) {
  AnySchemeOptionTable out;
  for (const OptionField<Options>& field : table) {
    out.push_back(rebind_option<AnySchemeOptions>(
        field, [](auto& any) -> auto& { return any.template get<Options>(); }));
    if (field.default_text.empty()) out.back().default_text = option_value_text(field, defaults);
  }
  return out;
}

// The registration line of a scheme: Stepper constructed from (World&, Options[, solver]).
// `bind` sets what the name itself decides (SHAKE or RATTLE) in the defaults and in every
// options struct the stepper is made from.
template <class Stepper, class Options>
struct SchemeRegistrar {
  SchemeRegistrar(std::string name, std::string description, Options defaults = {},
                  std::function<void(Options&)> bind = {},
                  std::function<void(SchemeRegistration&)> configure = {}) {
    SchemeRegistration r;
    r.name = std::move(name);
    r.description = std::move(description);
    if (bind) bind(defaults);
    r.options = erase_scheme_option_table(Options::fields(), defaults);
    if constexpr (requires { Options::nested_fields(); }) {
      r.nested_key = Options::nested_key;
      r.nested_options = erase_scheme_option_table(Options::nested_fields(), defaults);
    }
    r.defaults = std::move(defaults);
    r.takes_solver =
        std::is_constructible_v<Stepper, World&, Options, std::unique_ptr<ContactSolver>>;
    r.make = [bind](World& world, const AnySchemeOptions& options,
                    std::unique_ptr<ContactSolver> solver) -> std::unique_ptr<moreau::Stepper> {
      Options own = options.get<Options>();
      if (bind) bind(own);
      if constexpr (std::is_constructible_v<Stepper, World&, Options,
                                            std::unique_ptr<ContactSolver>>)
        return std::make_unique<Stepper>(world, std::move(own), std::move(solver));
      else
        return std::make_unique<Stepper>(world, std::move(own));
    };
    if (configure) configure(r);
    register_scheme(std::move(r));
  }
};

}  // namespace moreau
