// Sliding ball, seed 004 (Dumont) Sec. 4.1: a ball launched without spin on a plane slides,
// friction spins it up, and it rolls without sliding from t* = 2 v0 / (7 mu g) on at 5/7 v0.
// The four NLGS local solvers (SBP, EBP, SAL, EAL) run the same scene with the theta-method
// (theta_stepper.hpp). See README.md for the scene and the choices made.
#include <cmath>
#include <ctime>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "moreau/harness/results.hpp"
#include "moreau/integrator/theta_stepper.hpp"
#include "moreau/model/shape.hpp"
#include "moreau/nlgs/nlgs_solver.hpp"

namespace {

using namespace moreau;

// Seed 004 Sec. 4.1 gives these; the density is ours (README.md): t* and 5/7 v0 do not depend
// on it.
constexpr double kRadius = 5e-3;     // m
constexpr double kSpeed = 1.5;       // m/s, initial, horizontal, no spin
constexpr double kMu = 0.7;          // ball-plane
constexpr double kTimeStep = 1e-4;   // s
constexpr long kSteps = 2000;        // Table 1 is "after the 2000th time step"
constexpr double kEpsGlob = 1e-10;   // global stopping criterion
constexpr double kGravity = 9.81;    // m/s^2
constexpr double kDensity = 7800.0;  // kg/m^3, steel
// Sec. 4.1 gives no cap on NLGS iterations; Sec. 4.2-4.3 stop at 5000.
constexpr int kMaxIterations = 5000;
// Rolling starts in the first step whose contact-point slip falls below this. Sliding reduces
// the slip by 3.5 mu g dt = 2.4e-3 m/s per step and the solver leaves ~1e-10 m/s, so any
// threshold between those picks the same step; 1e-6 v0 sits in the middle on a log scale.
constexpr double kRollingSlip = 1e-6 * kSpeed;
// Seed 004 Fig. 5-7 show the convergence at the "5th iteration" (time step 5); we keep it and
// the last step.
constexpr long kHistorySteps[] = {5, kSteps};

const LocalMethod kMethods[] = {LocalMethod::sbp, LocalMethod::sal, LocalMethod::ebp,
                                LocalMethod::eal};

struct Sample {
  double time, speed, rolling_speed, slip, epsilon_glob;
  int iterations;
};

struct Outcome {
  LocalMethod method;
  double alpha = 0.0;  // rho = alpha rho_bar; 0: the method's default of seed 004
  std::string label;
  std::vector<Sample> samples;
  std::vector<std::pair<long, std::vector<NlgsIterate>>> histories;
  NlgsStats last;
  long unconverged_steps = 0;
  long newton_unconverged = 0;
  double cpu_seconds = 0.0;        // whole run: detection, solve, update
  double solve_cpu_seconds = 0.0;  // contact solves only
};

// dimension two: the same scene with a disk (a 2D world, inertia m r^2 / 2) instead of a ball.
Outcome run(LocalMethod method, double alpha, Dimension dimension = Dimension::three) {
  World world;
  world.dimension = dimension;
  world.gravity = Vec3(0.0, -kGravity, 0.0);
  world.friction = FrictionTable(kMu);
  RigidBody plane;
  plane.name = "plane";
  plane.motion = Motion::fixed;
  plane.shape.geometry = HalfSpace{Vec3::UnitY()};
  world.add_body(plane);
  const MassProperties mass = mass_properties(Sphere{kRadius}, kDensity, dimension);
  RigidBody ball;
  ball.name = "ball";
  ball.shape.geometry = Sphere{kRadius};
  ball.mass = mass.mass;
  ball.inertia_body = mass.inertia;
  ball.position = Vec3(0.0, kRadius, 0.0);  // touching the plane
  ball.linear_velocity = Vec3(kSpeed, 0.0, 0.0);
  const int b = world.add_body(ball);

  ThetaOptions options;
  options.time_step = kTimeStep;
  options.theta = 0.5;  // seed 004 eq. 18 and the final update
  // Keeps the resting contact among the candidates; the ball never leaves the plane.
  options.collision.margin = 0.1 * kRadius;
  SolverOptions solver_options;
  solver_options.max_iterations = kMaxIterations;
  NlgsOptions nlgs;
  nlgs.method = method;
  nlgs.rho_factor = alpha;
  nlgs.stopping = NlgsStopping::epsilon_glob;
  nlgs.epsilon_glob_tolerance = kEpsGlob;
  nlgs.time_step = kTimeStep;  // eps_glob with forces, as seed 004
  ThetaStepper stepper(world, options, std::make_unique<NlgsSolver>(solver_options, nlgs));

  Outcome out;
  out.method = method;
  out.alpha = alpha;
  out.label =
      to_string(method) + (alpha > 0.0 ? " alpha=" + std::to_string(alpha).substr(0, 3) : "");
  const std::clock_t start = std::clock();
  for (long s = 1; s <= kSteps; ++s) {
    const ThetaStepReport& report = stepper.step();
    const RigidBody& body = world.bodies[b];
    // Velocity of the material point touching the plane: v + omega x (-R e_y).
    const Vec3 contact_point =
        body.linear_velocity + body.angular_velocity.cross(Vec3(0.0, -kRadius, 0.0));
    Sample sample{report.time,
                  body.linear_velocity.x(),
                  -body.angular_velocity.z() * kRadius,
                  contact_point.norm(),
                  0.0,
                  0};
    if (report.nlgs) {
      sample.epsilon_glob = report.nlgs->epsilon_glob;
      sample.iterations = report.nlgs->common.iterations;
      out.newton_unconverged += report.nlgs->newton_unconverged;
      if (!report.nlgs->common.converged) ++out.unconverged_steps;
      for (const long h : kHistorySteps)
        if (s == h) out.histories.emplace_back(s, report.nlgs->history);
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

void write_trajectory(std::ofstream& trajectory, const std::string& label, const Outcome& o) {
  for (const Sample& s : o.samples)
    trajectory << label << "," << s.time << "," << s.speed << "," << s.rolling_speed << ","
               << s.slip << "," << s.iterations << "," << s.epsilon_glob << "\n";
}

// Diagnostic, not a check and not the paper's scene: SBP and SAL at the published alpha = 0.6 on
// a 2D disk. The stick-phase Uzawa map of SBP/SAL has the factor 1 - alpha W_tt / W_nn on the
// tangential impulse (rho W_nn = alpha, Dumont eq. 21 and 35 with rho_bar = m / dt); it
// contracts only for W_tt / W_nn < 2 / alpha = 3.33. A solid sphere has W_tt / W_nn = 1 + m r^2 /
// I = 3.5 (factor -1.1, repelling); a disk has 3 (factor -0.8), so at the same alpha it must
// roll, from t* = v0 / (3 mu g) at 2/3 v0.
void disk_diagnostic(ExperimentResults& results, std::ofstream& trajectory) {
  const std::string note = "2D disk, diagnostic run, not checked";
  const double t_star = kSpeed / (3.0 * kMu * kGravity);
  results.measure("disk: analytic rolling time v0 / (3 mu g)", t_star, "s", note);
  results.measure("disk: analytic rolling step", t_star / kTimeStep, "", note);
  results.measure("disk: analytic rolling speed 2/3 v0", 2.0 / 3.0 * kSpeed, "m/s", note);
  for (const LocalMethod method : {LocalMethod::sbp, LocalMethod::sal}) {
    const Outcome o = run(method, 0.0, Dimension::two);
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

    std::vector<Outcome> outcomes;
    for (const LocalMethod method : kMethods) outcomes.push_back(run(method, 0.0));
    // Not the paper's setting and not checked: SBP and SAL with alpha = 0.5, below the bound
    // 2 / 3.5 = 0.57 under which their Uzawa step also contracts in the tangential directions of a
    // sphere contact (W_tt = 3.5 W_nn, README.md), to show where the default 0.6 fails.
    for (const LocalMethod method : {LocalMethod::sbp, LocalMethod::sal})
      outcomes.push_back(run(method, 0.5));

    std::ofstream trajectory(args.output_directory + "/trajectory.csv");
    trajectory.precision(12);
    trajectory << "method,time,speed,rolling_speed,slip,iterations,epsilon_glob\n";
    std::ofstream convergence(args.output_directory + "/convergence.csv");
    convergence.precision(12);
    convergence << "method,step,iteration,motion,projection,bipotential,penetration,epsilon_glob\n";

    int worst_newton_iterations = 0, best_standard_iterations = kMaxIterations;
    for (const Outcome& o : outcomes) {
      const std::string m = o.label;
      write_trajectory(trajectory, m, o);
      for (const auto& [step, history] : o.histories)
        for (const NlgsIterate& it : history)
          convergence << m << "," << step << "," << it.iteration << "," << it.terms.motion << ","
                      << it.terms.projection << "," << it.terms.bipotential << ","
                      << it.terms.penetration << "," << it.epsilon_glob << "\n";
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
                      "seed 004 Table 1: SBP 0.384e-10, SAL 0.384e-10, EBP 0, EAL 0.175e-13");
      results.measure(m + ": CPU time per step", o.cpu_seconds / kSteps, "s",
                      "whole step (detection, solve, update); seed 004 Table 1 totals over 2000 "
                      "steps: SBP 9.44, "
                      "SAL 9.28, EBP 8.83, EAL 8.78 s, i.e. 4.7, 4.6, 4.4, 4.4 ms per step");
      results.measure(m + ": contact-solve CPU time per step", o.solve_cpu_seconds / kSteps, "s");
      results.measure(m + ": total CPU time, 2000 steps", o.cpu_seconds, "s");
      results.measure(m + ": steps where NLGS stopped before eps_glob <= 1e-10",
                      static_cast<double>(o.unconverged_steps), "");
      results.measure(m + ": local Newton solves stopped at 100 iterations",
                      static_cast<double>(o.newton_unconverged), "");
    }
    disk_diagnostic(results, trajectory);
    results.check("newton_methods_need_no_more_iterations",
                  worst_newton_iterations <= best_standard_iterations,
                  "max(EBP, EAL) <= min(SBP, SAL) NLGS iterations at step 2000");
    results.measure("analytic rolling time 2 v0 / (7 mu g)", 2 * kSpeed / (7 * kMu * kGravity),
                    "s");
    results.measure("analytic rolling speed 5/7 v0", 5.0 / 7.0 * kSpeed, "m/s");

    results.add_file("trajectory.csv", "raw");
    results.add_file("convergence.csv", "raw");
    results.add_file("velocities.png", "figure");
    results.add_file("convergence.png", "figure");
    results.write(args.output_directory);
    return results.exit_code();
  } catch (const std::exception& e) {
    std::cerr << "sliding_ball: error: " << e.what() << "\n";
    return 2;
  }
}
