// Indeterminate beam, Olsen & Kamrin Sec. 8.1: a rigid platform on three fixed disks. Classic CD
// (frictionless LCP, Olsen & Kamrin eq. 21) picks one of infinitely many force splits; which one
// depends on the solver. Compatible CD (Alg. 1) and a stiff penalty DEM pick the elastic one.
// See README.md for the scene and the choices made.
#include <cmath>
#include <iostream>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "moreau/core/error.hpp"
#include "moreau/dem/dem_stepper.hpp"
#include "moreau/harness/experiment.hpp"
#include "moreau/harness/stepping.hpp"
#include "moreau/integrator/semi_implicit_euler.hpp"
#include "moreau/solver/projected_gauss_seidel.hpp"
#include "moreau/solver/solver_registry.hpp"

namespace {

using namespace moreau;

// Scene parameters (README.md): the paper gives only L, w = 10 and the 1% drop.
constexpr double kLength = 2.0;      // support spacing L (x = 0, L/2, L)
constexpr double kDiskRadius = 0.1;  // fixed support disks
constexpr double kPlatformHalfLength = 0.5 * kLength + kDiskRadius;  // overhangs the outer disks
constexpr double kPlatformHalfThickness = 0.05;
constexpr double kWeight = 10.0;  // w, Olsen & Kamrin Sec. 8.1
constexpr double kMass = 1.0;     // with g = w / m
constexpr double kTimeStep = 1e-3;
constexpr long kSteps = 300;  // settles within ~20 steps; the rest shows it stays
// DEM: Young's modulus of the outer disks; the platform is rigid. Overlaps are ~1e-8 of the
// disk radius, stiff enough that geometry changes are far below the 1e-3 check.
constexpr double kDemModulus = 1e9;

enum class Stiffness { uniform, stiff_middle };  // k~ = (1, 1, 1) or (1, 3, 1), Sec. 8.1.2

World beam_world(Stiffness stiffness) {
  World world;
  world.dimension = Dimension::two;
  world.gravity = Vec3(0.0, -kWeight / kMass, 0.0);
  world.materials.clear();
  const double infinity = std::numeric_limits<double>::infinity();
  // Rigid platform: the contact stiffness is the disk's alone, so k~ is set by the disks.
  world.add_material({"platform", 1000.0, infinity, 0.0, infinity, 0.0});
  world.add_material({"outer support", 1000.0, kDemModulus, 0.0, 1.0, 0.0});
  const double middle = stiffness == Stiffness::uniform ? 1.0 : 3.0;
  world.add_material({"middle support", 1000.0, middle * kDemModulus, 0.0, middle, 0.0});
  for (int k = 0; k < 3; ++k) {
    RigidBody disk;
    disk.name = "support" + std::to_string(k);
    disk.motion = Motion::fixed;
    disk.position = Vec3(0.5 * kLength * k, 0.0, 0.0);
    disk.shape.geometry = Sphere{kDiskRadius};
    disk.material = k == 1 ? 2 : 1;
    world.add_body(disk);
  }
  RigidBody platform;
  platform.name = "platform";
  platform.mass = kMass;
  const double a = 2 * kPlatformHalfLength, b = 2 * kPlatformHalfThickness;
  platform.inertia_body = Mat3::Identity() * kMass * (a * a + b * b) / 12.0;
  platform.shape.geometry =
      Box{Vec3(kPlatformHalfLength, kPlatformHalfThickness, kPlatformHalfThickness)};
  platform.material = 0;
  // Dropped from 1% of a disk radius above the supports (Olsen & Kamrin Sec. 8.1).
  platform.position = Vec3(0.5 * kLength, kDiskRadius * 1.01 + kPlatformHalfThickness, 0.0);
  world.add_body(platform);
  return world;
}

struct Outcome {
  std::string method;
  std::vector<double> support_force = std::vector<double>(3, 0.0);  // left, middle, right
  std::vector<double> compatible_force = std::vector<double>(3, 0.0);
  double final_speed = 0.0;  // platform speed at the end: the forces are read when static
  long total_iterations = 0;
  double last_merit = 0.0;
  NoTensionTrussStats compatible_stats;
};

Outcome run_classic(const std::string& method, const std::string& solver, ContactOrder order,
                    Stiffness stiffness) {
  World world = beam_world(stiffness);
  SemiImplicitEulerOptions options;
  options.time_step = kTimeStep;
  options.frictional = false;  // Olsen & Kamrin Sec. 8.1 is frictionless
  // Margin of half a disk radius: the three supports are in the problem from the first step,
  // so their number and order (pair order: support 0, 1, 2) never change.
  options.collision.margin = 0.5 * kDiskRadius;
  SolverOptions common;
  common.tolerance = 1e-10;
  common.max_iterations = 100000;
  AnySolverOptions solver_options = default_solver_options(solver, common);
  // The visiting order is PGS's (APGD runs in natural order).
  if (auto* pgs = solver_options.get_if<PgsOptions>()) {
    pgs->order = order;
    if (order == ContactOrder::custom) pgs->custom_order = {1, 0, 2};  // middle first
  }
  options.compatible.enabled = true;
  options.compatible.law = ContactLaw::hookean;
  Outcome outcome;
  outcome.method = method;
  StepReport report;  // of the last step, where the forces are read
  run_steps(std::make_unique<SemiImplicitEulerStepper>(world, options,
                                                       make_solver(solver, solver_options)),
            kSteps, [&](const Stepper&, const StepReport& step) {
              outcome.total_iterations += step.solver_stats.iterations;
              if (!step.solver_stats.converged)
                std::cerr << method << ": step " << step.step << ": solver "
                          << step.solver_stats.solver << " stopped ("
                          << to_string(step.solver_stats.termination) << ") at merit "
                          << step.solver_stats.merit << "\n";
              if (step.step == kSteps) report = step;
            });
  if (report.contacts.size() != 3)
    throw SimulationError(method + ": expected 3 support contacts at rest");
  for (std::size_t i = 0; i < 3; ++i) {
    const int support = report.contacts[i].body_a;  // supports are bodies 0, 1, 2 by x
    outcome.support_force[support] = report.impulses(i) / kTimeStep;  // f = r / dt
    outcome.compatible_force[support] = compatible_result(report).impulses(i) / kTimeStep;
  }
  outcome.last_merit = report.solver_stats.merit;
  outcome.compatible_stats = compatible_result(report).stats;
  outcome.final_speed = world.bodies[3].velocity().norm();
  return outcome;
}

Outcome run_dem(Stiffness stiffness) {
  World world = beam_world(stiffness);
  DemOptions options;
  options.law.law = NormalLaw::hookean;
  options.law.tangential = false;  // frictionless, as the CD runs
  // Half the stability estimate of the scheme (dem_stepper.hpp); critical damping, e_n = 0.
  options.time_step = 1.0;
  options.time_step = 0.5 * estimate_stable_time_step(world, options);
  SteppingRun run(std::make_unique<DemStepper>(world, options));
  const auto& dem = static_cast<const DemStepper&>(run.stepper());
  // Settle: run until the platform is at rest to machine precision of the elastic forces.
  const double simulated = 0.3;  // s; the drop takes ~0.014 s, damping acts within ~1e-3 s
  run.advance_while([&](const Stepper&) { return world.time < simulated; });
  Outcome outcome;
  outcome.method = "DEM (Hookean)";
  for (const DemContact& c : dem.contacts()) outcome.support_force[c.body_a] = c.elastic_force;
  outcome.final_speed = world.bodies[3].velocity().norm();
  outcome.total_iterations = dem.steps_taken();
  return outcome;
}

double sum(const std::vector<double>& v) { return v[0] + v[1] + v[2]; }

double max_relative_deviation(const std::vector<double>& forces, double expected) {
  double worst = 0.0;
  for (double f : forces) worst = std::max(worst, std::abs(f - expected) / expected);
  return worst;
}

// The five runs of the experiment.
struct Runs {
  Outcome natural, middle_first, apgd, stiff_middle, dem;
};

// The solver statistics of every run (README.md, "Measures").
void measure_runs(ExperimentResults& results, const Runs& r) {
  for (const Outcome* o : {&r.natural, &r.middle_first, &r.apgd, &r.stiff_middle}) {
    results.measure(o->method + ": solver iterations over the run",
                    static_cast<double>(o->total_iterations), "");
    results.measure(o->method + ": merit at the last step", o->last_merit, "");
    results.measure(o->method + ": compatible CD augmented-Lagrangian iterations",
                    o->compatible_stats.outer_iterations, "");
    results.measure(o->method + ": compatible CD APGD iterations (all subproblems)",
                    o->compatible_stats.inner_iterations, "");
    results.measure(o->method + ": compatible CD equilibrium residual",
                    o->compatible_stats.equilibrium_residual, "");
  }
  results.measure("DEM: steps to settle", static_cast<double>(r.dem.total_iterations), "");
  results.measure("DEM: platform speed at the end", r.dem.final_speed, "m/s");
}

// Olsen & Kamrin Sec. 8.1: classic CD's splits depend on the solver; compatible CD and the DEM
// pick the elastic one.
void check_supports(ExperimentResults& results, const Runs& r) {
  const Outcome& natural = r.natural;
  const Outcome& middle_first = r.middle_first;
  const Outcome& apgd = r.apgd;
  const Outcome& stiff_middle = r.stiff_middle;
  const Outcome& dem = r.dem;
  const double equal_share = kWeight / 3.0;
  results.check("pgs_natural_split_deviation",
                max_relative_deviation(natural.support_force, equal_share),
                "largest |f_i - w/3| / (w/3) over the three supports");
  results.check("pgs_natural_total", sum(natural.support_force));
  results.check("pgs_middle_first_middle", middle_first.support_force[1]);
  results.check(
      "pgs_middle_first_outer",
      std::max(std::abs(middle_first.support_force[0]), std::abs(middle_first.support_force[2])),
      "larger of the two outer support forces");
  const char* side[3] = {"left", "middle", "right"};
  for (int k = 0; k < 3; ++k) {
    results.check(std::string("apgd_") + side[k], apgd.support_force[k]);
    results.check(std::string("compatible_after_pgs_") + side[k], natural.compatible_force[k],
                  "post-processing of PGS in natural order");
    results.check(std::string("compatible_after_apgd_") + side[k], apgd.compatible_force[k]);
    results.check(std::string("compatible_stiff_middle_") + side[k],
                  stiff_middle.compatible_force[k]);
    results.check(std::string("dem_stiff_middle_") + side[k], dem.support_force[k],
                  "elastic force at rest");
  }
  results.check("static_at_end",
                natural.final_speed < 1e-9 && middle_first.final_speed < 1e-9 &&
                    apgd.final_speed < 1e-9 && stiff_middle.final_speed < 1e-9 &&
                    dem.final_speed < 1e-9,
                "platform speed below 1e-9 m/s at the last step for every method");
}

// The support forces of every method beside the analytic splits, for the figure.
void write_support_forces(ExperimentResults& results, const std::string& directory, const Runs& r) {
  const double equal_share = kWeight / 3.0;
  const char* side[3] = {"left", "middle", "right"};
  CsvTable out(results, directory, "support_forces.csv",
               {CsvTable::quoted("method"), "support", "x", "force"});
  auto write = [&](const std::string& method, const std::vector<double>& forces) {
    for (int k = 0; k < 3; ++k) out.row(method, side[k], 0.5 * kLength * k, forces[k]);
  };
  write("analytic, uniform", {equal_share, equal_share, equal_share});
  write("PGS natural order", r.natural.support_force);
  write("PGS middle first", r.middle_first.support_force);
  write("APGD", r.apgd.support_force);
  write("compatible CD after PGS", r.natural.compatible_force);
  write("compatible CD after APGD", r.apgd.compatible_force);
  write("analytic, k~ = (1, 3, 1)", {2.0, 6.0, 2.0});
  write("compatible CD, k~ = (1, 3, 1)", r.stiff_middle.compatible_force);
  write("DEM Hookean, k~ = (1, 3, 1)", r.dem.support_force);
}

}  // namespace

int main(int argc, char** argv) {
  return run_experiment(
      argc, argv, "indeterminate_beam",
      [](const ExperimentArguments& args, ExperimentResults& results) {
        const Runs runs{
            run_classic("PGS natural order", "pgs", ContactOrder::natural, Stiffness::uniform),
            run_classic("PGS middle first", "pgs", ContactOrder::custom, Stiffness::uniform),
            run_classic("APGD", "apgd", ContactOrder::natural, Stiffness::uniform),
            run_classic("APGD, k~ = (1, 3, 1)", "apgd", ContactOrder::natural,
                        Stiffness::stiff_middle),
            run_dem(Stiffness::stiff_middle)};
        measure_runs(results, runs);
        check_supports(results, runs);
        write_support_forces(results, args.output_directory, runs);
        results.add_file("support_forces.png", "figure");
        return RunEnd::checked;
      });
}
