// The Painleve rod's impact, Preclik et al. Sec. 4.2 (Fig. 8).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "moreau/collision/collision_detector.hpp"
#include "moreau/contact/contact_system.hpp"
#include "moreau/contact/delassus.hpp"
#include "moreau/core/error.hpp"
#include "moreau/harness/experiment.hpp"
#include "moreau/impact/block_solvers.hpp"
#include "moreau/impact/coulomb_enumeration.hpp"
#include "moreau/impact/reference_minimizer.hpp"
#include "moreau/impact/single_contact.hpp"
#include "moreau/integrator/impulse_velocity_stepper.hpp"
#include "moreau/solver/projected_gauss_seidel.hpp"
#include "parts.hpp"
#include "problems.hpp"

namespace painleve_rod {

using namespace moreau;
using Vec2 = Eigen::Vector2d;

namespace {

// The engine's Delassus block against Preclik et al.'s A(t0), in the plane of motion.
void check_rod_delassus(ExperimentResults& results) {
  const double theta = kPi / 3.0;
  const RodImpact impact = rod_impact(theta);
  const Mat3 world = impact.frame * impact.problem.a * impact.frame.transpose() * kRodMass;
  const double s = std::sin(theta), c = std::cos(theta);
  const double error =
      std::max({std::abs(world(0, 0) - (1.0 + 3.0 * s * s)),
                std::abs(world(1, 1) - (1.0 + 3.0 * c * c)), std::abs(world(0, 1) + 3.0 * s * c)});
  results.check(
      "rod_delassus_in_plane", error < 1e-13,
      "largest in-plane difference of m A from Preclik et al.'s A(t0) at theta0 = pi/3: " +
          std::to_string(error));
  results.measure(
      "rod: m A_zz at theta0 = pi/3 (Preclik et al. prints 1 + 3 cos^2 2 theta0 = 1.75)",
      world(2, 2), "", "a slender rod gives 1 + (l/2)^2 / (l^2/12) = 4");
}

// min over theta0 of mu*(theta0) from the engine's W, by golden-section search.
void check_mu_star_minimum(ExperimentResults& results) {
  double lo = 0.3, hi = 1.4;
  const double ratio = 0.5 * (std::sqrt(5.0) - 1.0);
  for (int k = 0; k < 80; ++k) {
    const double a = hi - ratio * (hi - lo), b = lo + ratio * (hi - lo);
    if (engine_mu_star(a) < engine_mu_star(b)) {
      hi = b;
    } else {
      lo = a;
    }
  }
  const double theta_min = 0.5 * (lo + hi);
  results.check("mu_star_minimum", engine_mu_star(theta_min),
                "golden-section minimum of A_nn / |(A_nt, A_no)| from the engine's W");
  results.check("mu_star_argmin", theta_min);
}

// Lambda0 at theta0 = pi/3, mu = 2 (> mu* = 1.347).
void check_lambda0(ExperimentResults& results) {
  const double theta = kPi / 3.0;
  RodImpact impact = rod_impact(theta);
  impact.problem.mu = 2.0;
  const Vec3 impulse = impact.frame * solve_max_dissipation(impact.problem).x;
  results.check("lambda0_tangential", impulse.x(), "world x component of the impulse on the rod");
  results.check("lambda0_normal", impulse.y(), "world y component of the impulse on the rod");
}

// The (theta0, mu) sweep (Fig. 8). Each angle also gets mu = mu*(theta0) exactly and
// mu*(1 -+ 1e-9) around it.
void sweep(const ExperimentArguments& args, const Scale& scale, ExperimentResults& results) {
  CsvTable out(results, args.output_directory, "painleve_sweep.csv",
               {"theta0", "mu", "mu_star", "expected_impulsive", "md_impulsive", "md_lambda_x",
                "md_lambda_y", "coulomb_isolated", "coulomb_continua", "on_boundary"});
  int md_wrong = 0, coulomb_wrong = 0, points = 0;
  double worst_lambda0 = 0.0;
  for (int i = 0; i < scale.sweep_angles; ++i) {
    const double theta = 0.5 * kPi * (i + 0.5) / scale.sweep_angles;
    const double critical = mu_star(theta);
    RodImpact impact = rod_impact(theta);
    std::vector<std::pair<double, int>> mus;  // mu, side (-1 below, 0 at, +1 above mu*)
    for (int j = 0; j < scale.sweep_mus; ++j) {
      const double mu = 4.0 * (j + 0.5) / scale.sweep_mus;
      mus.emplace_back(mu, mu < critical ? -1 : 1);
    }
    mus.emplace_back(critical * (1.0 - 1e-9), -1);
    mus.emplace_back(critical, 0);
    mus.emplace_back(critical * (1.0 + 1e-9), 1);
    const Vec3 expected_impulse = lambda0(theta);
    for (const auto& [mu, side] : mus) {
      impact.problem.mu = mu;
      const Vec3 md = impact.frame * solve_max_dissipation(impact.problem).x;
      const bool impulsive = md.norm() > 0.0;
      const bool expected = side >= 0;  // Preclik et al. Sec. 4.2: Lambda0 iff mu >= mu*
      md_wrong += impulsive != expected;
      if (impulsive) {
        worst_lambda0 =
            std::max(worst_lambda0, (md - expected_impulse).norm() / expected_impulse.norm());
      }
      const CoulombSolutionSet set = enumerate_coulomb_solutions(impact.problem);
      // 0 alone below mu*; 0 and Lambda0 above; at mu* also the segment between them.
      const std::size_t expected_isolated = side < 0 ? 1 : 2;
      const std::size_t expected_continua = side == 0 ? 1 : 0;
      bool coulomb_ok =
          set.isolated.size() == expected_isolated && set.continua.size() == expected_continua;
      if (coulomb_ok && side >= 0) {
        coulomb_ok = (impact.frame * set.isolated[1].x - expected_impulse).norm() <=
                     1e-9 * expected_impulse.norm();
      }
      coulomb_wrong += !coulomb_ok;
      ++points;
      out.row(theta, mu, critical, expected, impulsive, md.x(), md.y(), set.isolated.size(),
              set.continua.size(), side == 0);
    }
  }
  results.check("sweep_md_misclassified", static_cast<double>(md_wrong),
                std::to_string(points) + " (theta0, mu) points");
  results.check("sweep_coulomb_misclassified", static_cast<double>(coulomb_wrong),
                std::to_string(points) + " (theta0, mu) points");
  results.check("sweep_lambda0_error", worst_lambda0,
                "largest |Lambda - Lambda0| / |Lambda0| over the impulsive sweep points");
  results.add_file("painleve_plane.png", "figure");
}

}  // namespace

void run_rod_impact(const ExperimentArguments& args, const Scale& scale,
                    ExperimentResults& results) {
  check_rod_delassus(results);
  check_mu_star_minimum(results);
  check_lambda0(results);
  sweep(args, scale, results);
}

}  // namespace painleve_rod
