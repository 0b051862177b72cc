#include "moreau/impact/block_solvers.hpp"

#include <omp.h>

#include <Eigen/Cholesky>
#include <algorithm>
#include <cmath>
#include <limits>
#include <ranges>
#include <sstream>
#include <utility>
#include <vector>

#include "moreau/core/error.hpp"
#include "moreau/impact/coulomb_enumeration.hpp"
#include "moreau/impact/single_contact.hpp"
#include "moreau/solver/gauss_seidel.hpp"
#include "moreau/solver/merit.hpp"
#include "moreau/solver/solver_registry.hpp"

namespace moreau {
namespace {

// Below this many contacts a Jacobi pass costs less than an OpenMP fork/join (as in PGJ).
constexpr int kParallelContacts = 2048;

// The maximum-dissipation solvers blend the block solution with the previous iterate (Preclik
// et al. Sec. 3.2) and take omega in (0, 1]: an over-relaxed step can leave the friction cone.
template <class Options>
void add_relaxation_field(OptionTable<Options>& table) {
  table.push_back(
      number_option<Options>("relaxation", &Options::relaxation, Bounds::left_open(0, 1))
          .described("blend omega of the block solution with the previous iterate"));
}

// The diagonal blocks as SPD 3x3 single-contact matrices. Rows a 1- or 2-row problem does not
// use get a decoupled unit diagonal scaled like W_nn: with b = 0 there the local solution has a
// zero in them (the problem is symmetric under flipping their sign and its solution unique).
struct Blocks {
  int rows = 3;
  std::vector<Mat3> a;
  BlockImpactLaw law = BlockImpactLaw::maximum_dissipation;
  std::vector<char> active;  // block positive definite: the contact moves something
  VecX scale;                // D_i of merit.hpp
  double q_norm = 1.0;

  explicit Blocks(const ConeProblem& problem,
                  BlockImpactLaw impact_law = BlockImpactLaw::maximum_dissipation)
      : rows(problem.rows()), law(impact_law) {
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
    // Frictionless, both laws are x = max(0, b_n / A_nn).
    Vec3 x = law == BlockImpactLaw::coulomb && local.mu > 0.0 ? closest_coulomb(local, r_i, i)
                                                              : solve_max_dissipation(local).x;
    x.tail(3 - rows).setZero();
    return x;
  }

