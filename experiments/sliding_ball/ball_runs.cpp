#include "ball_runs.hpp"

#include <ctime>

#include "moreau/harness/stepping.hpp"
#include "moreau/integrator/theta_stepper.hpp"
#include "moreau/model/shape.hpp"

namespace sliding_ball {

using namespace moreau;

namespace {
// Dumont Fig. 5-7 show the convergence at the "5th iteration" (time step 5); we keep it and
// the last step.
constexpr long kHistoryStep = 5;
}  // namespace

Ball find_ball(const Scene& scene) {
  const World& world = scene.world;
  Ball ball;
  for (int b = 0; b < static_cast<int>(world.bodies.size()); ++b)
    if (world.bodies[b].name == "ball") ball.body = b;
  if (ball.body < 0 || world.bodies.size() != 2 || scene.scheme != "theta")
    throw InputError(kScene + ": expected a theta-scheme scene of a body \"ball\" and a plane");
  const RigidBody& body = world.bodies[ball.body];
  ball.radius = std::get<Sphere>(body.shape.geometry).radius;
  ball.speed = body.linear_velocity.x();
  ball.mu = world.friction.get(body.material, world.bodies[1 - ball.body].material);
  if (ball.speed != kSpeed || world.gravity.norm() != kGravity)
    throw InputError(kScene + ": v0 and g differ from this program's analysis");
  return ball;
}

Outcome run(const Scene& scene, LocalMethod method, double alpha, Dimension dimension) {
  World world = scene.world;
  const int b = find_ball(scene).body;
  const double radius = find_ball(scene).radius;
  if (dimension == Dimension::two) {
    world.dimension = Dimension::two;
    RigidBody& body = world.bodies[b];
    const MassProperties disk = mass_properties(Sphere{radius}, 1.0, Dimension::two);
    body.inertia_body = disk.inertia * (body.mass / disk.mass);
  }
  const long steps = scene.steps;
  NlgsOptions nlgs = scene.solver_options.get<NlgsOptions>();
  nlgs.method = method;
  nlgs.rho_factor = alpha;
  nlgs.time_step = scene.time_step();  // eps_glob with forces, as Dumont
  auto stepper = std::make_unique<ThetaStepper>(world, scene.options_of<ThetaOptions>("theta"),
                                                std::make_unique<NlgsSolver>(nlgs));

  Outcome out;
  out.method = method;
  out.alpha = alpha;
  out.label =
      to_string(method) + (alpha > 0.0 ? " alpha=" + std::to_string(alpha).substr(0, 3) : "");
  const std::clock_t start = std::clock();
  run_steps(std::move(stepper), steps, [&](const Stepper&, const StepReport& report) {
    const long s = report.step;
    const RigidBody& body = world.bodies[b];
    // Velocity of the material point touching the plane: v + omega x (-R e_y).
    const Vec3 contact_point =
        body.linear_velocity + body.angular_velocity.cross(Vec3(0.0, -radius, 0.0));
    Sample sample{report.time,
                  body.linear_velocity.x(),
                  -body.angular_velocity.z() * radius,
                  contact_point.norm(),
                  0.0,
                  0};
    if (const NlgsStats* terms = nlgs_stats(report)) {
      sample.epsilon_glob = terms->epsilon_glob;
      sample.iterations = terms->common.iterations;
      out.newton_unconverged += terms->newton_unconverged;
      if (!terms->common.converged) ++out.unconverged_steps;
      if (s == kHistoryStep || s == steps) out.histories.emplace_back(s, terms->history);
      out.last = *terms;
    }
    out.solve_cpu_seconds += report.solve_cpu_seconds;
    out.samples.push_back(sample);
  });
  out.cpu_seconds = static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
  return out;
}

}  // namespace sliding_ball
