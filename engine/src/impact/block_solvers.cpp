#include "moreau/impact/block_solvers.hpp"

#include <omp.h>

#include <Eigen/Cholesky>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <random>
#include <sstream>
#include <utility>
#include <vector>

#include "../solver/iteration_monitor.hpp"
#include "moreau/core/error.hpp"
#include "moreau/impact/single_contact.hpp"
#include "moreau/solver/merit.hpp"

namespace moreau {
namespace {

// Below this many contacts a Jacobi pass costs less than an OpenMP fork/join (as in PGJ).
constexpr int kParallelContacts = 2048;

void validate_block_options(const std::string& solver, const SolverOptions& options) {
  detail::validate_options(options);
  if (!(options.relaxation > 0.0 && options.relaxation <= 1.0)) {
    std::ostringstream message;
    message << "SolverOptions.relaxation = " << options.relaxation << " must lie in (0, 1] for "
            << solver << " (an over-relaxed step can leave the friction cone)";
    throw InputError(message.str());
  }
}

// The diagonal blocks as SPD 3x3 single-contact matrices. Rows a 1- or 2-row problem does not
// use get a decoupled unit diagonal scaled like W_nn: with b = 0 there the local solution has a
// zero in them (the problem is symmetric under flipping their sign and its solution unique).
struct Blocks {
  int rows = 3;
  std::vector<Mat3> a;
  std::vector<char> active;  // block positive definite: the contact moves something
  VecX scale;                // D_i of merit.hpp
  double q_norm = 1.0;

  explicit Blocks(const ConeProblem& problem) : rows(problem.rows()) {
    const int contacts = problem.contact_count();
    a.resize(contacts);
    active.resize(contacts);
    for (int i = 0; i < contacts; ++i) {
      const Mat3 w = problem.delassus->diagonal_block(i);
      Mat3 block = Mat3::Zero();
      block.topLeftCorner(rows, rows) = w.topLeftCorner(rows, rows);
      for (int k = rows; k < 3; ++k) block(k, k) = w(0, 0);
      a[i] = block;
      active[i] = w(0, 0) > 0.0 && Eigen::LLT<Mat3>(block).info() == Eigen::Success;
    }
    const MeritScaling scaling = merit_scaling(problem);
    scale = scaling.block_scale;
    q_norm = scaling.q_norm;
  }

  // x*_i for the relative velocity u_i of contact i at its current impulse r_i.
  Vec3 solve(const ConeProblem& problem, int i, const Vec3& r_i, const Vec3& u_i) const {
    SingleContactProblem local;
    local.a = a[i];
    local.b = Vec3::Zero();
    local.b.head(rows) = (a[i] * r_i - u_i).head(rows);  // b = W_ii r_i - u_i, eq. (5)
    local.mu = rows > 1 ? problem.mu[i] : 0.0;
    Vec3 x = solve_max_dissipation(local).x;
    x.tail(3 - rows).setZero();
    return x;
  }

  Vec3 impulse(const VecX& r, int i) const {
    Vec3 r_i = Vec3::Zero();
    r_i.head(rows) = r.segment(i * rows, rows);
    return r_i;
  }

  // ||D_i^-1 (r_i - x*_i)||^2, the contribution of contact i to the residual.
  double residual_term(int i, const Vec3& r_i, const Vec3& x_i) const {
    return ((r_i - x_i) / scale[i]).squaredNorm();
  }
  double residual(double sum_of_terms) const { return std::sqrt(sum_of_terms) / q_norm; }
};

// Stopping logic shared by the three solvers, on the fixed-point residual.
class Monitor {
 public:
  Monitor(const std::string& solver, const SolverOptions& options, int threads)
      : options_(options), start_(std::chrono::steady_clock::now()) {
    stats_.solver = solver;
    stats_.threads = threads;
    stats_.tolerance = options.tolerance;
  }
  bool due(int iteration) const {
    return iteration % options_.check_every == 0 || iteration == options_.max_iterations;
  }
  // Records the residual of the iterate after `iteration` iterations; true when it must stop.
  bool check(int iteration, double residual) {
    last_ = residual;
    if (options_.record_history) stats_.merit_history.push_back(residual);
    if (iteration == 0) initial_ = residual;
    if (!std::isfinite(residual) ||
        (iteration > 0 && residual > options_.divergence_factor * initial_)) {
      stats_.termination = Termination::diverged;
      return true;
    }
    if (residual <= options_.tolerance) {
      stats_.termination = Termination::converged;
      return true;
    }
    return false;
  }
  // `r` the returned impulses: SolverStats::merit is the suite's merit of r (one Delassus
  // product), the residual goes to the criterion fields.
  SolverStats finish(int iterations, const ConeProblem& problem, const VecX& r) {
    if (stats_.termination == Termination::not_run) {
      stats_.termination = Termination::iteration_limit;
    }
    stats_.converged = stats_.termination == Termination::converged;
    stats_.iterations = iterations;
    stats_.criterion = "max_dissipation_residual";
    stats_.criterion_value = last_;
    stats_.merit = merit(problem, r);
    stats_.wall_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    return stats_;
  }

