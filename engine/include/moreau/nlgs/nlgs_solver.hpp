#pragma once
// Non-linear Gauss-Seidel (NLGS) over contacts with a pluggable local solver (Dumont
// Sec. 3.1-3.5): each iteration visits the contacts in order, solves contact c with the others'
// impulses frozen (local_solver.hpp: SBP, EBP, SAL or EAL) and updates W r at once through the
// DelassusOperator sweep interface, so that later contacts see it (eq. 23). Sequential by
// nature (SolverStats::threads = 1); Dumont's optional split of the contact loop over threads
// is not implemented.
//
// Descent parameter per contact: rho_c = alpha / (W_cc)_nn. For two spheres (the bodies of
// Dumont) the normal through both centres has no lever arm, so (W_cc)_nn = 1/m_i + 1/m_j
// (1/m_i against a fixed wall) and rho_c = alpha m_i m_j / (m_i + m_j) = alpha rho_bar dt, the
// impulse form of Dumont's rho = alpha rho_bar (Sec. 4, rho_bar = m_i m_j / (m_i + m_j) / dt
// with r a force): r dt and rho dt give the same iterates.
//
// Two error measures are computed after every sweep:
//  - the suite's merit (merit.hpp) in SolverStats::merit and merit_history, as for every solver;
//  - Dumont's eps_glob (eq. 37), the mean over contacts of four terms (motion, projection onto
//    K, bi-potential, penetration), in NlgsStats::history term by term.
// Either one stops the loop (NlgsOptions::stopping).
#include <memory>
#include <string>
#include <vector>

#include "moreau/nlgs/local_solver.hpp"
#include "moreau/solver/solver.hpp"

namespace moreau {

enum class NlgsStopping {
  merit,         // merit (merit.hpp) <= NlgsOptions::tolerance, as PGS/PGJ/APGD
  epsilon_glob,  // eps_glob (eq. 37) <= NlgsOptions::epsilon_glob_tolerance, as Dumont
};

// What the NLGS reads: the common options and the merit check (scene section solver) and
// Dumont's options (scene section solver.nlgs). Contacts are visited in natural order without
// relaxation (Dumont Sec. 3.1): its step is the descent parameter rho.
struct NlgsOptions : IterativeSolverOptions {
  LocalMethod method = LocalMethod::ebp;
  // alpha in rho = alpha rho_bar; 0 takes the method's default of Dumont Sec. 4 (0.6 for SBP
  // and SAL, 1 for EBP and EAL).
  double rho_factor = 0.0;
  NlgsStopping stopping = NlgsStopping::merit;
  // Units of eq. 37: m/s for the velocity terms plus N (or N s, see time_step) for the
  // projection term and W (or J) for the bi-potential term, summed as Dumont does.
  double epsilon_glob_tolerance = 1e-10;
  double newton_tolerance = 1e-5;   // local Newton (EBP, EAL), Dumont Sec. 4
  int newton_max_iterations = 100;  // Dumont Sec. 4
  bool newton_line_search = true;   // LocalOptions::line_search (not in Dumont)
  // Dumont writes r as a force. With time_step > 0 (s), the impulse terms of eps_glob and
  // eps_Newt use r / time_step (N) as in the paper; 0 keeps impulses (N s).
  double time_step = 0.0;
  // The solver section's keys (the common ones and the merit check), and Dumont's, which a
  // scene gives in the sub-object "nlgs" of the solver section.
  static const OptionTable<NlgsOptions>& fields();
  static constexpr const char* nested_key = "nlgs";
  static const OptionTable<NlgsOptions>& nested_fields();
  void validate() const;  // throws InputError naming the field
};

// eps_glob terms (eq. 37) of one contact or, summed and divided by the contact count, of all.
struct GlobalErrorTerms {
  double motion = 0.0;       // |v - (W r + q)|: the local velocity unknown against the motion
  double projection = 0.0;   // |r - P_K(r)|
  double bipotential = 0.0;  // |v . r + mu r_n |v_t||
  double penetration = 0.0;  // -min(0, v_n)
  double total() const { return motion + projection + bipotential + penetration; }
};

// Terms of eq. 37 for one contact: r the impulse as it enters the criterion (force or
// impulse), v the velocity the method pairs with it, u = (W r + q)_c the velocity of the motion.
GlobalErrorTerms contact_error_terms(const Vec3& r, const Vec3& v, const Vec3& u, double mu,
                                     int rows);

struct NlgsIterate {
  int iteration = 0;             // sweeps done (0: the initial guess)
  GlobalErrorTerms terms;        // means over contacts
  double epsilon_glob = 0.0;     // terms.total()
  double max_penetration = 0.0;  // largest per-contact penetration term, m/s
  double merit = 0.0;            // merit.hpp
  long newton_iterations = 0;    // local Newton iterations in this sweep
};

struct NlgsStats {
  SolverStats common;  // the suite's stats (merit of merit.hpp, termination, wall time)
  LocalMethod method = LocalMethod::ebp;
  double rho_factor = 0.0;  // alpha actually used
  NlgsStopping stopping = NlgsStopping::merit;
  double epsilon_glob = 0.0;         // at the end
  GlobalErrorTerms terms;            // at the end
  double max_penetration = 0.0;      // at the end, m/s
  long newton_iterations = 0;        // all local Newton iterations
  long newton_unconverged = 0;       // local solves that stopped at the limit or a singular tangent
  std::vector<NlgsIterate> history;  // every measured iteration when record_history
};

class NlgsSolver final : public ContactSolver {
 public:
  // Throws InputError for options that cannot be used. tolerance: the merit stop;
  // max_iterations: sweeps.
  explicit NlgsSolver(NlgsOptions nlgs);
  std::string name() const override;  // "nlgs-sbp", "nlgs-ebp", "nlgs-sal", "nlgs-eal"
  SolverStats solve(const ConeProblem& problem, VecX& r) const override;
  // The same solve with Dumont's eps_glob terms per iteration.
  NlgsStats solve_with_terms(const ConeProblem& problem, VecX& r) const;
  const NlgsOptions& nlgs_options() const { return nlgs_; }

 private:
  NlgsOptions nlgs_;
  std::unique_ptr<LocalSolver> local_;
};

// The solvers "nlgs-sbp", "nlgs-ebp", "nlgs-sal", "nlgs-eal" are registered by these names
// (solver/solver_registry.hpp), each with its local method bound to its name.

}  // namespace moreau
