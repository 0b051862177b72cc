#pragma once
// The solvers by name. A solver registers itself by one line next to its implementation,
//
//   const SolverRegistrar<ProjectedGaussSeidel, PgsOptions> kPgs{"pgs", {...laws...}};
//
// naming the solver class, its options struct and the laws it solves; the registry, the scene
// parser (solver section), `moreau fclib solve`, `moreau --help`, the conformance test and the
// FCLIB benchmark read this table, so that a new solver needs its source, its header and that
// line. The options struct declares its fields once (a static `fields()` option table, see
// core/option_table.hpp): its validate(), the scene keys and their documentation read it.
#include <functional>
#include <memory>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

#include "moreau/core/any_options.hpp"
#include "moreau/core/error.hpp"
#include "moreau/core/option_table.hpp"
#include "moreau/solver/solver.hpp"

namespace moreau {

namespace detail {
struct SolverOptionsModel : HeldOptions {
  virtual std::unique_ptr<SolverOptionsModel> clone() const = 0;
  virtual SolverOptions& common() = 0;
  virtual ContactOrderOptions* contact_order() = 0;
  virtual void validate() const = 0;
};
}  // namespace detail

// The options of any solver: one registered options struct (derived from SolverOptions), held
// by value. get<O>() reaches it as its own type (InputError naming both structs otherwise);
// common() its SolverOptions part.
class AnySolverOptions : public AnyOptions<detail::SolverOptionsModel> {
 public:
  AnySolverOptions() = default;
  template <class Options>
  requires std::derived_from<Options, SolverOptions> AnySolverOptions(
      Options options)  // NOLINT(google-explicit-constructor): a value of any
      : AnyOptions(std::make_unique<Holder<Options>>(std::move(options))) {}

  // The common fields (tolerance, max_iterations, warm_start, record_history).
  const SolverOptions& common() const { return held().common(); }
  SolverOptions& common() { return held().common(); }
  // The visiting order of a Gauss-Seidel solver's options; null for the others.
  ContactOrderOptions* contact_order() { return held().contact_order(); }
  // The struct's own validate(): InputError naming the field.
  void validate() const { held().validate(); }

 private:
  template <class Options>
  struct Holder final : detail::SolverOptionsModel {
    explicit Holder(Options options) : value(std::move(options)) {}
    std::unique_ptr<SolverOptionsModel> clone() const override {
      return std::make_unique<Holder>(value);
    }
    const std::type_info& type() const override { return typeid(Options); }
    void* address() override { return &value; }
    SolverOptions& common() override { return value; }
    ContactOrderOptions* contact_order() override {
      if constexpr (std::is_base_of_v<ContactOrderOptions, Options>)
        return &value;
      else
        return nullptr;
    }
    void validate() const override { value.validate(); }
    Options value;
  };
};

// The common fields of any solver's options, read and written; the struct's name.
inline SolverOptions common_options(const AnySolverOptions& options) { return options.common(); }
inline void set_common_options(AnySolverOptions& options, const SolverOptions& common) {
  options.common() = common;
}
inline std::string options_type_name(const AnySolverOptions& options) {
  return options.type_name();
}

// The contact laws a solver solves, as the cone problem states them: Coulomb friction (the De
// Saxce form), its convex relaxation (the cone complementarity problem), frictionless contacts
// (one row per contact); or its own impact law, the maximum-dissipation model of Preclik et
// al., which takes the problem's W, q and mu and ignores its friction model.
struct SolverLaws {
  bool coulomb = false;
  bool convex_relaxation = false;
  bool frictionless = false;
  bool maximum_dissipation = false;
};

// An option table over AnySolverOptions: the fields of one options struct, reached through
// get<Options>() (the scene parser and `moreau schema` read a solver's keys through it).
using AnySolverOptionTable = OptionTable<AnySolverOptions>;

struct SolverRegistration {
  std::string name;         // "pgs"
  std::string description;  // one line, with the paper it follows
  SolverLaws laws;
  AnySolverOptions defaults;  // the struct with this solver's defaults
  // Its options under the scene's solver section; `nested` names a sub-object of it with its
  // own table ("nlgs": the NLGS's Dumont options), empty when there is none.
  AnySolverOptionTable options;
  std::string nested_key;
  AnySolverOptionTable nested_options;
  std::function<std::unique_ptr<ContactSolver>(const AnySolverOptions&)> make;
};

// Adds a solver to the registry (InputError for a name registered twice). Returns true so
// that a registrar can run it at static initialization.
bool register_solver(SolverRegistration registration);

// Every registered solver, by name in alphabetical order.
const std::vector<SolverRegistration>& registered_solvers();
std::vector<std::string> solver_names();
// The solver of that name; InputError listing the known ones for an unknown name.
const SolverRegistration& find_solver(const std::string& name);

// The options struct of solver `name` with its defaults. Throws InputError for an unknown name.
AnySolverOptions default_solver_options(const std::string& name);
// The same with the common fields of `common`.
AnySolverOptions default_solver_options(const std::string& name, const SolverOptions& common);

// The solver of that name with `options`, which must be its struct (InputError naming the
// struct it takes otherwise), for an unknown name (listing the known ones) and for options the
// solver cannot use.
std::unique_ptr<ContactSolver> make_solver(const std::string& name,
                                           const AnySolverOptions& options);
// The same with default_solver_options(name).
std::unique_ptr<ContactSolver> make_solver(const std::string& name);

// One option of a solver by its scene key, through the solver's table: whether it has it, and
// setting it (a number for number and integer fields, a bool, or a word for choices), the
// value checked against the field's type and bounds (OptionError naming the key; also for a
// key the solver does not have, listing its keys).
bool has_solver_option(const std::string& solver, const std::string& key);
void set_solver_option(const std::string& solver, AnySolverOptions& options, const std::string& key,
                       double value);
void set_solver_option(const std::string& solver, AnySolverOptions& options, const std::string& key,
                       bool value);
void set_solver_option(const std::string& solver, AnySolverOptions& options, const std::string& key,
                       const std::string& word);

// An option table of `Options` as one over AnySolverOptions.
template <class Options>
AnySolverOptionTable erase_option_table(const OptionTable<Options>& table) {
  AnySolverOptionTable out;
  for (const OptionField<Options>& field : table)
    out.push_back(rebind_option<AnySolverOptions>(
        field, [](auto& any) -> auto& { return any.template get<Options>(); }));
  return out;
}

// The registration line of a solver: Solver constructed from Options. `defaults` are the
// registry's defaults of the struct; `bind` sets what the name itself decides (the NLGS's
// local method, the interior point method's back-end) in the defaults and in every options
// struct the solver is made from.
template <class Solver, class Options>
struct SolverRegistrar {
  SolverRegistrar(std::string name, SolverLaws laws, std::string description, Options defaults = {},
                  std::function<void(Options&)> bind = {}) {
    SolverRegistration r;
    r.name = std::move(name);
    r.description = std::move(description);
    r.laws = laws;
    if (bind) bind(defaults);
    r.defaults = std::move(defaults);
    r.options = erase_option_table(Options::fields());
    if constexpr (requires { Options::nested_fields(); }) {
      r.nested_key = Options::nested_key;
      r.nested_options = erase_option_table(Options::nested_fields());
    }
    r.make = [bind](const AnySolverOptions& options) -> std::unique_ptr<ContactSolver> {
      Options own = options.get<Options>();
      if (bind) bind(own);
      return std::make_unique<Solver>(std::move(own));
    };
    register_solver(std::move(r));
  }
};

}  // namespace moreau