 private:
  const SolverOptions& options_;
  SolverStats stats_;
  double initial_ = 0.0;
  double last_ = 0.0;
  std::chrono::steady_clock::time_point start_;
};

// Residual of r from u = W r + q, the local solves in parallel for large problems.
double residual_from_velocity(const ConeProblem& problem, const Blocks& blocks, const VecX& r,
                              const VecX& u) {
  const int contacts = problem.contact_count();
  const int rows = blocks.rows;
  double sum = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : sum) if (contacts > kParallelContacts)
  for (int i = 0; i < contacts; ++i) {
    if (!blocks.active[i]) continue;
    const Vec3 r_i = blocks.impulse(r, i);
    Vec3 u_i = Vec3::Zero();
    u_i.head(rows) = u.segment(i * rows, rows);
    sum += blocks.residual_term(i, r_i, blocks.solve(problem, i, r_i, u_i));
  }
  return blocks.residual(sum);
}

}  // namespace

double max_dissipation_residual(const ConeProblem& problem, const VecX& r, const VecX& u) {
  problem.validate();
  return residual_from_velocity(problem, Blocks(problem), r, u);
}

MaxDissipationGaussSeidel::MaxDissipationGaussSeidel(SolverOptions options)
    : ContactSolver(std::move(options)) {
  validate_block_options(name(), options_);
}

SolverStats MaxDissipationGaussSeidel::solve(const ConeProblem& problem, VecX& r) const {
  constexpr int kThreads = 1;
  if (auto empty = detail::begin_solve(name(), problem, options_, kThreads, r)) return *empty;
  Monitor monitor(name(), options_, kThreads);
  const DelassusOperator& delassus = *problem.delassus;
  const Blocks blocks(problem);
  const int contacts = problem.contact_count();
  const int rows = blocks.rows;
  const double omega = options_.relaxation;
  const std::vector<int> order = visiting_order(options_, contacts);

  auto velocity = [&](int i, const VecX& work) {
    Vec3 u_i = delassus.local_velocity(i, work);
    u_i.head(rows) += problem.q.segment(i * rows, rows);
    u_i.tail(3 - rows).setZero();
    return u_i;
  };
  VecX work;
  delassus.begin_sweep(r, work);
  auto measure = [&](int iteration) {
    double sum = 0.0;
    for (int i = 0; i < contacts; ++i) {
      if (!blocks.active[i]) continue;
      const Vec3 r_i = blocks.impulse(r, i);
      sum += blocks.residual_term(i, r_i, blocks.solve(problem, i, r_i, velocity(i, work)));
    }
    return monitor.check(iteration, blocks.residual(sum));
  };

  int iteration = 0;
  bool stop = measure(0);
  while (!stop && iteration < options_.max_iterations) {
    ++iteration;
    for (const int i : order) {
      if (!blocks.active[i]) continue;
      const Vec3 r_i = blocks.impulse(r, i);
      const Vec3 step = omega * (blocks.solve(problem, i, r_i, velocity(i, work)) - r_i);
      delassus.update_sweep(i, step, work);
      r.segment(i * rows, rows) += step.head(rows);
    }
    if (monitor.due(iteration)) stop = measure(iteration);
  }
  return monitor.finish(iteration, problem, r);
}