  // The Coulomb-like solution nearest to r_i (D-scaled): isolated ones, and the nearest point of
  // each continuum. None can be missing for an SPD block (the problem always has one, Preclik et
  // al. Sec. 2); should the enumeration find none, r_i stays, and the residual says so.
  Vec3 closest_coulomb(const SingleContactProblem& local, const Vec3& r_i, int i) const {
    const CoulombSolutionSet set = enumerate_coulomb_solutions(local);
    Vec3 best = r_i;
    double best_distance = std::numeric_limits<double>::infinity();
    const auto consider = [&](const Vec3& x) {
      const double distance = ((x - r_i) / scale[i]).squaredNorm();
      if (distance < best_distance) {
        best_distance = distance;
        best = x;
      }
    };
    for (const CoulombSolution& solution : set.isolated) consider(solution.x);
    for (const CoulombContinuum& c : set.continua) {
      const double t =
          std::clamp((r_i - c.start).dot(c.direction) / c.direction.squaredNorm(), 0.0, c.length);
      consider(c.start + t * c.direction);
    }
    return best;
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

// The iteration monitor of the three solvers: their criterion is the fixed-point residual (whose
// solutions do not zero the Coulomb merit); SolverStats::merit is the suite's merit of the
// returned r (one Delassus product, at the end).
IterationMonitor residual_monitor(const std::string& solver, const ConeProblem& problem,
                                  const IterativeSolverOptions& options, int threads,
                                  BlockImpactLaw law = BlockImpactLaw::maximum_dissipation) {
  IterationMonitor monitor(solver, problem, options, threads);
  // The Coulomb-like blend stops on the suite's merit, as every Coulomb solver does: a block
  // whose Delassus block is singular keeps its impulse and is left out of the fixed-point
  // residual, so only the merit says that r solves the whole problem.
  if (law == BlockImpactLaw::maximum_dissipation)
    monitor.set_criterion("max_dissipation_residual", options.tolerance);
  return monitor;
}

SolverStats finish(IterationMonitor& monitor, int iterations, const ConeProblem& problem,
                   const VecX& r) {
  monitor.report_merit(merit(problem, r));
  return monitor.finish(iterations);
}

// The local law of md_gs and md_blend: the analytic single-contact solution x*_i, relaxed
// towards the current impulse by omega in md_gs; md_blend takes x*_i inside its ranges and
// blends across them.
struct MaxDissipationLaw {
  const ConeProblem& problem;
  const Blocks& blocks;
  bool relaxed;
  double omega;
  bool active(int i) const { return blocks.active[i]; }
  LocalUpdate solve(int i, const ContactSweep& sweep) const {
    const Vec3 r_i = sweep.impulse(i);
    const Vec3 x = blocks.solve(problem, i, r_i, sweep.velocity(i));
    if (!relaxed) return {x, x - r_i};
    const Vec3 step = omega * (x - r_i);
    return {r_i + step, step};
  }
};

// Residual of r from u = W r + q, the local solves in parallel for large problems; with
// `targets`, the local solutions x*_i too (the Jacobi iteration's next targets).
double residual_from_velocity(const ConeProblem& problem, const Blocks& blocks, const VecX& r,
                              const VecX& u, VecX* targets = nullptr) {
  const int contacts = problem.contact_count();
  const int rows = blocks.rows;
  double sum = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : sum) if (contacts > kParallelContacts)
  for (int i = 0; i < contacts; ++i) {
    if (!blocks.active[i]) continue;
    const Vec3 r_i = blocks.impulse(r, i);
    Vec3 u_i = Vec3::Zero();
    u_i.head(rows) = u.segment(i * rows, rows);
    const Vec3 x = blocks.solve(problem, i, r_i, u_i);
    sum += blocks.residual_term(i, r_i, x);
    if (targets) targets->segment(i * rows, rows) = x.head(rows);
  }
  return blocks.residual(sum);
}

}  // namespace

double max_dissipation_residual(const ConeProblem& problem, const VecX& r, const VecX& u) {
  problem.validate();
  return residual_from_velocity(problem, Blocks(problem), r, u);
}

const OptionTable<MdGaussSeidelOptions>& MdGaussSeidelOptions::fields() {
  static const OptionTable<MdGaussSeidelOptions> table = [] {
    OptionTable<MdGaussSeidelOptions> t;
    add_iterative_fields(t);
    add_relaxation_field(t);
    add_order_fields(t);
    return t;
  }();
  return table;
}

void MdGaussSeidelOptions::validate() const {
  validate_fields(fields(), *this, "MdGaussSeidelOptions");
  ContactOrderOptions::validate(static_cast<int>(custom_order.size()));
}

const OptionTable<MdJacobiOptions>& MdJacobiOptions::fields() {
  static const OptionTable<MdJacobiOptions> table = [] {
    OptionTable<MdJacobiOptions> t;
    add_common_fields(t);
    add_divergence_field(t);
    add_relaxation_field(t);
    return t;
  }();
  return table;
}

void MdJacobiOptions::validate() const { validate_fields(fields(), *this, "MdJacobiOptions"); }

const OptionTable<MdBlendOptions>& MdBlendOptions::fields() {
  static const OptionTable<MdBlendOptions> table = [] {
    OptionTable<MdBlendOptions> t;
    add_iterative_fields(t);
    add_relaxation_field(t);
    return t;
  }();
  return table;
}

void MdBlendOptions::validate() const { validate_fields(fields(), *this, "MdBlendOptions"); }

namespace {
// Maximum-dissipation impact model (Preclik et al.): block solvers over the analytic
// single-contact solver; they take the cone problem's W, q and mu and ignore its friction model.
constexpr SolverLaws kMaximumDissipation{.maximum_dissipation = true};
const SolverRegistrar<MaxDissipationGaussSeidel, MdGaussSeidelOptions> kGaussSeidel{
    "md_gs", kMaximumDissipation,
    "maximum dissipation, block Gauss-Seidel over the analytic single-contact solver "
    "(Preclik et al. Sec. 3.2)"};
const SolverRegistrar<MaxDissipationJacobi, MdJacobiOptions> kJacobi{
    "md_jacobi", kMaximumDissipation,
    "maximum dissipation, weighted block Jacobi (Preclik et al. Sec. 3.2)"};
const SolverRegistrar<MaxDissipationBlend, MdBlendOptions> kBlend{
    "md_blend",
    kMaximumDissipation,
    "maximum dissipation, the blend of block Gauss-Seidel and weighted block Jacobi (Preclik et "
    "al. Sec. 3.2)",
    {},
    [](MdBlendOptions& o) { o.law = BlockImpactLaw::maximum_dissipation; }};
// The same blend with the Coulomb-like single-contact law: the Coulomb side of Preclik et al.'s
// channel flow (Sec. 4.3). Its solutions are those of the Coulomb law the merit measures.
const SolverRegistrar<MaxDissipationBlend, MdBlendOptions> kCoulombBlend{
    "coulomb_blend",
    {.coulomb = true},
    "Coulomb-like impacts, the blend of block Gauss-Seidel and weighted block Jacobi over the "
    "enumerated single-contact solutions (Preclik et al. Sec. 2, 4.3)",
    {},
    [](MdBlendOptions& o) { o.law = BlockImpactLaw::coulomb; }};
}  // namespace

MaxDissipationGaussSeidel::MaxDissipationGaussSeidel(MdGaussSeidelOptions options)
    : ContactSolver(options), md_(std::move(options)) {
  md_.validate();
}

SolverStats MaxDissipationGaussSeidel::solve(const ConeProblem& problem, VecX& r) const {
  constexpr int kThreads = 1;
  md_.ContactOrderOptions::validate(problem.contact_count());
  if (auto empty = begin_solve(name(), problem, options_, kThreads, r)) return *empty;
  IterationMonitor monitor = residual_monitor(name(), problem, options_, kThreads);
  const Blocks blocks(problem);
  const int contacts = problem.contact_count();
  MaxDissipationLaw law{problem, blocks, true, md_.relaxation};
  ContactSweep sweep(problem, r);
  const int iterations = gauss_seidel(
      sweep, visiting_order(md_, contacts), options_, monitor, law, [&](int iteration) {
        double sum = 0.0;
        for (int i = 0; i < contacts; ++i) {
          if (!blocks.active[i]) continue;
          const Vec3 r_i = sweep.impulse(i);
          sum += blocks.residual_term(i, r_i, blocks.solve(problem, i, r_i, sweep.velocity(i)));
        }
        const double residual = blocks.residual(sum);
        return monitor.check(iteration, residual, residual);
      });
  return finish(monitor, iterations, problem, r);
}

MaxDissipationJacobi::MaxDissipationJacobi(MdJacobiOptions options)
    : ContactSolver(iteration_control(options, options.divergence_factor)),
      md_(std::move(options)) {
  md_.validate();
}

SolverStats MaxDissipationJacobi::solve(const ConeProblem& problem, VecX& r) const {
  const int threads = omp_get_max_threads();
  if (auto empty = begin_solve(name(), problem, options_, threads, r)) return *empty;
  IterationMonitor monitor = residual_monitor(name(), problem, options_, threads);
  const DelassusOperator& delassus = *problem.delassus;
  const Blocks blocks(problem);
  const double omega = md_.relaxation;

  // One pass gives both x*(r), the next iterate's target, and the residual of r, so the
  // residual is checked at every iteration at no extra cost.
  VecX u(problem.size());
  VecX target = r;
  int iteration = 0;
  while (true) {
    delassus.apply(r, u);
    u += problem.q;
    const double residual = residual_from_velocity(problem, blocks, r, u, &target);
    if (monitor.check(iteration, residual, residual) || iteration == options_.max_iterations) {
      break;
    }
    r += omega * (target - r);
    ++iteration;
  }
  return finish(monitor, iteration, problem, r);
}

MaxDissipationBlend::MaxDissipationBlend(MdBlendOptions options, int partitions)
    : ContactSolver(options), md_(std::move(options)), partitions_(partitions) {
  md_.validate();
  if (partitions_ < 1) {
    throw InputError("md_blend: partitions = " + std::to_string(partitions_) + " must be >= 1");
  }
}

SolverStats MaxDissipationBlend::solve(const ConeProblem& problem, VecX& r) const {
  const int threads = omp_get_max_threads();
  if (auto empty = begin_solve(name(), problem, options_, threads, r)) return *empty;
  IterationMonitor monitor = residual_monitor(name(), problem, options_, threads, md_.law);
  const DelassusOperator& delassus = *problem.delassus;
  const Blocks blocks(problem, md_.law);
  const int contacts = problem.contact_count();
  const int ranges = std::min(partitions_, contacts);

  VecX u(problem.size());
  auto measure = [&](int iteration) {
    if (md_.law == BlockImpactLaw::coulomb) {
      const double m = merit(problem, r);
      return monitor.check(iteration, m, m);
    }
    delassus.apply(r, u);
    u += problem.q;
    const double residual = residual_from_velocity(problem, blocks, r, u);
    return monitor.check(iteration, residual, residual);
  };
  // Gauss-Seidel inside each range from the common r, each range's result in `target` (the
  // sweeps write disjoint ranges of it), then weighted Jacobi across the ranges.
  VecX target = r;
  std::vector<ContactSweep> sweeps(ranges, ContactSweep(problem, target));
  MaxDissipationLaw law{problem, blocks, false, 1.0};
  int iteration = 0;
  bool stop = measure(0);
  while (!stop && iteration < options_.max_iterations) {
    ++iteration;
#pragma omp parallel for schedule(static, 1)
    for (int p = 0; p < ranges; ++p) {
      const int begin = static_cast<int>(static_cast<long>(contacts) * p / ranges);
      const int end = static_cast<int>(static_cast<long>(contacts) * (p + 1) / ranges);
      sweeps[p].restart(r);
      sweep_contacts(sweeps[p], std::views::iota(begin, end), law);
    }
    r += md_.relaxation * (target - r);
    target = r;
    if (monitor.due(iteration)) stop = measure(iteration);
  }
  return finish(monitor, iteration, problem, r);
}

}  // namespace moreau
