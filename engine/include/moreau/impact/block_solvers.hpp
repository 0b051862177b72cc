#pragma once
// Non-linear block relaxation for the multi-contact maximum-dissipation problem of Preclik et al.
// Sec. 3.1: r solves it when every contact i satisfies eq. (5) with the others held fixed,
//   r_i = x*(A = W_ii, b = W_ii r_i - u_i, mu_i),   u = W r + q,
// with x* the analytic single-contact solution (single_contact.hpp). Each block update is that
// exact local solve (Preclik et al. Sec. 3.1: "reduces the multi-contact problem to the problem of
// solving a sequence of single-contact problems"; Preclik & Ruede 2015):
//   md_gs      block Gauss-Seidel: contacts in SolverOptions::order, each from the latest
//              impulses of all others (DelassusOperator sweep interface), then
//              r_i <- r_i + omega (x*_i - r_i). Serial.
//   md_jacobi  weighted block Jacobi: every contact from the same u = W r + q, one Delassus
//              product per iteration, contacts in parallel (OpenMP); like PGJ it needs omega
//              well below 1 when a contact is coupled to many others.
//   md_blend   the blend of the paper (Preclik et al. Sec. 5; Preclik & Ruede 2015, one partition
//   per
//              process): the contacts are split into `partitions` contiguous ranges; each range
//              runs one Gauss-Seidel sweep from the common r (its own sweep state, so it sees
//              its own updates but not the other ranges'), and the ranges are combined as a
//              weighted Jacobi step r_i <- r_i + omega (x_i - r_i). partitions = 1, omega = 1
//              is md_gs; one contact per range is md_jacobi. Ranges run in parallel (OpenMP);
//              the result depends on `partitions`, not on the thread count.
// SolverOptions::relaxation is omega and must lie in (0, 1]: a convex combination of two
// points of the friction cone stays in it, an over-relaxed one may not.
//
// These solvers solve the maximum-dissipation model whatever ConeProblem::friction_model says
// (the Coulomb and convex-relaxation residuals of merit.hpp are not zero at its solutions).
// The stopping test uses instead the fixed-point residual (SolverStats::criterion
// "max_dissipation_residual", its value in SolverStats::criterion_value and merit_history;
// SolverStats::merit stays the suite's merit of the returned r, not zero at a solution)
//   residual(r) = || D^-1 (r - x*(r)) ||_2 / max(||q||_2, q_floor)
// with x*(r) the block-wise solutions above and D, q_floor those of merit.hpp: the natural-map
// residual of merit.hpp with the projection step replaced by the exact block solve, zero exactly
// at a solution. Rows per contact 1 (frictionless: x* = max(0, b_n / W_nn)), 2 and 3 are
// supported. A contact whose diagonal block is not positive definite (it moves nothing, e.g.
// between two fixed bodies) keeps its initial impulse, as in PGS.
#include "moreau/solver/solver.hpp"

namespace moreau {

// What each block solver reads. The relaxation omega in (0, 1] blends the block solution with
// the previous iterate (Preclik et al. Sec. 3.2): an over-relaxed step can leave the cone.
struct MdGaussSeidelOptions : IterativeSolverOptions, ContactOrderOptions {
  double relaxation = 1.0;
  static const OptionTable<MdGaussSeidelOptions>& fields();
  void validate() const;  // throws InputError naming the field
};
// The Jacobi pass gives the residual of every iterate: it checks each one (no check_every).
struct MdJacobiOptions : SolverOptions {
  double divergence_factor = 1e8;  // residual > factor * initial residual => diverged
  double relaxation = 1.0;
  static const OptionTable<MdJacobiOptions>& fields();
  void validate() const;
};
// The single-contact law of each block: the maximum-dissipation solution (md_blend), or a
// solution of the Coulomb-like impact problem (coulomb_blend, Preclik et al. Sec. 2 and Fig. 1:
// x_n >= 0 _|_ u_n >= 0, |x_to| <= mu x_n, sliding impulses opposing the sliding velocity),
// whose solutions coulomb_enumeration.hpp lists; where there are several, the one closest to
// the block's current impulse, so that the iteration follows one branch. The paper ran both
// models with the same blend (Sec. 4.3) and does not say which Coulomb solution it took.
enum class BlockImpactLaw { maximum_dissipation, coulomb };

struct MdBlendOptions : IterativeSolverOptions {
  double relaxation = 1.0;
  BlockImpactLaw law = BlockImpactLaw::maximum_dissipation;  // set by the solver's name
  static const OptionTable<MdBlendOptions>& fields();
  void validate() const;
};

class MaxDissipationGaussSeidel final : public ContactSolver {
 public:
  // Throws InputError for options that cannot be used.
  explicit MaxDissipationGaussSeidel(MdGaussSeidelOptions options = {});
  std::string name() const override { return "md_gs"; }
  SolverStats solve(const ConeProblem& problem, VecX& r) const override;

 private:
  MdGaussSeidelOptions md_;
};

class MaxDissipationJacobi final : public ContactSolver {
 public:
  explicit MaxDissipationJacobi(MdJacobiOptions options = {});
  std::string name() const override { return "md_jacobi"; }
  SolverStats solve(const ConeProblem& problem, VecX& r) const override;

 private:
  MdJacobiOptions md_;
};

class MaxDissipationBlend final : public ContactSolver {
 public:
  // partitions >= 1 (InputError otherwise).
  explicit MaxDissipationBlend(MdBlendOptions options = {}, int partitions = kDefaultPartitions);
  std::string name() const override {
    return md_.law == BlockImpactLaw::coulomb ? "coulomb_blend" : "md_blend";
  }
  SolverStats solve(const ConeProblem& problem, VecX& r) const override;
  int partitions() const { return partitions_; }
  // Two ranges: one per core of the machines this suite targets; more ranges make the
  // iteration more Jacobi-like (slower to converge) without changing the fixed point.
  static constexpr int kDefaultPartitions = 2;

 private:
  MdBlendOptions md_;
  int partitions_;
};

// The fixed-point residual above for impulses r with u = W r + q.
double max_dissipation_residual(const ConeProblem& problem, const VecX& r, const VecX& u);

}  // namespace moreau
