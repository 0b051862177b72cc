// The Painleve rod stepped in time from its critical angle (README.md, "Time stepping").
#include "moreau/harness/stepping.hpp"

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

struct SteppingRun {
  std::string model;
  double mu;
  double slip_after_first_step;  // tip velocity along x after step 1, m/s
  bool converged;                // every step's solver converged
};

SteppingRun run_stepping(const std::string& model, double mu, CsvTable& out) {
  World world = rod_world(kCriticalAngle, mu);
  ImpulseVelocityOptions options;
  options.time_step = kTimeStep;
  options.error_reduction = kErrorReduction;
  options.collision.margin = kContactMargin;
  const auto limits = [](auto solver_options) {
    solver_options.tolerance = 1e-12;
    solver_options.max_iterations = 100000;
    return solver_options;
  };
  std::unique_ptr<ContactSolver> solver;
  if (model == "max_dissipation") {
    solver = std::make_unique<MaxDissipationGaussSeidel>(limits(MdGaussSeidelOptions{}));
  } else {
    options.friction_model = FrictionModel::coulomb;
    solver = std::make_unique<ProjectedGaussSeidel>(limits(PgsOptions{}));
  }
  SteppingRun run{model, mu, 0.0, true};
  out.row(model, mu, 0, -kSlidingSpeed, 0, 0, kCriticalAngle, 0, 0, 0);
  // The contact law constrains the velocity at the end of the step of the material point that
  // touched at its start: v' + omega' x (tip - centre) with the lever of the step's start.
  const RigidBody& rod = world.bodies[1];
  const auto lever_now = [&rod] {
    return Vec3(-0.5 * kRodLength * (rod.orientation * Vec3::UnitX()));
  };
  Vec3 lever = lever_now();
  run_steps(std::make_unique<ImpulseVelocityStepper>(world, options, std::move(solver)), kSteps,
            [&](const Stepper&, const StepReport& report) {
              const long k = report.step - 1;
              run.converged = run.converged && report.solver_stats.converged;
              const Vec3 tip_velocity = rod.linear_velocity + rod.angular_velocity.cross(lever);
              const Vec3 axis = rod.orientation * Vec3::UnitX();
              const Vec3 tip = rod.position - 0.5 * kRodLength * axis;
              if (k == 0) run.slip_after_first_step = tip_velocity.x();
              double r_n = 0.0, r_t = 0.0;
              if (!report.contacts.empty()) {
                r_n = report.impulses(0);
                r_t = report.impulses.segment<2>(1).norm();
              }
              out.row(model, mu, report.time, tip_velocity.x(), tip_velocity.y(), tip.y(),
                      std::atan2(axis.y(), axis.x()), r_n, r_t, report.solver_stats.iterations);
              lever = lever_now();  // the next step's start
            });
  return run;
}

}  // namespace

void run_time_stepping(const ExperimentArguments& args, ExperimentResults& results) {
  CsvTable out(results, args.output_directory, "painleve_stepping.csv",
               {"model", "mu", "time", "tip_velocity_x", "tip_velocity_y", "tip_height", "angle",
                "impulse_n", "impulse_t", "iterations"},
               12);
  const double critical = mu_star(kCriticalAngle);  // 4/3
  std::vector<SteppingRun> runs;
  for (const std::string model : {"max_dissipation", "coulomb"}) {
    for (const double mu : {0.75 * critical, critical, 1.5 * critical}) {
      runs.push_back(run_stepping(model, mu, out));
    }
  }
  for (const SteppingRun& run : runs) {
    results.measure(run.model + ", mu = " + std::to_string(run.mu) +
                        ": tip velocity along x after the first step",
                    run.slip_after_first_step, "m/s",
                    run.converged ? "" : "a solve did not converge");
  }
  results.check("md_sticks_at_mu_star", std::abs(runs[1].slip_after_first_step) <= 1e-9,
                "|tip slip| after step 1 = " + std::to_string(runs[1].slip_after_first_step) +
                    " m/s, mu = mu* = 4/3");
  results.check("md_sticks_above_mu_star", std::abs(runs[2].slip_after_first_step) <= 1e-9,
                "|tip slip| after step 1 = " + std::to_string(runs[2].slip_after_first_step) +
                    " m/s, mu = 2");
  results.check("md_slides_below_mu_star", -runs[0].slip_after_first_step >= 0.5 * kSlidingSpeed,
                "tip velocity after step 1 = " + std::to_string(runs[0].slip_after_first_step) +
                    " m/s, mu = 1");
  results.add_file("painleve_stepping.png", "figure");
}

}  // namespace painleve_rod
