// The cost of a single-contact solve (README.md, "Timing").
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

// Single-contact solves per second: the analytic solver, the brute-force sampling minimizer and
// the engine's projected Gauss-Seidel (Coulomb, De Saxce) on one contact, over seeded random
// SPD problems that slide (x0 outside the cone).
void run_timing(const ExperimentArguments& args, const Scale& scale, ExperimentResults& results) {
  std::mt19937 gen(2017);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> unit(0.2, 2.0);
  std::vector<SingleContactProblem> problems;
  while (static_cast<int>(problems.size()) < scale.timing_problems) {
    Eigen::Matrix3d b = Eigen::Matrix3d::NullaryExpr([&]() { return normal(gen); });
    SingleContactProblem p;
    p.a = b * b.transpose() + 0.1 * Mat3::Identity();
    p.b = Vec3(std::abs(normal(gen)), normal(gen), normal(gen));
    p.mu = unit(gen);
    const Vec3 x0 = p.a.ldlt().solve(p.b);
    if (x0.x() > 0.0 && x0.tail<2>().norm() <= p.mu * x0.x()) continue;  // sticking: trivial
    problems.push_back(p);
  }
  using Clock = std::chrono::steady_clock;
  double checksum = 0.0;
  auto rate = [&](int count, auto&& solve) {
    const auto start = Clock::now();
    for (int k = 0; k < count; ++k) checksum += solve(problems[k % problems.size()]);
    return count / std::chrono::duration<double>(Clock::now() - start).count();
  };
  const double analytic = rate(scale.timing_problems, [](const SingleContactProblem& p) {
    return solve_max_dissipation(p).x.x();
  });
  const double brute = rate(scale.timing_problems / 100, [](const SingleContactProblem& p) {
    return minimize_by_sampling(p, 2048).x.x();
  });
  // PGS sees each problem as a one-contact ConeProblem, built before the clock starts.
  PgsOptions options;
  options.tolerance = 1e-10;
  options.max_iterations = 100000;
  options.record_history = false;
  const ProjectedGaussSeidel pgs(options);
  const int pgs_count = scale.timing_problems / 10;
  std::vector<std::unique_ptr<SparseDelassus>> delassus;
  std::vector<ConeProblem> cone_problems(pgs_count);
  for (int k = 0; k < pgs_count; ++k) {
    delassus.push_back(
        std::make_unique<SparseDelassus>(SparseMatrix(MatX(problems[k].a).sparseView()), 3));
    cone_problems[k].delassus = delassus.back().get();
    cone_problems[k].q = -problems[k].b;
    cone_problems[k].mu = VecX::Constant(1, problems[k].mu);
  }
  VecX r(3);
  long pgs_sweeps = 0;
  const auto start = Clock::now();
  for (const ConeProblem& problem : cone_problems) {
    r.setZero();
    pgs_sweeps += pgs.solve(problem, r).iterations;
    checksum += r(0);
  }
  const double pgs_rate = pgs_count / std::chrono::duration<double>(Clock::now() - start).count();
  results.measure("single-contact solves per second: analytic maximum dissipation", analytic, "1/s",
                  "solve_max_dissipation on sliding random SPD problems, one thread");
  results.measure("single-contact solves per second: brute-force sampling (2048 directions)", brute,
                  "1/s", "minimize_by_sampling, the test reference");
  results.measure("single-contact solves per second: PGS, Coulomb (De Saxce), merit 1e-10",
                  pgs_rate, "1/s",
                  "the engine's iterative per-contact solver on the same problems");
  results.measure("PGS sweeps per single-contact solve (mean)",
                  static_cast<double>(pgs_sweeps) / pgs_count, "");
  // Using the results keeps the timed solves from being optimized away.
  volatile double sink = checksum;
  static_cast<void>(sink);
  CsvTable out(results, args.output_directory, "timing.csv", {"solver", "solves_per_second"}, 6);
  out.row("analytic", analytic);
  out.row("brute_force", brute);
  out.row("pgs_coulomb", pgs_rate);
}

}  // namespace painleve_rod
