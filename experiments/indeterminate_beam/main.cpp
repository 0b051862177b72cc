// Indeterminate beam, seed 000 Sec. 8.1: a rigid platform on three fixed disks. Classic CD
// (frictionless LCP, seed 000 eq. 21) picks one of infinitely many force splits; which one
// depends on the solver. See README.md for the scene and the choices made.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "moreau/core/error.hpp"
#include "moreau/harness/results.hpp"
#include "moreau/integrator/time_stepper.hpp"

namespace {

using namespace moreau;

// Scene parameters (README.md): the paper gives only L, w = 10 and the 1% drop.
constexpr double kLength = 2.0;          // support spacing L (x = 0, L/2, L)
constexpr double kDiskRadius = 0.1;      // fixed support disks
constexpr double kPlatformHalfLength = 0.5 * kLength + kDiskRadius;  // overhangs the outer disks
constexpr double kPlatformHalfThickness = 0.05;
constexpr double kWeight = 10.0;         // w, seed 000 Sec. 8.1
constexpr double kMass = 1.0;            // with g = w / m
constexpr double kTimeStep = 1e-3;
constexpr long kSteps = 300;             // settles within ~20 steps; the rest proves it stays

World beam_world() {
  World world;
  world.dimension = Dimension::two;
  world.gravity = Vec3(0.0, -kWeight / kMass, 0.0);
  for (int k = 0; k < 3; ++k) {
    RigidBody disk;
    disk.name = "support" + std::to_string(k);
    disk.motion = Motion::fixed;
    disk.position = Vec3(0.5 * kLength * k, 0.0, 0.0);
    disk.shape.geometry = Sphere{kDiskRadius};
    world.add_body(disk);
  }
  RigidBody platform;
  platform.name = "platform";
  platform.mass = kMass;
  const double a = 2 * kPlatformHalfLength, b = 2 * kPlatformHalfThickness;
  platform.inertia_body = Mat3::Identity() * kMass * (a * a + b * b) / 12.0;
  platform.shape.geometry = Box{Vec3(kPlatformHalfLength, kPlatformHalfThickness, kPlatformHalfThickness)};
  // Dropped from 1% of a disk radius above the supports (seed 000 Sec. 8.1).
  platform.position = Vec3(0.5 * kLength, kDiskRadius * 1.01 + kPlatformHalfThickness, 0.0);
  world.add_body(platform);
  return world;
}

struct Outcome {
  std::string method;
  std::vector<double> support_force;  // by support x position: left, middle, right
  SolverStats last_stats;
  double max_speed = 0.0;  // platform speed at the end, to confirm the state is static
  long total_iterations = 0;
};

Outcome run_classic(const std::string& method, const std::string& solver, ContactOrder order) {
  World world = beam_world();
  StepOptions options;
  options.time_step = kTimeStep;
  options.frictional = false;  // seed 000 Sec. 8.1 is frictionless
  // Margin of half a disk radius: the three supports are in the problem from the first step,
  // so their number and order (pair order: support 0, 1, 2) never change.
  options.collision.margin = 0.5 * kDiskRadius;
  options.solver = solver;
  options.solver_options.tolerance = 1e-10;
  options.solver_options.max_iterations = 100000;
  options.solver_options.order = order;
  if (order == ContactOrder::custom) options.solver_options.custom_order = {1, 0, 2};  // middle first
  TimeStepper stepper(world, options);
  Outcome outcome;
  outcome.method = method;
  for (long s = 0; s < kSteps; ++s) {
    const StepReport& report = stepper.step();
    outcome.total_iterations += report.solver_stats.iterations;
    if (!report.solver_stats.converged)
      std::cerr << method << ": step " << report.step << ": solver " << report.solver_stats.solver << " stopped ("
                << to_string(report.solver_stats.termination) << ") at merit " << report.solver_stats.merit << "\n";
  }
  const StepReport& report = stepper.last_report();
  if (report.contacts.size() != 3) throw SimulationError(method + ": expected 3 support contacts at rest");
  outcome.support_force.assign(3, 0.0);
  for (std::size_t i = 0; i < 3; ++i) {
    const int support = report.contacts[i].body_a;  // supports are bodies 0, 1, 2 by x
    outcome.support_force[support] = report.impulses(i) / kTimeStep;  // f = r / dt
  }
  outcome.last_stats = report.solver_stats;
  outcome.max_speed = world.bodies[3].velocity().norm();
  return outcome;
}

double max_relative_deviation(const std::vector<double>& forces, double expected) {
  double worst = 0.0;
  for (double f : forces) worst = std::max(worst, std::abs(f - expected) / expected);
  return worst;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const ExperimentArguments args = ExperimentArguments::parse(argc, argv, "indeterminate_beam");
    ExperimentResults results("indeterminate_beam", args.scale, Reference::load(args.reference_directory));
    const double equal_share = kWeight / 3.0;

    const std::vector<Outcome> outcomes = {
        run_classic("PGS natural order", "pgs", ContactOrder::natural),
        run_classic("PGS middle first", "pgs", ContactOrder::custom),
        run_classic("APGD", "apgd", ContactOrder::natural),
    };
    const Outcome& natural = outcomes[0];
    const Outcome& middle_first = outcomes[1];
    const Outcome& apgd = outcomes[2];

    for (const Outcome& o : outcomes) {
      const double total = o.support_force[0] + o.support_force[1] + o.support_force[2];
      results.measure(o.method + ": total support force", total, "N");
      results.measure(o.method + ": platform speed at the end", o.max_speed, "m/s");
      results.measure(o.method + ": solver iterations over the run", static_cast<double>(o.total_iterations), "");
      results.measure(o.method + ": merit at the last step", o.last_stats.merit, "");
    }
    results.check("pgs_natural_split_deviation", max_relative_deviation(natural.support_force, equal_share),
                  "largest |f_i - w/3| / (w/3) over the three supports");
    results.check("pgs_natural_total", natural.support_force[0] + natural.support_force[1] + natural.support_force[2]);
    results.check("pgs_middle_first_middle", middle_first.support_force[1]);
    results.check("pgs_middle_first_outer", std::max(std::abs(middle_first.support_force[0]), std::abs(middle_first.support_force[2])),
                  "larger of the two outer support forces");
    results.check("apgd_left", apgd.support_force[0]);
    results.check("apgd_middle", apgd.support_force[1]);
    results.check("apgd_right", apgd.support_force[2]);
    results.check("static_at_end", natural.max_speed < 1e-9 && middle_first.max_speed < 1e-9 && apgd.max_speed < 1e-9,
                  "platform speed below 1e-9 m/s at the last step for every method");

    const std::string csv = args.output_directory + "/support_forces.csv";
    std::ofstream out(csv);
    out << "method,support,x,force\n";
    out.precision(17);
    out << "analytic,left,0," << equal_share << "\nanalytic,middle," << 0.5 * kLength << "," << equal_share
        << "\nanalytic,right," << kLength << "," << equal_share << "\n";
    const char* names[3] = {"left", "middle", "right"};
    for (const Outcome& o : outcomes)
      for (int k = 0; k < 3; ++k)
        out << o.method << "," << names[k] << "," << 0.5 * kLength * k << "," << o.support_force[k] << "\n";
    results.add_file("support_forces.csv", "raw");
    results.add_file("support_forces.png", "figure");
    results.write(args.output_directory);
    return results.exit_code();
  } catch (const std::exception& e) {
    std::cerr << "indeterminate_beam: error: " << e.what() << "\n";
    return 2;
  }
}
