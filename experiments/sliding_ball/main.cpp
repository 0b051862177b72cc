// Sliding ball, Dumont Sec. 4.1: a ball launched without spin on a plane slides,
// friction spins it up, and it rolls without sliding from t* = 2 v0 / (7 mu g) on at 5/7 v0.
// The four NLGS local solvers (SBP, EBP, SAL, EAL) run the same scene with the theta-method
// (theta_stepper.hpp). See README.md for the scene and the choices made.
#include <cmath>
#include <ctime>
#include <iostream>
#include <string>
#include <vector>

#include "moreau/harness/results.hpp"
#include "moreau/harness/table.hpp"
#include "moreau/integrator/theta_stepper.hpp"
#include "moreau/io/scene.hpp"
#include "moreau/model/shape.hpp"
#include "moreau/nlgs/nlgs_solver.hpp"

namespace {

using namespace moreau;

// The scene of Dumont Sec. 4.1 (ball, plane, mu, v0, dt, the 2000 steps of Table 1, eps_glob
// <= 1e-10) is scenes/sliding_ball.json, which `moreau run` runs with NLGS-EAL; this program
// runs it with each local solver.
const std::string kScene = std::string(MOREAU_SCENES_DIR) + "/sliding_ball.json";
constexpr double kGravity = 9.81;  // m/s^2, for the analytic t*; the scene's |gravity| is checked
constexpr double kSpeed = 1.5;     // m/s, for kRollingSlip; the scene's v0 is checked
// Rolling starts in the first step whose contact-point slip falls below this. Sliding reduces
// the slip by 3.5 mu g dt = 2.4e-3 m/s per step and the solver leaves ~1e-10 m/s, so any
// threshold between those picks the same step; 1e-6 v0 sits in the middle on a log scale.
constexpr double kRollingSlip = 1e-6 * kSpeed;
// Dumont Fig. 5-7 show the convergence at the "5th iteration" (time step 5); we keep it and
// the last step.
constexpr long kHistoryStep = 5;

const LocalMethod kMethods[] = {LocalMethod::sbp, LocalMethod::sal, LocalMethod::ebp,
                                LocalMethod::eal};

struct Sample {
  double time, speed, rolling_speed, slip, epsilon_glob;
  int iterations;
};

struct Outcome {
  LocalMethod method;
  double alpha = 0.0;  // rho = alpha rho_bar; 0: the method's default of Dumont
  std::string label;
  std::vector<Sample> samples;
  std::vector<std::pair<long, std::vector<NlgsIterate>>> histories;
  NlgsStats last;
  long unconverged_steps = 0;
  long newton_unconverged = 0;
  double cpu_seconds = 0.0;        // whole run: detection, solve, update
  double solve_cpu_seconds = 0.0;  // contact solves only
};

// The ball of the scene, its radius, and mu between ball and plane; throws when the scene
// is not the one this program's analysis assumes.
struct Ball {
  int body = -1;
  double radius = 0.0, speed = 0.0, mu = 0.0;
};
Ball find_ball(const Scene& scene) {
  const World& world = scene.world;
  Ball ball;
  for (int b = 0; b < static_cast<int>(world.bodies.size()); ++b)
    if (world.bodies[b].name == "ball") ball.body = b;
  if (ball.body < 0 || world.bodies.size() != 2 || scene.scheme != Scheme::theta)
    throw InputError(kScene + ": expected a theta-scheme scene of a body \"ball\" and a plane");
  const RigidBody& body = world.bodies[ball.body];
  ball.radius = std::get<Sphere>(body.shape.geometry).radius;
  ball.speed = body.linear_velocity.x();
  ball.mu = world.friction.get(body.material, world.bodies[1 - ball.body].material);
  if (ball.speed != kSpeed || world.gravity.norm() != kGravity)
    throw InputError(kScene + ": v0 and g differ from this program's analysis");
  return ball;
}

// dimension two: the same scene with a disk (a 2D world, inertia m r^2 / 2, same mass)
// instead of the ball.
Outcome run(const Scene& scene, LocalMethod method, double alpha,
            Dimension dimension = Dimension::three) {
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
  NlgsOptions nlgs = std::get<NlgsOptions>(scene.solver_options);
  nlgs.method = method;
  nlgs.rho_factor = alpha;
  nlgs.time_step = scene.time_step();  // eps_glob with forces, as Dumont
  ThetaStepper stepper(world, scene.theta, std::make_unique<NlgsSolver>(nlgs));

  Outcome out;
  out.method = method;
  out.alpha = alpha;
  out.label =
      to_string(method) + (alpha > 0.0 ? " alpha=" + std::to_string(alpha).substr(0, 3) : "");
  const std::clock_t start = std::clock();
  for (long s = 1; s <= steps; ++s) {
    const StepReport& report = stepper.step();
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
    if (report.nlgs) {
      sample.epsilon_glob = report.nlgs->epsilon_glob;
      sample.iterations = report.nlgs->common.iterations;
      out.newton_unconverged += report.nlgs->newton_unconverged;
      if (!report.nlgs->common.converged) ++out.unconverged_steps;
      if (s == kHistoryStep || s == steps) out.histories.emplace_back(s, report.nlgs->history);
      out.last = *report.nlgs;
    }
    out.solve_cpu_seconds += report.solve_cpu_seconds;
    out.samples.push_back(sample);
  }
  out.cpu_seconds = static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
  return out;
}

// Rolling time (first step end with slip below kRollingSlip, NaN if none) and the largest
// relative slip |v - R omega| / v from then on (NaN when the ball never rolls).
std::pair<double, double> rolling(const Outcome& o) {
  double t_star = std::nan("");
  double worst = 0.0;
  for (const Sample& s : o.samples) {
    if (std::isnan(t_star) && s.slip <= kRollingSlip) t_star = s.time;
    if (!std::isnan(t_star)) worst = std::max(worst, std::abs(s.speed - s.rolling_speed) / s.speed);
  }
  return {t_star, std::isnan(t_star) ? std::nan("") : worst};
}

void write_trajectory(CsvTable& trajectory, const std::string& label, const Outcome& o) {
  for (const Sample& s : o.samples)
    trajectory.row(label, s.time, s.speed, s.rolling_speed, s.slip, s.iterations, s.epsilon_glob);
}

// Diagnostic, not a check and not the paper's scene: SBP and SAL at the published alpha = 0.6 on
// a 2D disk. The stick-phase Uzawa map of SBP/SAL has the factor 1 - alpha W_tt / W_nn on the
// tangential impulse (rho W_nn = alpha, Dumont eq. 21 and 35 with rho_bar = m / dt); it
// contracts only for W_tt / W_nn < 2 / alpha = 3.33. A solid sphere has W_tt / W_nn = 1 + m r^2 /
// I = 3.5 (factor -1.1, repelling); a disk has 3 (factor -0.8), so at the same alpha it must
// roll, from t* = v0 / (3 mu g) at 2/3 v0.
void disk_diagnostic(const Scene& scene, ExperimentResults& results, CsvTable& trajectory) {
  const std::string note = "2D disk, diagnostic run, not checked";
  const double t_star = kSpeed / (3.0 * find_ball(scene).mu * kGravity);
  results.measure("disk: analytic rolling time v0 / (3 mu g)", t_star, "s", note);
  results.measure("disk: analytic rolling step", t_star / scene.time_step(), "", note);
  results.measure("disk: analytic rolling speed 2/3 v0", 2.0 / 3.0 * kSpeed, "m/s", note);
  for (const LocalMethod method : {LocalMethod::sbp, LocalMethod::sal}) {
    const Outcome o = run(scene, method, 0.0, Dimension::two);
    const std::string m = "disk " + o.label;
    write_trajectory(trajectory, m, o);
    results.measure(m + ": rolling time", rolling(o).first, "s", note);
    results.measure(m + ": speed after step 2000", o.samples.back().speed, "m/s", note);
    results.measure(m + ": NLGS iterations at step 2000", o.last.common.iterations, "", note);
    results.measure(m + ": eps_glob at step 2000", o.last.epsilon_glob, "", note);
    results.measure(m + ": steps where NLGS stopped before eps_glob <= 1e-10",
                    static_cast<double>(o.unconverged_steps), "", note);
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const ExperimentArguments args = ExperimentArguments::parse(argc, argv, "sliding_ball");
    ExperimentResults results("sliding_ball", args.scale,
                              Reference::load(args.reference_directory));

    const Scene scene = load_scene(kScene);
    const Ball ball = find_ball(scene);
    const double steps = static_cast<double>(scene.steps);
    std::vector<Outcome> outcomes;
    for (const LocalMethod method : kMethods) outcomes.push_back(run(scene, method, 0.0));
    // Not the paper's setting and not checked: SBP and SAL with alpha = 0.5, below the bound
    // 2 / 3.5 = 0.57 under which their Uzawa step also contracts in the tangential directions of a
    // sphere contact (W_tt = 3.5 W_nn, README.md), to show where the default 0.6 fails.
    for (const LocalMethod method : {LocalMethod::sbp, LocalMethod::sal})
      outcomes.push_back(run(scene, method, 0.5));

    CsvTable trajectory(
        results, args.output_directory, "trajectory.csv",
        {"method", "time", "speed", "rolling_speed", "slip", "iterations", "epsilon_glob"}, 12);
    CsvTable convergence(results, args.output_directory, "convergence.csv",
                         {"method", "step", "iteration", "motion", "projection", "bipotential",
                          "penetration", "epsilon_glob"},
                         12);

    int worst_newton_iterations = 0,
        best_standard_iterations = common_options(scene.solver_options).max_iterations;
    for (const Outcome& o : outcomes) {
      const std::string m = o.label;
      write_trajectory(trajectory, m, o);
      for (const auto& [step, history] : o.histories)
        for (const NlgsIterate& it : history)
          convergence.row(m, step, it.iteration, it.terms.motion, it.terms.projection,
                          it.terms.bipotential, it.terms.penetration, it.epsilon_glob);
      const auto [t_star, worst_slip_ratio] = rolling(o);
      if (o.alpha > 0.0) {
        results.measure(m + ": rolling time", t_star, "s", "diagnostic run, not checked");
        results.measure(m + ": speed after step 2000", o.samples.back().speed, "m/s",
                        "diagnostic run, not checked");
        results.measure(m + ": NLGS iterations at step 2000", o.last.common.iterations, "",
                        "diagnostic run, not checked");
        results.measure(m + ": steps where NLGS stopped before eps_glob <= 1e-10",
                        static_cast<double>(o.unconverged_steps), "",
                        "diagnostic run, not checked");
        continue;
      }
      const int iterations = o.last.common.iterations;
      results.check(m + "_rolling_time", t_star,
                    "end time of the first step whose contact-point slip is below 1e-6 v0 (s)");
      results.check(m + "_final_velocity", o.samples.back().speed,
                    "ball speed after step 2000 (m/s)");
      results.check(m + "_rolling_after_t_star", worst_slip_ratio,
                    "largest |v - R omega| / v over the steps from t* on");
      results.check(m + "_iterations_last_step", static_cast<double>(iterations),
                    "NLGS iterations of step 2000 to eps_glob <= 1e-10");
      if (o.method == LocalMethod::ebp || o.method == LocalMethod::eal)
        worst_newton_iterations = std::max(worst_newton_iterations, iterations);
      else
        best_standard_iterations = std::min(best_standard_iterations, iterations);

      results.measure(m + ": eps_glob at step 2000", o.last.epsilon_glob, "",
                      "Dumont Table 1: SBP 0.384e-10, SAL 0.384e-10, EBP 0, EAL 0.175e-13");
      results.measure(m + ": CPU time per step", o.cpu_seconds / steps, "s",
                      "whole step (detection, solve, update); Dumont Table 1 totals over 2000 "
                      "steps: SBP 9.44, "
                      "SAL 9.28, EBP 8.83, EAL 8.78 s, i.e. 4.7, 4.6, 4.4, 4.4 ms per step");
      results.measure(m + ": contact-solve CPU time per step", o.solve_cpu_seconds / steps, "s");
      results.measure(m + ": total CPU time, 2000 steps", o.cpu_seconds, "s");
      results.measure(m + ": steps where NLGS stopped before eps_glob <= 1e-10",
                      static_cast<double>(o.unconverged_steps), "");
      results.measure(m + ": local Newton solves stopped at 100 iterations",
                      static_cast<double>(o.newton_unconverged), "");
    }
    disk_diagnostic(scene, results, trajectory);
    results.check("newton_methods_need_no_more_iterations",
                  worst_newton_iterations <= best_standard_iterations,
                  "max(EBP, EAL) <= min(SBP, SAL) NLGS iterations at step 2000");
    results.measure("analytic rolling time 2 v0 / (7 mu g)",
                    2 * ball.speed / (7 * ball.mu * kGravity), "s");
    results.measure("analytic rolling speed 5/7 v0", 5.0 / 7.0 * ball.speed, "m/s");

    results.add_file("velocities.png", "figure");
    results.add_file("convergence.png", "figure");
    results.write(args.output_directory);
    return results.exit_code();
  } catch (const std::exception& e) {
    std::cerr << "sliding_ball: error: " << e.what() << "\n";
    return 2;
  }
}
