#pragma once
// Brute-force reference for the maximum-dissipation single-contact problem (Preclik et al. eq. 5),
// for tests and benchmarks only: no stationarity condition, no quartic, no case analysis.
//
// For b_n >= 0 and x_n > 0 the Signorini condition puts x on the plane of maximum compression,
// x = lift(y) with y = x_to; there the feasible set {|y| <= mu (b_n - a_tn . y) / A_nn} is
// star-shaped about y = 0, so it is {r d : 0 <= r <= rbar(alpha)} with d = (cos alpha,
// sin alpha), rbar = mu b_n / f_r(alpha) where f_r(alpha) > 0 and +infinity elsewhere (0 when
// b_n = 0). Along each direction the reduced objective is a 1D quadratic, minimised in closed
// form and clamped to [0, rbar]; the resulting g(alpha) is sampled at `samples` angles over the
// full circle and every sampled local minimum is refined by golden-section search. b_n < 0
// admits only x = 0 (the pressure constraint).
#include "moreau/impact/single_contact.hpp"

namespace moreau {

struct SamplingResult {
  Vec3 x = Vec3::Zero();
  double objective = 0.0;
  int evaluations = 0;
};

// samples >= 8; throws InputError otherwise.
SamplingResult minimize_by_sampling(const SingleContactProblem& problem, int samples = 2048);

}  // namespace moreau
