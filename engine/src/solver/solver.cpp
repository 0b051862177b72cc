#include "moreau/solver/solver.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <sstream>
#include <utility>

#include "moreau/core/error.hpp"
#include "moreau/solver/iteration_monitor.hpp"

namespace moreau {

std::string to_string(Termination termination) {
  switch (termination) {
    case Termination::converged:
      return "converged";
    case Termination::iteration_limit:
      return "iteration_limit";
    case Termination::diverged:
      return "diverged";
    case Termination::stalled:
      return "stalled";
    case Termination::numerical_limit:
      return "numerical_limit";
    case Termination::breakdown:
      return "breakdown";
    case Termination::not_run:
      return "not_run";
  }
  return "unknown";
}

namespace {

template <typename Value>
[[noreturn]] void reject(const std::string& field, const Value& value, const std::string& bound) {
  std::ostringstream message;
  message << "SolverOptions." << field << " = " << value << " " << bound;
  throw InputError(message.str());
}

}  // namespace

const OptionTable<SolverOptions>& SolverOptions::fields() {
  static const OptionTable<SolverOptions> table = [] {
    OptionTable<SolverOptions> t;
    add_common_fields(t);
    return t;
  }();
  return table;
}

void SolverOptions::validate() const { validate_fields(fields(), *this, "SolverOptions"); }

const OptionTable<IterativeSolverOptions>& IterativeSolverOptions::fields() {
  static const OptionTable<IterativeSolverOptions> table = [] {
    OptionTable<IterativeSolverOptions> t;
    add_iterative_fields(t);
    return t;
  }();
  return table;
}

void IterativeSolverOptions::validate() const {
  validate_fields(fields(), *this, "IterativeSolverOptions");
}

void ContactOrderOptions::validate(int contact_count) const {
  if (order != ContactOrder::custom) {
    if (!custom_order.empty()) {
      reject("custom_order", std::to_string(custom_order.size()) + " entries",
             "is only used with order = custom");
    }
    return;
  }
  if (static_cast<int>(custom_order.size()) != contact_count) {
    reject("custom_order", std::to_string(custom_order.size()) + " entries",
           "must be a permutation of 0.." + std::to_string(contact_count - 1) + " (" +
               std::to_string(contact_count) + " contacts)");
  }
  std::vector<bool> seen(custom_order.size(), false);
  for (std::size_t k = 0; k < custom_order.size(); ++k) {
    const int contact = custom_order[k];
    if (contact < 0 || contact >= contact_count || seen[contact]) {
      reject("custom_order[" + std::to_string(k) + "]", contact,
             "must be a permutation of 0.." + std::to_string(contact_count - 1) +
                 (contact >= 0 && contact < contact_count ? " (repeated entry)" : ""));
    }
    seen[contact] = true;
  }
}

IterativeSolverOptions iteration_control(const SolverOptions& options, double divergence_factor) {
  IterativeSolverOptions control;
  static_cast<SolverOptions&>(control) = options;
  control.divergence_factor = divergence_factor;
  return control;
}

std::vector<int> visiting_order(const ContactOrderOptions& options, int contacts) {
  std::vector<int> order(contacts);
  std::iota(order.begin(), order.end(), 0);
  switch (options.order) {
    case ContactOrder::natural:
      break;
    case ContactOrder::reverse:
      std::reverse(order.begin(), order.end());
      break;
    case ContactOrder::random: {
      std::mt19937 generator(options.seed);
      std::shuffle(order.begin(), order.end(), generator);
      break;
    }
    case ContactOrder::custom:
      order = options.custom_order;
      break;
  }
  return order;
}

std::optional<SolverStats> begin_solve(const std::string& solver, const ConeProblem& problem,
                                       const SolverOptions& options, int threads, VecX& r) {
  const auto start = std::chrono::steady_clock::now();
  problem.validate();
  if (!options.warm_start) {
    r = VecX::Zero(problem.size());
  } else if (r.size() != problem.size()) {
    throw InputError("initial guess r has " + std::to_string(r.size()) +
                     " entries, the problem has " + std::to_string(problem.size()) +
                     " unknowns (warm_start is on)");
  }
  if (problem.size() > 0) return std::nullopt;
  SolverStats stats;
  stats.solver = solver;
  stats.termination = Termination::not_run;
  stats.converged = true;
  stats.threads = threads;
  stats.tolerance = options.tolerance;
  stats.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return stats;
}

IterationMonitor::IterationMonitor(std::string solver, const ConeProblem& problem,
                                   const IterativeSolverOptions& options, int threads)
    : problem_(problem),
      options_(options),
      scaling_(merit_scaling(problem)),
      start_(std::chrono::steady_clock::now()) {
  stats_.solver = std::move(solver);
  stats_.threads = threads;
  stats_.tolerance = options.tolerance;
}

void IterationMonitor::set_criterion(std::string criterion, double tolerance) {
  stats_.criterion = std::move(criterion);
  stats_.tolerance = tolerance;
}

bool IterationMonitor::check(int iteration, const VecX& r, const VecX& u) {
  const double value = merit(problem_, scaling_, r, u);
  return check(iteration, value, value);
}

bool IterationMonitor::check(int iteration, double watched, double criterion, bool finite) {
  last_merit_ = watched;
  last_criterion_ = criterion;
  if (options_.record_history) stats_.merit_history.push_back(watched);
  if (iteration == 0) initial_merit_ = watched;
  if (!finite || !std::isfinite(watched) || !std::isfinite(criterion) ||
      (iteration > 0 && watched > options_.divergence_factor * initial_merit_)) {
    stats_.termination = Termination::diverged;
    return true;
  }
  if (criterion <= stats_.tolerance) {
    stats_.termination = Termination::converged;
    return true;
  }
  return false;
}

void IterationMonitor::report_merit(double merit) {
  last_merit_ = merit;
  if (stats_.criterion == "merit") last_criterion_ = merit;
}

SolverStats IterationMonitor::finish(int iterations) {
  if (stats_.termination == Termination::not_run) stats_.termination = Termination::iteration_limit;
  stats_.converged = stats_.termination == Termination::converged;
  stats_.iterations = iterations;
  stats_.merit = last_merit_;
  stats_.criterion_value = last_criterion_;
  stats_.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  return stats_;
}

}  // namespace moreau
