#pragma once
// Projected Gauss-Seidel (PGS, used on the LCP eq. 21 in Olsen & Kamrin Sec. 8; the per-contact
// cone projection of Tasora & Anitescu for frictional contacts). One sweep visits every contact
// once in PgsOptions::order and updates it from the latest impulses of all the others,
// through the DelassusOperator sweep interface (O(block) per contact, no full product):
//   frictionless:  r_i <- max(0, r_i - omega u_i / W_ii)   (omega = 1: the exact local solve)
//   frictional:    r_i <- P_K(r_i - omega g_i u^_i),  g_i = rows / trace(W_ii)
// with u^_i the De Saxce velocity (FrictionModel::coulomb) or u_i (convex_relaxation).
// g_i is the inverse of the mean eigenvalue of W_ii: the local step contracts only while
// omega g_i lambda_max(W_ii) < 2. Sphere contacts are safe (uniform solid spheres give
// W_ii ~ diag(1, 3.5, 3.5), lambda_max / mean = 1.3); a block with lambda_max(W_ii) > 2 trace /
// rows needs omega < 1, else the sweeps can settle into a cycle short of the tolerance.
// Serial by nature: SolverStats::threads is 1. With order == random the contacts are shuffled
// once with std::mt19937(seed); the permutation depends on the standard library's
// std::shuffle, so it is reproducible for one toolchain.
#include "moreau/solver/solver.hpp"

namespace moreau {

// What PGS reads: the common options, the merit check, its order and relaxation.
struct PgsOptions : IterativeSolverOptions, ContactOrderOptions {
  double relaxation = 1.0;  // omega in (0, 2)
  static const OptionTable<PgsOptions>& fields();
  void validate() const;  // throws InputError naming the field
};

class ProjectedGaussSeidel final : public ContactSolver {
 public:
  // Throws InputError for options that cannot be used (PgsOptions::validate).
  explicit ProjectedGaussSeidel(PgsOptions options = {});
  std::string name() const override { return "pgs"; }
  SolverStats solve(const ConeProblem& problem, VecX& r) const override;
  const PgsOptions& pgs_options() const { return pgs_; }

 private:
  PgsOptions pgs_;
};

}  // namespace moreau