MaxDissipationJacobi::MaxDissipationJacobi(SolverOptions options)
    : ContactSolver(std::move(options)) {
  validate_block_options(name(), options_);
}

SolverStats MaxDissipationJacobi::solve(const ConeProblem& problem, VecX& r) const {
  const int threads = omp_get_max_threads();
  if (auto empty = detail::begin_solve(name(), problem, options_, threads, r)) return *empty;
  Monitor monitor(name(), options_, threads);
  const DelassusOperator& delassus = *problem.delassus;
  const Blocks blocks(problem);
  const int contacts = problem.contact_count();
  const int rows = blocks.rows;
  const double omega = options_.relaxation;

  // One pass gives both x*(r), the next iterate's target, and the residual of r, so the
  // residual is checked at every iteration at no extra cost.
  VecX u(problem.size());
  VecX target = r;
  int iteration = 0;
  while (true) {
    delassus.apply(r, u);
    u += problem.q;
    double sum = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : sum) if (contacts > kParallelContacts)
    for (int i = 0; i < contacts; ++i) {
      if (!blocks.active[i]) continue;
      const Vec3 r_i = blocks.impulse(r, i);
      Vec3 u_i = Vec3::Zero();
      u_i.head(rows) = u.segment(i * rows, rows);
      const Vec3 x = blocks.solve(problem, i, r_i, u_i);
      sum += blocks.residual_term(i, r_i, x);
      target.segment(i * rows, rows) = x.head(rows);
    }
    if (monitor.check(iteration, blocks.residual(sum)) || iteration == options_.max_iterations) {
      break;
    }
    r += omega * (target - r);
    ++iteration;
  }
  return monitor.finish(iteration, problem, r);
}

MaxDissipationBlend::MaxDissipationBlend(SolverOptions options, int partitions)
    : ContactSolver(std::move(options)), partitions_(partitions) {
  validate_block_options(name(), options_);
  if (partitions_ < 1) {
    throw InputError("md_blend: partitions = " + std::to_string(partitions_) + " must be >= 1");
  }
}

SolverStats MaxDissipationBlend::solve(const ConeProblem& problem, VecX& r) const {
  const int threads = omp_get_max_threads();
  if (auto empty = detail::begin_solve(name(), problem, options_, threads, r)) return *empty;
  Monitor monitor(name(), options_, threads);
  const DelassusOperator& delassus = *problem.delassus;
  const Blocks blocks(problem);
  const int contacts = problem.contact_count();
  const int rows = blocks.rows;
  const double omega = options_.relaxation;
  const int ranges = std::min(partitions_, contacts);

  VecX u(problem.size());
  auto measure = [&](int iteration) {
    delassus.apply(r, u);
    u += problem.q;
    return monitor.check(iteration, residual_from_velocity(problem, blocks, r, u));
  };
  std::vector<VecX> work(ranges);
  VecX target = r;
  int iteration = 0;
  bool stop = measure(0);
  while (!stop && iteration < options_.max_iterations) {
    ++iteration;
    // Gauss-Seidel inside each range, from the common r; `target` holds each range's result.
#pragma omp parallel for schedule(static, 1)
    for (int p = 0; p < ranges; ++p) {
      const int begin = static_cast<int>(static_cast<long>(contacts) * p / ranges);
      const int end = static_cast<int>(static_cast<long>(contacts) * (p + 1) / ranges);
      delassus.begin_sweep(r, work[p]);
      for (int i = begin; i < end; ++i) {
        if (!blocks.active[i]) continue;
        const Vec3 x_i = blocks.impulse(target, i);
        Vec3 u_i = delassus.local_velocity(i, work[p]);
        u_i.head(rows) += problem.q.segment(i * rows, rows);
        u_i.tail(3 - rows).setZero();
        const Vec3 x = blocks.solve(problem, i, x_i, u_i);
        delassus.update_sweep(i, x - x_i, work[p]);
        target.segment(i * rows, rows) = x.head(rows);
      }
    }
    // Weighted Jacobi across the ranges.
    r += omega * (target - r);
    target = r;
    if (monitor.due(iteration)) stop = measure(iteration);
  }
  return monitor.finish(iteration, problem, r);
}

}  // namespace moreau
