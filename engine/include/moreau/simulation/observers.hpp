#pragma once
// The observers of a Simulation that `moreau run` uses, for any program that runs one (the CSV
// and VTK output: moreau/io/output_writer.hpp).
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>

#include "moreau/simulation/simulation.hpp"

namespace moreau {

// Whether a step's solves succeeded: the contact solver converged (a step without contacts
// has nothing to solve, which is no failure) and, where it ran, the compatible truss solver.
bool step_succeeded(const StepReport& report);
// "step 12 (t = 0.012 s): solver pgs did not converge: iteration_limit after 200 iterations,
// merit 3.1e-05 (tolerance 1e-08)", or the compatible solver's failure in the same words.
std::string step_failure_text(const StepReport& report);

// Totals over a run, for its summary.
class RunStatistics final : public StepObserver {
 public:
  void on_step(const Stepper&, const StepReport& report) override;

  long steps_completed = 0;
  long non_converged_steps = 0;  // of the contact solver
  long first_non_converged_step = -1;
  double max_merit = 0.0;  // NaN once a solve diverged to NaN
  long max_merit_step = -1;
  long merit_steps = 0;  // steps whose solve has the suite's merit (SolverStats::has_merit)
  // Steps whose merit or criterion value (or the compatible solver's residual) is not finite:
  // a run with any did not solve what it claims, whatever its other counts say.
  long non_finite_steps = 0;
  long first_non_finite_step = -1;
  // The measure the solver's tolerance bounds (SolverStats::criterion: "merit", or e.g.
  // "kleinert_error" for the IPM stopping on Kleinert et al.'s error) and its largest value.
  std::string criterion = "merit";
  double max_criterion_value = 0.0;
  long total_iterations = 0;
  int max_iterations = 0;
  // Krylov iterations of the interior point solvers (SolverStats::krylov_iterations; 0 for
  // the others): Kleinert et al.'s Table 1 reports them per step.
  long total_krylov_iterations = 0;
  int max_krylov_iterations = 0;
  long max_contacts = 0;
  double contact_sum = 0.0;
  double solver_seconds = 0.0;
  double collision_seconds = 0.0;
  // The compatible truss solver (Olsen & Kamrin Alg. 1), over the steps where it ran.
  long compatible_steps = 0;
  long compatible_non_converged_steps = 0;
  long compatible_first_non_converged_step = -1;
  int compatible_max_outer_iterations = 0;
  long compatible_total_inner_iterations = 0;
  double compatible_max_equilibrium_residual = 0.0;
  double compatible_seconds = 0.0;
  double mean_contacts() const;
};

// What a run does when a step's solver does not converge.
enum class SolverFailurePolicy {
  warn,  // print a warning naming the step and go on
  stop,  // stop the run with RunStopped
};
std::string to_string(SolverFailurePolicy policy);

// Warns (the first `max_warnings` times, then only counts) or stops the run on a failed step.
class FailurePolicy final : public StepObserver {
 public:
  FailurePolicy(SolverFailurePolicy policy, std::ostream& warnings, long max_warnings = 10);
  void on_step(const Stepper&, const StepReport& report) override;

 private:
  SolverFailurePolicy policy_;
  std::ostream& warnings_;
  long max_warnings_;
  long failures_ = 0;
};

// A progress line on `out` at most every `interval` seconds: step, share, time, contacts,
// solver iterations and merit (and the compatible solver's outer iterations and residual where
// it ran), the recent rate and the time left.
class ProgressReporter final : public StepObserver {
 public:
  explicit ProgressReporter(std::ostream& out, double interval_seconds = 2.0);
  void on_start(const Stepper&, long total_steps) override;
  void on_step(const Stepper&, const StepReport& report) override;

 private:
  std::ostream& out_;
  double interval_;
  long total_ = 0;
  long last_step_ = 0;
  double last_time_ = 0.0;  // seconds since the epoch of steady_clock
};

// Writes the contact problem of the selected steps to FCLIB files in `directory`:
// step_<N>_local.hdf5 and step_<N>_global.hdf5 (moreau/fclib/step_export.hpp).
class FclibExporter final : public StepObserver {
 public:
  FclibExporter(std::filesystem::path directory, std::string title,
                std::function<bool(long)> selected);
  void on_problem(const StepProblem& problem) override;
  long exported_steps() const { return exported_; }

 private:
  std::filesystem::path directory_;
  std::string title_;
  std::function<bool(long)> selected_;
  long exported_ = 0;
};

// Three significant digits, for messages ("3.1e-09", "0.125").
std::string short_number(double value);

}  // namespace moreau
