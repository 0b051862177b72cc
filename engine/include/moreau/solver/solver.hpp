#pragma once
// Solver interface: a solver maps an immutable ConeProblem and its options to impulses and a
// SolverStats. Non-convergence is a status, never an exception.
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "moreau/core/option_table.hpp"
#include "moreau/solver/cone_problem.hpp"

namespace moreau {

// Why a solve stopped. Every stop short of the tolerance names its cause, and
// SolverStats::stop_reason says it in words.
enum class Termination {
  converged,        // the criterion <= tolerance
  iteration_limit,  // max_iterations reached first
  diverged,         // a non-finite value or a merit growing past divergence_factor
  stalled,          // an outer fixed point stopped gaining (e.g. the Coulomb wrapper's rounds)
  numerical_limit,  // rounding stops the method above the tolerance (an interior point
                    // method's Newton matrix turned singular close to the solution)
  breakdown,        // a factorization or a linear solve the method needs failed (matrix not
                    // positive definite, singular, dependent constraints)
  not_run,          // empty problem
};
std::string to_string(Termination termination);

// Order in which Gauss-Seidel solvers visit contacts.
enum class ContactOrder { natural, reverse, random, custom };

// The options every solver reads (scene keys solver.tolerance, max_iterations, warm_start,
// record_history). Each solver has its own options struct derived from this one that holds
// only what that solver reads (PgsOptions, ApgdOptions, NlgsOptions, ...), so that no field a
// solver ignores can be set; the registry (moreau/solver/solver_registry.hpp) maps names to
// them.
//
// Each options struct declares its fields once, as a static option table `fields()` (name,
// member, unit, bounds, default, one line of meaning; core/option_table.hpp): its validate()
// checks their bounds, and the scene's solver section, `moreau schema` and the registry
// (solver_registry.hpp) read the same table.
struct SolverOptions {
  double tolerance = 1e-8;     // on the merit of merit.hpp (dimensionless)
  int max_iterations = 10000;  // sweeps (PGS), iterations (PGJ, APGD), Newton steps (IPM)
  bool warm_start = true;      // start from the given r, else from 0
  bool record_history = true;  // merit after each iteration in SolverStats::merit_history
  static const OptionTable<SolverOptions>& fields();
  void validate() const;  // throws OptionError naming the field
};

// Solvers that measure the merit while they iterate and stop when it grows.
struct IterativeSolverOptions : SolverOptions {
  int check_every = 1;             // merit evaluated every k iterations (it costs one product)
  double divergence_factor = 1e8;  // merit > factor * initial merit => diverged
  static const OptionTable<IterativeSolverOptions>& fields();
  void validate() const;  // throws OptionError naming the field
};

// The contact visiting order of the Gauss-Seidel solvers that take one (pgs, md_gs).
struct ContactOrderOptions {
  ContactOrder order = ContactOrder::natural;
  std::vector<int> custom_order;  // order == custom: a permutation of the contacts
  unsigned seed = 1;              // order == random (shuffled once)
  // Throws InputError naming the field; a custom order must be a permutation of
  // 0..contact_count-1 (checked again at each solve with the problem's count).
  void validate(int contact_count) const;
};

// The fields of the common options, of the iteration control and of the visiting order, for
// the tables of the structs derived from them (in this order, first).
template <class Options>
void add_common_fields(OptionTable<Options>& table) {
  table.push_back(number_option<Options>("tolerance", &Options::tolerance, Bounds::at_least(0))
                      .described("stop when the solver's criterion is at most this; 0 runs "
                                 "max_iterations"));
  table.push_back(
      integer_option<Options, int>("max_iterations", &Options::max_iterations, Bounds::at_least(1))
          .described("iterations at most (sweeps, iterations or Newton steps)"));
  table.push_back(bool_option<Options>("warm_start", &Options::warm_start)
                      .described("start from the given impulses, else from zero"));
  table.push_back(bool_option<Options>("record_history", &Options::record_history)
                      .described("keep the criterion of every checked iteration"));
}
template <class Options>
void add_check_every_field(OptionTable<Options>& table) {
  table.push_back(
      integer_option<Options, int>("check_every", &Options::check_every, Bounds::at_least(1))
          .described("evaluate the merit every k iterations (each check costs a product)"));
}
// divergence_factor: +inf is accepted, it switches the growth test off (non-finite merits
// still stop).
template <class Options>
void add_divergence_field(OptionTable<Options>& table) {
  table.push_back(number_option<Options>("divergence_factor", &Options::divergence_factor,
                                         Bounds::left_open(1, Bounds::inf))
                      .described("diverged when the merit exceeds this times the initial one"));
}
template <class Options>
void add_iterative_fields(OptionTable<Options>& table) {
  add_common_fields(table);
  add_check_every_field(table);
  add_divergence_field(table);
}
// "order" is read by the scene parser itself (a word or a permutation of the contacts).
template <class Options>
void add_order_fields(OptionTable<Options>& table) {
  table.push_back(custom_option<Options>("order",
                                         "`\"natural\"`, `\"reverse\"`, `\"random\"` or an array",
                                         "`\"natural\"`")
                      .described("contact visiting order of the sweeps"));
  OptionField<Options> seed =
      integer_option<Options, unsigned>("seed", &Options::seed, Bounds::none())
          .described("seed of the random order (shuffled once)");
  seed.type_text = "integer in [0, 2^32)";
  table.push_back(std::move(seed));
}

struct SolverStats {
  std::string solver;
  Termination termination = Termination::not_run;
  bool converged = false;
  int iterations = 0;
  // The suite's common merit (merit.hpp) of the returned r, whatever decided the stop, so that
  // merits of different solvers compare. A solve of another problem than a cone problem in
  // velocities has none (has_merit false, merit NaN): the variational scheme's force problem
  // (Krabbenhoft/NURBS chapter eq. 4.15), whose criterion and criterion_value say how it went.
  bool has_merit = true;
  double merit = 0.0;
  // What decided `converged` and `termination`, and its final value: "merit" (criterion_value
  // == merit), "epsilon_glob" (Dumont eq. 37, NLGS with that stopping) or
  // "max_dissipation_residual" (the md_* solvers' fixed-point residual, block_solvers.hpp,
  // whose solutions do not zero the Coulomb merit). `tolerance` applies to it.
  std::string criterion = "merit";
  double criterion_value = 0.0;
  // The criterion after each checked iteration (the merit for the merit-stopped solvers).
  std::vector<double> merit_history;
  double wall_seconds = 0.0;
  int threads = 1;
  double tolerance = 0.0;  // the tolerance actually used
  // Interior point solvers (Kleinert et al.): Krylov iterations per Newton step and in total
  // (0 with a direct back-end), the paper's error(gamma, u) (NaN for other solvers) and why a
  // solve stopped without converging (empty otherwise).
  std::vector<int> krylov_iterations_per_step;
  int krylov_iterations = 0;
  double kleinert_error = std::numeric_limits<double>::quiet_NaN();
  std::string stop_reason;
};

class ContactSolver {
 public:
  virtual ~ContactSolver() = default;
  virtual std::string name() const = 0;
  // r: initial guess on entry (used when options.warm_start), solution on exit.
  virtual SolverStats solve(const ConeProblem& problem, VecX& r) const = 0;
  const SolverOptions& options() const { return options_; }

 protected:
  // `control`: the solver's common options with its check_every and divergence_factor (their
  // defaults for a solver that reads neither), what the shared iteration monitor reads.
  explicit ContactSolver(IterativeSolverOptions control) : options_(std::move(control)) {}
  IterativeSolverOptions options_;
};

// Contact visiting order of Gauss-Seidel solvers (random: std::mt19937 seeded with
// ContactOrderOptions::seed, shuffled once).
std::vector<int> visiting_order(const ContactOrderOptions& options, int contacts);

// The common options and the iteration control of a solver that reads only the common
// options: check_every 1 and divergence_factor `divergence_factor`.
IterativeSolverOptions iteration_control(const SolverOptions& options,
                                         double divergence_factor = 1e8);

// The solvers by name: moreau/solver/solver_registry.hpp (a layer above the solvers).

}  // namespace moreau
