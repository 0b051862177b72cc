#include "methods.hpp"

#include <algorithm>
#include <chrono>
#include <iostream>
#include <limits>

#include "moreau/dem/dem_stepper.hpp"
#include "moreau/harness/stepping.hpp"
#include "moreau/integrator/semi_implicit_euler.hpp"
#include "moreau/solver/projected_gauss_seidel.hpp"
#include "moreau/solver/solver_registry.hpp"

namespace cannonball {

using namespace moreau;
using Clock = std::chrono::steady_clock;

namespace {

std::vector<ForceRecord> cd_forces(const StepReport& report, const VecX& impulses) {
  std::vector<ForceRecord> out;
  for (std::size_t i = 0; i < report.contacts.size(); ++i) {
    const double f = impulses(static_cast<Eigen::Index>(i)) / kCdTimeStep;
    if (f != 0.0)
      out.push_back({report.contacts[i].body_a, report.contacts[i].body_b, report.contacts[i].point,
                     f * report.contacts[i].normal});
  }
  return out;
}

}  // namespace

CdRun run_cd(int base, Variant variant, const std::string& solver, long steps, double tolerance,
             double truss_tolerance, const std::vector<int>& base_bodies,
             bool compare_truss_solvers, const ClassicSetting& setting) {
  std::vector<int> ignored;
  World world = pyramid_world(base, variant, ignored);
  SemiImplicitEulerOptions options;
  options.time_step = kCdTimeStep;
  options.frictional = false;
  options.collision.margin = 0.1 * kRadius;  // nearest neighbours only (next ones are 0.41 d away)
  SolverOptions common;
  common.tolerance = tolerance;
  common.max_iterations = 200000;
  common.record_history = false;
  common.warm_start = setting.warm_start;
  AnySolverOptions solver_options = default_solver_options(solver, common);
  // The visiting order is PGS's (APGD has none).
  if (auto* pgs = solver_options.get_if<PgsOptions>()) {
    pgs->order = setting.order;
    pgs->seed = setting.seed;
  }
  CdRun run;
  SteppingRun stepping(std::make_unique<SemiImplicitEulerStepper>(
                           world, options, make_solver(solver, solver_options)),
                       [&run](const Stepper&, const StepReport& step) {
                         run.iterations += step.solver_stats.iterations;
                       });
  auto& stepper = static_cast<SemiImplicitEulerStepper&>(stepping.stepper());
  const auto start = Clock::now();
  stepping.advance(std::max(steps - 1, 0L));
  const double classic_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  World before_last_step = world;
  // Forces are read at the last step, with the compatible post-processing switched on there.
  CompatibleOptions compatible;
  compatible.enabled = true;
  compatible.law =
      variant == Variant::uniform_hertzian ? ContactLaw::hertzian : ContactLaw::hookean;
  compatible.truss.equilibrium_tolerance = truss_tolerance;
  compatible.truss.optimality_tolerance = truss_tolerance;
  // The interior point method: 8 to 2,400 times faster than the augmented Lagrangian at the
  // quick scale and the same forces to 4e-10 (compared below on every variant).
  compatible.truss.method = TrussMethod::interior_point;
  stepper.set_compatible(compatible);
  stepping.advance(1);
  const StepReport& report = stepping.last_report();
  run.last_step_solver_seconds = report.solver_stats.wall_seconds;
  if (!report.solver_stats.converged)
    std::cerr << solver << ": last step stopped (" << to_string(report.solver_stats.termination)
              << ") at merit " << report.solver_stats.merit << "\n";
  run.truss = compatible_result(report).stats;
  run.classic.name = solver == "apgd" ? "APGD" : "PGS";
  run.classic.forces = cd_forces(report, report.impulses);
  run.classic.floor = floor_reaction(run.classic.forces, world, base_bodies);
  run.classic.seconds = classic_seconds;
  run.compatible.name = "compatible CD after " + run.classic.name;
  run.compatible.forces = cd_forces(report, compatible_result(report).impulses);
  run.compatible.floor = floor_reaction(run.compatible.forces, world, base_bodies);
  run.compatible.seconds = compatible_result(report).stats.wall_seconds;
  if (compare_truss_solvers) {
    SemiImplicitEulerStepper probe(before_last_step, options, make_solver(solver, solver_options));
    compatible.truss.method = TrussMethod::augmented_lagrangian;
    probe.set_compatible(compatible);
    const StepReport& alm = probe.step();
    run.augmented_lagrangian = compatible_result(alm).stats;
    run.solver_difference =
        compatible_result(alm).impulses.size() == compatible_result(report).impulses.size()
            ? (compatible_result(alm).impulses - compatible_result(report).impulses).norm() /
                  compatible_result(report).impulses.norm()
            : std::numeric_limits<double>::infinity();
  }
  for (const RigidBody& b : world.bodies)
    run.final_speed = std::max(run.final_speed, b.linear_velocity.norm());
  return run;
}

DemRun run_dem(int base, Variant variant, const std::vector<int>& base_bodies) {
  std::vector<int> ignored;
  World world = pyramid_world(base, variant, ignored);
  DemOptions options;
  options.law.law = variant == Variant::uniform_hertzian ? NormalLaw::hertzian : NormalLaw::hookean;
  options.law.damping_ratio = 1.0;  // gamma = 2 sqrt(k m), e_n = 0
  options.law.tangential = false;   // frictionless, as the CD runs
  DemRun run;
  options.time_step = 1.0;
  run.stable_estimate = estimate_stable_time_step(world, options);
  // The published 5e-7 s where it is stable for our stiffness; otherwise 90% of the estimate.
  options.time_step = std::min(kPublishedDemStep, 0.9 * run.stable_estimate);
  run.time_step = options.time_step;
  SteppingRun stepping(std::make_unique<DemStepper>(world, options));
  const auto& dem = static_cast<const DemStepper&>(stepping.stepper());
  // Settled when the floor reaction has stopped changing: checked every 1e-3 s of simulated
  // time, to 1e-10 relative, after the top layer has had time to land.
  const long check = static_cast<long>(std::ceil(1e-3 / options.time_step));
  VecX previous;
  const auto start = Clock::now();
  for (;;) {
    stepping.advance(check);
    std::vector<ForceRecord> forces;
    for (const DemContact& c : dem.contacts())
      forces.push_back({c.body_a, c.body_b, c.point, c.elastic_force * c.normal});
    const VecX floor = floor_reaction(forces, world, base_bodies);
    const double change = previous.size() == floor.size() ? relative_error(floor, previous) : 1.0;
    const bool settled = change < 1e-10;
    previous = floor;
    // A progress line every 5 ms of simulated time: the published-scale run takes minutes.
    if (dem.steps_taken() % (5 * check) == 0)
      std::cerr << "   DEM t = " << world.time << " s, floor change " << change << "\n";
    if ((settled && world.time > 0.02) || world.time > 1.0) {
      run.result.forces = std::move(forces);
      run.result.floor = floor;
      break;
    }
  }
  run.result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  run.result.name = "DEM";
  run.steps = dem.steps_taken();
  run.steps_per_second = run.steps / run.result.seconds;
  run.final_speed = dem.max_speed();
  return run;
}

namespace {

// CHOLMOD timings of the interior point truss solve: per factorization of the
// normal equations and per triangular solve, and the symbolic analysis.
void measure_truss_timings(ExperimentResults& results, const std::string& label,
                           const std::string& name, const NoTensionTrussStats& truss) {
  const std::string at = label + ": compatible CD after " + name + ", ";
  results.measure(at + "time per CHOLMOD factorization",
                  truss.factorization_seconds / std::max(1, truss.factorizations), "s");
  results.measure(at + "time per CHOLMOD solve", truss.solve_seconds / std::max(1, truss.solves),
                  "s");
  results.measure(at + "CHOLMOD symbolic analysis", truss.analysis_seconds, "s");
  results.measure(at + "forming the normal matrices", truss.normal_matrix_seconds, "s");
}

}  // namespace

void measure_costs(ExperimentResults& results, const std::string& label, const DemRun& dem,
                   const CdRun& apgd, const CdRun& pgs, long cd_steps) {
  results.measure(label + ": DEM time step", dem.time_step, "s");
  results.measure(label + ": DEM stability estimate", dem.stable_estimate, "s");
  results.measure(label + ": DEM steps to settle", static_cast<double>(dem.steps), "");
  results.measure(label + ": DEM steps per second", dem.steps_per_second, "1/s");
  results.measure(label + ": DEM wall time", dem.result.seconds, "s");
  for (const CdRun* run : {&apgd, &pgs}) {
    results.measure(
        label + ": " + run->classic.name + " wall time (" + std::to_string(cd_steps) + " steps)",
        run->classic.seconds, "s");
    results.measure(label + ": " + run->classic.name + " iterations over the run",
                    static_cast<double>(run->iterations), "");
    results.measure(label + ": " + run->classic.name + " solve of the last step",
                    run->last_step_solver_seconds, "s");
    results.measure(label + ": compatible CD after " + run->classic.name + " wall time",
                    run->truss.wall_seconds, "s");
    results.measure(
        label + ": compatible CD after " + run->classic.name + " interior point Newton steps",
        run->truss.inner_iterations, "");
    results.measure(label + ": compatible CD after " + run->classic.name + " equilibrium residual",
                    run->truss.equilibrium_residual, "");
    measure_truss_timings(results, label, run->classic.name, run->truss);
  }
}

}  // namespace cannonball
