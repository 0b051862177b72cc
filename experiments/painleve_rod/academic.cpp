// The academic six-mass problem, Preclik et al. Sec. 4.1 (Fig. 7).
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

// The same masses with t and o normalized, Q = [n, t/|t|, o/|o|] orthonormal (not published:
// the published frame is not orthonormal, so the solvers are also tested on one that is). The
// analytic maximum-dissipation solver is checked against brute force and against the enumerated
// Coulomb solutions, as on the published frame; x* and the objective are reported beside the
// published-frame ones. The impulse in world coordinates is Q x; with Q orthonormal the
// objective is frame-invariant, so it is compared with the published frame's too.
void check_orthonormal_frame(ExperimentResults& results, const Vec3& published_frame_x,
                             double published_frame_objective,
                             const SamplingResult& published_frame_brute) {
  const Academic published = academic_problem(false);
  const Academic normalized = academic_problem(true);
  const SingleContactProblem& p = normalized.problem;
  const MaxDissipationSolution md = solve_max_dissipation(p);
  const double objective = p.objective(md.x);
  const SamplingResult brute = minimize_by_sampling(p, 1 << 16);
  const CoulombSolutionSet coulomb = enumerate_coulomb_solutions(p);
  results.measure("academic, orthonormal frame: x*_n", md.x.x(), "N s");
  results.measure("academic, orthonormal frame: x*_t", md.x.y(), "N s");
  results.measure("academic, orthonormal frame: x*_o", md.x.z(), "N s");
  results.measure("academic, orthonormal frame: objective of x*", objective, "J",
                  "published frame: " + std::to_string(published_frame_objective));
  results.measure("academic, orthonormal frame: Coulomb solutions",
                  static_cast<double>(coulomb.isolated.size() + coulomb.continua.size()), "");
  results.measure("academic, published frame: brute-force objective - objective of x*",
                  published_frame_brute.objective - published_frame_objective, "J");
  // World-frame impulses of the two frames' solutions: the same physical problem only if the
  // frame's scaling is a change of variables (it is: x_world = Q x in both).
  const Vec3 world_published = published.frame * published_frame_x;
  const Vec3 world_normalized = normalized.frame * md.x;
  results.measure("academic: |Q x* (orthonormal) - Q x* (published frame)| / |Q x*|",
                  (world_normalized - world_published).norm() / world_published.norm(), "",
                  "the friction cone of the published frame is ||(x_t, x_o)|| <= mu x_n in the "
                  "unnormalized coordinates, so it is a different (elliptic) cone in the world "
                  "frame: the two problems need not have the same solution");
  results.check("orthonormal_md_matches_brute_force",
                (brute.objective - objective) / std::abs(objective),
                "(brute-force objective - objective of x*) / |objective of x*|, 65536 directions");
  results.check("orthonormal_md_x_matches_brute_force", (md.x - brute.x).norm() / md.x.norm(),
                "|x* - x_brute| / |x*|");
  bool lowest = true;
  double worst_residual = 0.0;
  for (const CoulombSolution& sol : coulomb.isolated) {
    lowest = lowest && objective < p.objective(sol.x);
    worst_residual = std::max(worst_residual, coulomb_residual(p, sol.x));
  }
  results.check("orthonormal_md_most_dissipative", lowest && !coulomb.isolated.empty(),
                "objective of x* below that of every one of the " +
                    std::to_string(coulomb.isolated.size()) + " enumerated Coulomb solutions");
  results.check("orthonormal_coulomb_residual", worst_residual,
                "largest Coulomb residual of the enumerated solutions");
}

