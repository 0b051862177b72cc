// Sliding ball, Dumont Sec. 4.1: a ball launched without spin on a plane slides,
// friction spins it up, and it rolls without sliding from t* = 2 v0 / (7 mu g) on at 5/7 v0.
// The four NLGS local solvers (SBP, EBP, SAL, EAL) run the same scene with the theta-method
// (theta_stepper.hpp). See README.md for the scene and the choices made.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "ball_runs.hpp"
#include "moreau/harness/experiment.hpp"

namespace {

using namespace moreau;
using namespace sliding_ball;

// Rolling starts in the first step whose contact-point slip falls below this. Sliding reduces
// the slip by 3.5 mu g dt = 2.4e-3 m/s per step and the solver leaves ~1e-10 m/s, so any
// threshold between those picks the same step; 1e-6 v0 sits in the middle on a log scale.
constexpr double kRollingSlip = 1e-6 * kSpeed;

const LocalMethod kMethods[] = {LocalMethod::sbp, LocalMethod::sal, LocalMethod::ebp,
                                LocalMethod::eal};

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

// A run with alpha != the method's default: measured, not checked.
void measure_diagnostic(ExperimentResults& results, const Outcome& o) {
  const std::string m = o.label;
  const std::string note = "diagnostic run, not checked";
  results.measure(m + ": rolling time", rolling(o).first, "s", note);
  results.measure(m + ": speed after step 2000", o.samples.back().speed, "m/s", note);
  results.measure(m + ": NLGS iterations at step 2000", o.last.common.iterations, "", note);
  results.measure(m + ": steps where NLGS stopped before eps_glob <= 1e-10",
                  static_cast<double>(o.unconverged_steps), "", note);
}

// Dumont Sec. 4.1 and Table 1 for one local method at its default rho: the rolling time and
// speed, rolling from t* on, the iterations of the last step; and its costs, measured.
void check_method(ExperimentResults& results, const Outcome& o, double steps) {
  const std::string m = o.label;
  const auto [t_star, worst_slip_ratio] = rolling(o);
  results.check(m + "_rolling_time", t_star,
                "end time of the first step whose contact-point slip is below 1e-6 v0 (s)");
  results.check(m + "_final_velocity", o.samples.back().speed, "ball speed after step 2000 (m/s)");
  results.check(m + "_rolling_after_t_star", worst_slip_ratio,
                "largest |v - R omega| / v over the steps from t* on");
  results.check(m + "_iterations_last_step", static_cast<double>(o.last.common.iterations),
                "NLGS iterations of step 2000 to eps_glob <= 1e-10");
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

}  // namespace

int main(int argc, char** argv) {
  return run_experiment(
      argc, argv, "sliding_ball", [](const ExperimentArguments& args, ExperimentResults& results) {
        const Scene scene = load_scene(kScene);
        const Ball ball = find_ball(scene);
        std::vector<Outcome> outcomes;
        for (const LocalMethod method : kMethods) outcomes.push_back(run(scene, method, 0.0));
        // Not the paper's setting and not checked: SBP and SAL with alpha = 0.5, below the bound
        // 2 / 3.5 = 0.57 under which their Uzawa step also contracts in the tangential directions
        // of a sphere contact (W_tt = 3.5 W_nn, README.md), to show where the default 0.6 fails.
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
          write_trajectory(trajectory, o.label, o);
          for (const auto& [step, history] : o.histories)
            for (const NlgsIterate& it : history)
              convergence.row(o.label, step, it.iteration, it.terms.motion, it.terms.projection,
                              it.terms.bipotential, it.terms.penetration, it.epsilon_glob);
          if (o.alpha > 0.0) {
            measure_diagnostic(results, o);
            continue;
          }
          check_method(results, o, static_cast<double>(scene.steps));
          const int iterations = o.last.common.iterations;
          if (o.method == LocalMethod::ebp || o.method == LocalMethod::eal)
            worst_newton_iterations = std::max(worst_newton_iterations, iterations);
          else
            best_standard_iterations = std::min(best_standard_iterations, iterations);
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
        return RunEnd::checked;
      });
}
