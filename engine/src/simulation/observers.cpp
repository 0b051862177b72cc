#include "moreau/simulation/observers.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <utility>

#include "moreau/fclib/step_export.hpp"
#include "moreau/integrator/semi_implicit_euler.hpp"

namespace moreau {
namespace {

bool contact_solve_succeeded(const SolverStats& stats) {
  // A step without contacts has nothing to solve: that is not a failure.
  return stats.converged || stats.termination == Termination::not_run;
}

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

std::string short_number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", value);
  return text;
}

bool step_succeeded(const StepReport& report) {
  const CompatibleSolve* compatible = compatible_solve(report);
  return contact_solve_succeeded(report.solver_stats) &&
         (!compatible || compatible->stats.converged);
}

std::string step_failure_text(const StepReport& report) {
  const std::string where =
      "step " + std::to_string(report.step) + " (t = " + short_number(report.time) + " s): ";
  const SolverStats& stats = report.solver_stats;
  if (!contact_solve_succeeded(stats))
    return where + "solver " + stats.solver + " did not converge: " + to_string(stats.termination) +
           " after " + std::to_string(stats.iterations) + " iterations, " + stats.criterion + " " +
           short_number(stats.criterion_value) + " (tolerance " + short_number(stats.tolerance) +
           ")" +
           (stats.criterion == "merit" || !stats.has_merit
                ? ""
                : ", merit " + short_number(stats.merit));
  const NoTensionTrussStats& truss = compatible_solve(report)->stats;
  return where + "the compatible CD solver did not converge: " + truss.termination + " after " +
         std::to_string(truss.outer_iterations) + " outer iterations, equilibrium residual " +
         short_number(truss.equilibrium_residual);
}

void RunStatistics::on_step(const Stepper&, const StepReport& report) {
  const SolverStats& stats = report.solver_stats;
  const long step = report.step;
  steps_completed = step;
  if (!contact_solve_succeeded(stats)) {
    ++non_converged_steps;
    if (first_non_converged_step < 0) first_non_converged_step = step;
  }
  const bool has_merit = stats.termination != Termination::not_run && stats.has_merit;
  if (has_merit) ++merit_steps;
  // A NaN merit (a diverged solve) is kept: it must not hide behind a later finite one.
  if (has_merit && (std::isnan(stats.merit) || stats.merit > max_merit) && !std::isnan(max_merit)) {
    max_merit = stats.merit;
    max_merit_step = step;
  }
  if (stats.termination != Termination::not_run && !stats.criterion.empty()) {
    criterion = stats.criterion;
    if (!std::isnan(max_criterion_value) && !(stats.criterion_value <= max_criterion_value))
      max_criterion_value = stats.criterion_value;  // NaN (a diverged solve) is kept
  }
  const bool solver_non_finite =
      stats.termination != Termination::not_run &&
      ((has_merit && !std::isfinite(stats.merit)) ||
       (!stats.criterion.empty() && !std::isfinite(stats.criterion_value)));
  const CompatibleSolve* compatible = compatible_solve(report);
  const bool truss_non_finite =
      compatible && !std::isfinite(compatible->stats.equilibrium_residual);
  if (solver_non_finite || truss_non_finite) {
    ++non_finite_steps;
    if (first_non_finite_step < 0) first_non_finite_step = step;
  }
  total_iterations += stats.iterations;
  max_iterations = std::max(max_iterations, stats.iterations);
  total_krylov_iterations += stats.krylov_iterations;
  max_krylov_iterations = std::max(max_krylov_iterations, stats.krylov_iterations);
  max_contacts = std::max(max_contacts, report.active_contacts);
  contact_sum += static_cast<double>(report.active_contacts);
  solver_seconds += stats.wall_seconds;
  collision_seconds +=
      report.collision_stats.broad_phase_seconds + report.collision_stats.narrow_phase_seconds;
  if (!compatible) return;
  const NoTensionTrussStats& truss = compatible->stats;
  ++compatible_steps;
  if (!truss.converged) {
    ++compatible_non_converged_steps;
    if (compatible_first_non_converged_step < 0) compatible_first_non_converged_step = step;
  }
  compatible_max_outer_iterations =
      std::max(compatible_max_outer_iterations, truss.outer_iterations);
  compatible_total_inner_iterations += truss.inner_iterations;
  compatible_max_equilibrium_residual =
      std::max(compatible_max_equilibrium_residual, truss.equilibrium_residual);
  compatible_seconds += truss.wall_seconds;
}

double RunStatistics::mean_contacts() const {
  return steps_completed > 0 ? contact_sum / static_cast<double>(steps_completed) : 0.0;
}

std::string to_string(SolverFailurePolicy policy) {
  return policy == SolverFailurePolicy::warn ? "warn" : "stop";
}

FailurePolicy::FailurePolicy(SolverFailurePolicy policy, std::ostream& warnings, long max_warnings)
    : policy_(policy), warnings_(warnings), max_warnings_(max_warnings) {}

void FailurePolicy::on_step(const Stepper&, const StepReport& report) {
  if (step_succeeded(report)) return;
  const std::string text = step_failure_text(report);
  if (policy_ == SolverFailurePolicy::stop)
    throw RunStopped(text + "; stopping because solver.on_failure is \"stop\"");
  ++failures_;
  // Reported one by one up to a count, then only counted in the summary, so that a run whose
  // solver fails every step does not drown its own output.
  if (failures_ <= max_warnings_) warnings_ << "moreau: warning: " << text << '\n';
  if (failures_ == max_warnings_)
    warnings_ << "moreau: warning: further steps that do not converge are only counted "
                 "(summary.json)\n";
}

ProgressReporter::ProgressReporter(std::ostream& out, double interval_seconds)
    : out_(out), interval_(interval_seconds) {}

void ProgressReporter::on_start(const Stepper& stepper, long total_steps) {
  total_ = stepper.steps_taken() + total_steps;
  last_step_ = stepper.steps_taken();
  last_time_ = now_seconds();
}

// The time left is estimated from the rate since the previous line, not the mean rate: the
// cost of a step grows as a granular packing forms. A DEM step has no solver, so its line
// leaves out iterations and merit.
void ProgressReporter::on_step(const Stepper& stepper, const StepReport& report) {
  const long step = report.step;
  const double interval = now_seconds() - last_time_;
  if (step >= total_ || interval < interval_) return;
  const double rate = static_cast<double>(step - last_step_) / interval;
  out_ << "moreau: step " << step << '/' << total_ << " ("
       << short_number(100.0 * static_cast<double>(step) / static_cast<double>(total_))
       << "%), t = " << short_number(report.time) << " s, contacts " << report.active_contacts;
  if (stepper.scheme() != "dem")  // the DEM has no contact solver
    out_ << ", iterations " << report.solver_stats.iterations << ", "
         << (report.solver_stats.has_merit ? "merit" : report.solver_stats.criterion) << " "
         << short_number(report.solver_stats.has_merit ? report.solver_stats.merit
                                                       : report.solver_stats.criterion_value);
  if (const CompatibleSolve* compatible = compatible_solve(report))
    out_ << ", compatible " << compatible->stats.outer_iterations << " outer iterations, "
         << "residual " << short_number(compatible->stats.equilibrium_residual);
  out_ << ", " << short_number(rate) << " steps/s, about "
       << short_number(static_cast<double>(total_ - step) / rate) << " s left\n";
  last_time_ = now_seconds();
  last_step_ = step;
}

FclibExporter::FclibExporter(std::filesystem::path directory, std::string title,
                             std::function<bool(long)> selected)
    : directory_(std::move(directory)), title_(std::move(title)), selected_(std::move(selected)) {}

void FclibExporter::on_problem(const StepProblem& problem) {
  if (!selected_(problem.step)) return;
  const fclib::StepExport files = fclib::export_step(problem, title_);
  const std::string stem = "step_" + std::to_string(problem.step);
  fclib::write_file(directory_ / (stem + "_local.hdf5"), files.local);
  fclib::write_file(directory_ / (stem + "_global.hdf5"), files.global);
  ++exported_;
}

}  // namespace moreau