// Fig. 7: the objective on the plane of maximum compression over (x_t, x_o), the conic section
// and the solutions.
void write_figure(const ExperimentArguments& args, const Scale& scale, ExperimentResults& results,
                  const SingleContactProblem& p, const Vec3& md_x,
                  const CoulombSolutionSet& coulomb) {
  const ReducedProblem reduced(p);
  CsvTable grid(results, args.output_directory, "academic_contour.csv",
                {"x_t", "x_o", "objective", "feasible"}, 10);
  // Wide enough for the conic section (x_t in [-2.5, 0.4], x_o in [-6.8, 0.2]) and x0 (x_o =
  // -13.8).
  const double t_lo = -3.0, t_hi = 1.0, o_lo = -15.0, o_hi = 2.0;
  for (int i = 0; i < scale.contour_points; ++i) {
    for (int j = 0; j < scale.contour_points; ++j) {
      const Vec2 y(t_lo + (t_hi - t_lo) * i / (scale.contour_points - 1),
                   o_lo + (o_hi - o_lo) * j / (scale.contour_points - 1));
      const Vec3 x = reduced.lift(y);
      const bool feasible = x.x() >= 0.0 && y.norm() <= p.mu * x.x();
      grid.row(y.x(), y.y(), p.objective(x), feasible);
    }
  }
  CsvTable points(results, args.output_directory, "academic_points.csv",
                  {"kind", "x_n", "x_t", "x_o", "objective"}, 12);
  for (int k = 0; k < 2000; ++k) {
    const double alpha = -kPi + 2.0 * kPi * k / 2000;
    const Vec2 d(std::cos(alpha), std::sin(alpha));
    const double f_r = reduced.boundary_factor(p.mu, d);
    if (f_r <= 0.0) continue;
    const double r = p.mu * reduced.b_n / f_r;
    points.row("boundary", r / p.mu, r * d.x(), r * d.y(), "");
  }
  const Vec3 x0 = p.a.ldlt().solve(p.b);
  points.row("unconstrained", x0.x(), x0.y(), x0.z(), p.objective(x0));
  points.row("max_dissipation", md_x.x(), md_x.y(), md_x.z(), p.objective(md_x));
  for (const CoulombSolution& s : coulomb.isolated) {
    points.row("coulomb", s.x.x(), s.x.y(), s.x.z(), p.objective(s.x));
  }
}

}  // namespace

void run_academic(const ExperimentArguments& args, const Scale& scale, ExperimentResults& results) {
  const Academic academic = academic_problem(false);
  const SingleContactProblem& p = academic.problem;
  results.check("academic_inertia", academic.inertia_error < 1e-14,
                "relative Frobenius difference " + std::to_string(academic.inertia_error));

  const MaxDissipationSolution md = solve_max_dissipation(p);
  const Vec3 u = p.relative_velocity(md.x);
  results.check("md_x_n", md.x.x());
  results.check("md_x_t", md.x.y());
  results.check("md_x_o", md.x.z());
  results.check("md_u_n", u.x());
  results.check("md_u_t", u.y());
  results.check("md_u_o", u.z());
  results.check("md_objective", p.objective(md.x));
  const SamplingResult brute = minimize_by_sampling(p, 1 << 16);
  results.measure("academic: |x* - brute force| / |x*|", (md.x - brute.x).norm() / md.x.norm(), "",
                  "brute-force minimum over the conic section, 65536 directions");

  const CoulombSolutionSet coulomb = enumerate_coulomb_solutions(p);
  results.check("coulomb_solution_count",
                static_cast<double>(coulomb.isolated.size() + coulomb.continua.size()),
                "isolated solutions + continua found by the quartic enumeration");
  double worst_residual = 0.0;
  bool md_lowest = true;
  for (std::size_t k = 0; k < coulomb.isolated.size() && k < 3; ++k) {
    const Vec3 x = coulomb.isolated[k].x;
    const Vec3 v = p.relative_velocity(x);
    const std::string prefix = "coulomb" + std::to_string(k + 1) + "_";
    results.check(prefix + "x_n", x.x());
    results.check(prefix + "x_t", x.y());
    results.check(prefix + "x_o", x.z());
    results.check(prefix + "u_t", v.y());
    results.check(prefix + "u_o", v.z());
    results.check(prefix + "objective", p.objective(x));
    worst_residual = std::max(worst_residual, coulomb_residual(p, x));
  }
  for (const CoulombSolution& s : coulomb.isolated) {
    md_lowest = md_lowest && p.objective(md.x) < p.objective(s.x);
  }
  results.measure("academic: largest Coulomb residual of the enumerated solutions", worst_residual,
                  "", "coulomb_residual(), zero at a solution");
  results.check("md_most_dissipative", md_lowest,
                "objective of x* below that of every enumerated Coulomb solution");

  check_orthonormal_frame(results, md.x, p.objective(md.x), brute);

  write_figure(args, scale, results, p, md.x, coulomb);
  results.add_file("academic_contour.png", "figure");
}

}  // namespace painleve_rod
