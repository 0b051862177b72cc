#pragma once
// Solver interface: a solver maps an immutable ConeProblem and its options to impulses and a
// SolverStats. Non-convergence is a status, never an exception.
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "moreau/solver/cone_problem.hpp"

namespace moreau {

enum class Termination {
  converged,        // merit <= tolerance
  iteration_limit,  // max_iterations reached first
  diverged,         // a non-finite value or a merit growing past divergence_factor
  not_run,          // empty problem
};
std::string to_string(Termination termination);

// Order in which Gauss-Seidel solvers visit contacts.
enum class ContactOrder { natural, reverse, random, custom };

struct SolverOptions {
  double tolerance = 1e-8;         // on the merit of merit.hpp (dimensionless)
  int max_iterations = 10000;      // sweeps (PGS), iterations (PGJ, APGD)
  bool warm_start = true;          // start from the given r, else from 0
  bool record_history = true;      // merit after each iteration in SolverStats::merit_history
  int check_every = 1;             // merit evaluated every k iterations (it costs one product)
  double divergence_factor = 1e8;  // merit > factor * initial merit => diverged
  // Projected methods: relaxation omega (PGS, PGJ) in (0, 2); PGJ needs omega small enough
  // for its Jacobi splitting, 0.3 is the usual choice (Tasora, Anitescu).
  double relaxation = 1.0;
  ContactOrder order = ContactOrder::natural;  // PGS
  std::vector<int> custom_order;               // PGS with order == custom: a permutation
  unsigned seed = 1;                           // PGS with order == random (shuffled once)
  // APGD (Mazhar et al. 2015, Alg. 1): adaptive restart and step-size backtracking.
  bool adaptive_restart = true;
  double initial_lipschitz = 0.0;          // 0 = estimate from a power iteration
  void validate(int contact_count) const;  // throws InputError naming the field
};

struct SolverStats {
  std::string solver;
  Termination termination = Termination::not_run;
  bool converged = false;
  int iterations = 0;
  // The suite's common merit (merit.hpp) of the returned r, whatever decided the stop, so that
  // merits of different solvers compare.
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
  explicit ContactSolver(SolverOptions options) : options_(std::move(options)) {}
  SolverOptions options_;
};

// Contact visiting order of Gauss-Seidel solvers for SolverOptions::order (random: std::mt19937
// seeded with SolverOptions::seed, shuffled once).
std::vector<int> visiting_order(const SolverOptions& options, int contacts);

// The solvers by name: moreau/registry/solver_registry.hpp (a layer above the solvers).

}  // namespace moreau
