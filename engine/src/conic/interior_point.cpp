#include "moreau/conic/interior_point.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "kkt_system.hpp"
#include "moreau/conic/jordan_algebra.hpp"
#include "moreau/core/error.hpp"

namespace moreau::conic {

std::string to_string(LinearBackend backend) {
  return backend == LinearBackend::cholmod ? "cholmod" : "conjugate_gradient";
}

std::string to_string(BodySpacePreconditioner preconditioner) {
  return preconditioner == BodySpacePreconditioner::body_blocks ? "body_blocks"
                                                                : "symmetric_gauss_seidel";
}

std::string to_string(InteriorPointStatus status) {
  switch (status) {
    case InteriorPointStatus::converged:
      return "converged";
    case InteriorPointStatus::iteration_limit:
      return "iteration_limit";
    case InteriorPointStatus::diverged:
      return "diverged";
    case InteriorPointStatus::not_positive_definite:
      return "not_positive_definite";
    case InteriorPointStatus::numerical_limit:
      return "numerical_limit";
    case InteriorPointStatus::krylov_limit:
      return "krylov_limit";
    case InteriorPointStatus::dependent_equalities:
      return "dependent_equalities";
  }
  return "unknown";
}

const OptionTable<InteriorPointOptions>& InteriorPointOptions::fields() {
  using O = InteriorPointOptions;
  static const OptionTable<O> table{
      number_option("tolerance", &O::tolerance, Bounds::at_least(0))
          .described("on the largest of the residuals and the complementarity"),
      integer_option("max_newton_steps", &O::max_newton_steps, Bounds::at_least(0))
          .described("Newton steps at most"),
      integer_option("stall_newton_steps", &O::stall_newton_steps, Bounds::at_least(0))
          .described("stop when the residuals have not halved in this many Newton steps (0: off)"),
      choice_option("backend", &O::backend,
                    {{"conjugate_gradient", LinearBackend::conjugate_gradient},
                     {"cholmod", LinearBackend::cholmod}})
          .described("the Newton systems' solver: CG (matrix-free) or CHOLMOD"),
      integer_option("max_krylov_iterations", &O::max_krylov_iterations, Bounds::at_least(1))
          .described("CG iterations at most per linear solve"),
      number_option("max_forcing", &O::max_forcing, Bounds::open(0, 1))
          .described("upper bound of the inexact-Newton forcing term of CG"),
      number_option("predictor_forcing", &O::predictor_forcing, Bounds::open(0, 1))
          .described("forcing term of the predictor's CG solve"),
      number_option("predictor_relative_residual", &O::predictor_relative_residual,
                    Bounds::closed(0, 1))
          .described("where > 0: relative residual of the predictor's CG solve instead"),
      number_option("min_forcing", &O::min_forcing, Bounds::left_open(0, 1))
          .described("smallest forcing term (at most max_forcing)"),
      number_option("step_fraction", &O::step_fraction, Bounds::open(0, 1))
          .described("fraction of the step to the cone boundary"),
      bool_option("body_space", &O::body_space)
          .described("solve the Newton system in the body space where N = F^T F"),
      bool_option("assemble_body_space", &O::assemble_body_space)
          .described("assemble the body-space matrix K at each Newton step"),
      choice_option("preconditioner", &O::body_space_preconditioner,
                    {{"symmetric_gauss_seidel", BodySpacePreconditioner::symmetric_gauss_seidel},
                     {"body_blocks", BodySpacePreconditioner::body_blocks}})
          .described("preconditioner of the body-space CG"),
      bool_option("warm_start_corrector", &O::warm_start_corrector)
          .described("start the corrector's CG from the predictor's solution"),
      bool_option("augmented_kkt", &O::augmented_kkt)
          .described("direct back-end with N = F^T F: factor the KKT matrix [C + W^2, F^T; F, -I]"),
      bool_option("dense_schur_complement", &O::dense_schur_complement)
          .described("eliminate equality rows by a dense Schur complement (comparison only)"),
  };
  return table;
}

void InteriorPointOptions::validate() const {
  validate_fields(fields(), *this, "InteriorPointOptions");
  if (min_forcing > max_forcing)
    throw OptionError("min_forcing", shortest_text(min_forcing) + " exceeds max_forcing " +
                                         shortest_text(max_forcing));
}

namespace {

// Guards the relative measures against a zero normalizer (r = 0, whose solution is x = 0).
constexpr double kTiny = 1e-300;
// Steps below this fraction make no progress: the iterates are stuck at the cone boundary,
// which happens when the problem has no solution (infeasible or unbounded).
constexpr double kSmallestStep = 1e-12;
constexpr int kStalledStepsAllowed = 5;
// Newton steps with inexact directions (CG at its iteration cap) whose residuals stay above
// the best so far (times kProgressFactor) before the method gives up.
constexpr int kUnproductiveStepsAllowed = 3;
constexpr double kProgressFactor = 0.9;
// The stall rule (InteriorPointOptions::stall_newton_steps) asks the residuals to halve.
constexpr double kStallProgress = 0.5;
// Residuals below which a singular Newton matrix is blamed on rounding, not on N (the Newton
// matrix's condition number ~ 1/mu exceeds 1/epsilon about there).
constexpr double kNumericalLimitResidual = 1e-6;
// Below this many cones a block loop costs less than an OpenMP fork/join.
constexpr int kParallelCones = 2048;
// Growth of |x| beyond which the iterates are taken to diverge (see unbounded()).
constexpr double kUnboundedGrowth = 1e8;
// Dependent equality rows named in the status message.
constexpr std::size_t kRowsNamed = 10;

class Solver {
 public:
  Solver(const ConicQp& problem, const InteriorPointOptions& options)
      : problem_(problem),
        options_(options),
        dims_(problem.cone_dimensions),
        offsets_(cone_offsets(problem.cone_dimensions)),
        cones_(static_cast<int>(problem.cone_dimensions.size())),
        equality_rows_(static_cast<int>(problem.equality.rows())),
        system_(detail::make_kkt_system(problem, options)),
        scalings_(problem.cone_dimensions.size()),
        scaling_squared_(problem.cone_dimensions.size()),
        inverse_scaling_squared_(problem.cone_dimensions.size()) {}

  InteriorPointStats run(VecX& x, VecX& y, VecX& z, bool warm_start, const StopTest& stop) {
    VecX least_norm;  // of A x = b (equality rows only)
    std::vector<int> dependent;
    if (equality_rows_ > 0) {
      detail::EqualityRows rows(problem_.equality);
      least_norm = rows.least_norm_solution(problem_.equality_rhs);
      dependent = relaxed() ? unrelaxed_dependent_rows() : rows.dependent();
    }
    initial_point(least_norm, warm_start, x, y, z);
    if (!dependent.empty()) return dependent_equalities(dependent);
    VecX hx(x.size());  // (N + C) x
    const double r_norm = std::max(problem_.linear.norm(), kTiny);
    const double b_norm = problem_.equality_rhs.size() > 0 ? problem_.equality_rhs.norm() : 0.0;
    int stalled = 0;
    for (;;) {
      apply_hessian(x, hx);
      VecX residual = hx + problem_.linear - y;  // primal residual of y = (N + C) x + r - A^T z
      VecX equality_residual;
      if (equality_rows_ > 0) {
        residual -= problem_.equality.transpose() * z;
        equality_residual = problem_.equality_rhs - problem_.equality * x;
        if (relaxed()) equality_residual -= problem_.equality_relaxation.cwiseProduct(z);
        stats_.equality_residual =
            equality_residual.norm() / std::max({b_norm, (problem_.equality * x).norm(), kTiny});
      }
      const double xy = x.dot(y);
      x_norm_ = x.norm();
      if (stats_.newton_steps == 0) {
        initial_x_norm_ = x_norm_;
        initial_y_norm_ = y.norm();
      }
      if (equality_rows_ > 0) multiplier_norm_ = (problem_.equality.transpose() * z).norm();
      stats_.mu = xy / std::max(cones_, 1);
      stats_.primal_residual = residual.norm() / r_norm;
      stats_.gap = xy / std::max(x.norm() * r_norm, kTiny);
      double products = 0.0;
      for (int k = 0; k < cones_; ++k) {
        products += jordan_product(cone(x, k), cone(y, k), dims_[k]).squaredNorm();
      }
      stats_.complementarity = std::sqrt(products) / std::max(x.norm() * r_norm, kTiny);
      if (!x.allFinite() || !y.allFinite() || !std::isfinite(stats_.primal_residual)) {
        return finish(InteriorPointStatus::diverged, "a non-finite iterate");
      }
      const bool done = stop ? stop({x, y, z, stats_}) : largest_residual() <= options_.tolerance;
      if (done) return finish(InteriorPointStatus::converged, "");
      // Directions from linear solves that missed their forcing term: stop once the residuals
      // no longer improve (the iterates would wander at the accuracy the CG reaches).
      const double progress = std::max(stats_.primal_residual, stats_.complementarity);
      if (last_step_inexact_ && progress > kProgressFactor * best_progress_) {
        ++unproductive_;
      } else {
        unproductive_ = 0;
      }
      best_progress_ = std::min(best_progress_, progress);
      if (unproductive_ >= kUnproductiveStepsAllowed) {
        return finish(InteriorPointStatus::krylov_limit,
                      "the CG stopped at max_krylov_iterations = " +
                          std::to_string(options_.max_krylov_iterations) +
                          " short of the forcing term and the residuals stopped decreasing");
      }

      if (largest_residual() < kStallProgress * stall_reference_) {
        stall_reference_ = largest_residual();
        stall_start_ = stats_.newton_steps;
      }
      if (options_.stall_newton_steps > 0 &&
          stats_.newton_steps - stall_start_ >= options_.stall_newton_steps)
        return stopped_by_stall();
      if (stats_.newton_steps >= options_.max_newton_steps) {
        if (unbounded()) return diverged_without_bound();
        if (infeasible()) return infeasible_equalities();
        return finish(
            InteriorPointStatus::iteration_limit,
            "max_newton_steps = " + std::to_string(options_.max_newton_steps) + " reached");
      }
      ++stats_.newton_steps;
      int& krylov = step_krylov_;
      krylov = 0;

      // Nesterov-Todd scaling of every cone and the Newton matrix N + C + W^2 (first step:
      // from x and y; later steps: updated from the scaled step, see update_scaling).
      if (stats_.newton_steps == 1) initial_scaling(x, y);
#pragma omp parallel for schedule(static) if (cones_ > kParallelCones)
      for (int k = 0; k < cones_; ++k) {
        scaling_squared_[k] = scalings_[k].a.transpose() * scalings_[k].a;
        inverse_scaling_squared_[k] =
            scalings_[k].a_inverse_transpose.transpose() * scalings_[k].a_inverse_transpose;
      }
      system_->set_inverse_scaling(inverse_scaling_squared_);
      int elimination = 0;  // Krylov iterations of the dense Schur complement, if any
      const bool factored = system_->set_scaling(scaling_squared_, elimination);
      krylov += elimination;
      if (!factored) return not_positive_definite();

      // Predictor (affine scaling, sigma = 0): lambda o (W dx + W^-1 dy) = -lambda o lambda.
      std::vector<Vec3> target(cones_);
      for (int k = 0; k < cones_; ++k) target[k] = -jordan_product(lambda(k), lambda(k), dims_[k]);
      VecX dx, dy, dz;
      // Inexact Newton (Kleinert et al. 2014): the CG residual lands in the primal residual
      // of the next iterate, so it is bounded by a forcing term times the current primal
      // residual plus the complementarity x^T y / |x| (both in velocity units, both -> 0).
      // Only the corrector's direction moves the iterates; the predictor's sets sigma and the
      // second-order term, and is solved to the looser predictor_forcing (or to the relative
      // residual predictor_relative_residual, InteriorPointOptions says why).
      const double newton_scale = residual.norm() + xy / std::max(x.norm(), kTiny);
      const bool relative_predictor = options_.predictor_relative_residual > 0.0;
      const double predictor_tolerance = relative_predictor
                                             ? std::numeric_limits<double>::infinity()
                                             : options_.predictor_forcing * newton_scale;
      const double predictor_relative =
          relative_predictor ? options_.predictor_relative_residual : options_.max_forcing;
      if (!newton_direction(target, residual, equality_residual, predictor_tolerance,
                            predictor_relative, false, dx, dy, dz, krylov)) {
        return not_positive_definite();
      }
      bool inexact_step = !system_->reached_tolerance();
      const double affine_step = std::min(1.0, max_step(dx, dy));
      const double mu_affine =
          (x + affine_step * dx).dot(y + affine_step * dy) / std::max(cones_, 1);
      const double sigma = std::clamp(std::pow(mu_affine / stats_.mu, 3), 0.0, 1.0);

      // Corrector: lambda o (W dx + W^-1 dy) = -lambda o lambda - (W dx_a) o (W^-1 dy_a)
      // + sigma mu e (Mehrotra's second-order term in the scaled space).
      for (int k = 0; k < cones_; ++k) {
        const int dim = dims_[k];
        const Vec3 scaled_dx = scalings_[k].a * cone(dx, k);
        const Vec3 scaled_dy = scalings_[k].a_inverse_transpose * cone(dy, k);
        target[k] +=
            -jordan_product(scaled_dx, scaled_dy, dim) + sigma * stats_.mu * jordan_identity(dim);
      }
      // Forcing term of the inexact Newton step tied to the centering (Kleinert et al. 2014).
      const double forcing = std::clamp(sigma, options_.min_forcing, options_.max_forcing);
      if (!newton_direction(target, residual, equality_residual, forcing * newton_scale,
                            options_.max_forcing, options_.warm_start_corrector, dx, dy, dz,
                            krylov)) {
        return not_positive_definite();
      }
      inexact_step = inexact_step || !system_->reached_tolerance();
      const double step = std::min(1.0, options_.step_fraction * max_step(dx, dy));
      update_scaling(step, dx, dy);
      x += step * dx;
      y += step * dy;
      if (equality_rows_ > 0) z += step * dz;
      stats_.krylov_iterations_per_step.push_back(krylov);
      stats_.krylov_iterations += krylov;
      last_step_inexact_ = inexact_step;
      stalled = step < kSmallestStep ? stalled + 1 : 0;
      if (stalled >= kStalledStepsAllowed) {
        // Steps stall at the cone boundary both when the iterates run off along a ray (no
        // solution, named as such) and when rounding limits the direction near the solution.
        if (unbounded()) return diverged_without_bound();
        if (infeasible()) return infeasible_equalities();
        if (near_solution()) {
          return finish(InteriorPointStatus::numerical_limit,
                        "the step length fell below " + std::to_string(kSmallestStep) +
                            " close to the solution (rounding in the Newton direction)");
        }
        return finish(InteriorPointStatus::diverged,
                      "the step length fell below " + std::to_string(kSmallestStep) +
                          " (no solution: the problem is infeasible or unbounded)");
      }
    }
  }

 private:
  Vec3 cone(const VecX& v, int k) const {
    Vec3 c = Vec3::Zero();
    c.head(dims_[k]) = v.segment(offsets_[k], dims_[k]);
    return c;
  }
  const Vec3& lambda(int k) const { return scalings_[k].lambda; }

  void initial_scaling(const VecX& x, const VecX& y) {
    for (int k = 0; k < cones_; ++k) {
      const NesterovToddScaling nt = nesterov_todd_scaling(cone(x, k), cone(y, k), dims_[k]);
      scalings_[k] = {nt.w, nt.w_inverse, nt.lambda};
    }
  }

  // The scaling follows the iterates in the scaled space (as in CVXOPT): the scaled points
  // x~ = lambda + t A dx and y~ = lambda + t A^-T dy are well centered, so their NT scaling
  // W~ is computed accurately, and A <- W~ A, lambda <- W~ x~. Recomputing the NT scaling
  // from x and y instead loses the small spectral values of iterates close to the cone
  // boundary (x_0 - |x_1| cancels), which stalls the method near 1e-8. A stays a product of
  // cone automorphisms, A x = A^-T y = lambda, and A^T A is the NT W^2 of (x, y).
  void update_scaling(double step, const VecX& dx, const VecX& dy) {
#pragma omp parallel for schedule(static) if (cones_ > kParallelCones)
    for (int k = 0; k < cones_; ++k) {
      ConeScaling& scaling = scalings_[k];
      const Vec3 x_scaled = scaling.lambda + step * (scaling.a * cone(dx, k));
      const Vec3 y_scaled = scaling.lambda + step * (scaling.a_inverse_transpose * cone(dy, k));
      const NesterovToddScaling nt = nesterov_todd_scaling(x_scaled, y_scaled, dims_[k]);
      scaling.a = nt.w * scaling.a;
      scaling.a_inverse_transpose = nt.w_inverse * scaling.a_inverse_transpose;
      scaling.lambda = nt.lambda;
    }
  }

  void apply_hessian(const VecX& v, VecX& out) const {
    problem_.hessian->apply(v, out);
    if (problem_.compliance.size() > 0) out += problem_.compliance.cwiseProduct(v);
  }

  // Cold start: x = x_scale e, y = y_scale e with y_scale the size of r and x_scale = y_scale /
  // (mean diagonal of N + C), so that both are of the magnitude of the solution in their own
  // units. With equality rows A x = b sets the size of x instead (in a static problem the
  // loads set the forces; r and N + C = C, which is 0 when rigid, do not): x starts from the
  // least-norm solution of A x = b shifted into the cones by x_scale = its largest entry, as
  // CVXOPT's starting point shifts its least-squares one. Warm start: the given x shifted into
  // the interior by the same margin.
  void initial_point(const VecX& least_norm, bool warm_start, VecX& x, VecX& y, VecX& z) const {
    const int n = problem_.size();
    double diagonal = 0.0;
    for (int k = 0; k < cones_; ++k) {
      diagonal += problem_.hessian->diagonal_block(offsets_[k], dims_[k]).trace();
    }
    if (problem_.compliance.size() > 0) diagonal += problem_.compliance.sum();
    diagonal = n > 0 ? diagonal / n : 0.0;
    const double r_size = problem_.linear.size() > 0 ? problem_.linear.cwiseAbs().maxCoeff() : 0.0;
    const double y_scale = r_size > 0.0 ? r_size : 1.0;
    double x_scale = y_scale / (diagonal > 0.0 ? diagonal : 1.0);
    const bool use_guess = warm_start && x.size() == n && x.allFinite();
    if (!use_guess) x = VecX::Zero(n);
    if (least_norm.size() == n && least_norm.cwiseAbs().maxCoeff() > 0.0) {
      x_scale = least_norm.cwiseAbs().maxCoeff();
      if (!use_guess) x = least_norm;
    }
    y = VecX::Zero(n);
    for (int k = 0; k < cones_; ++k) {
      const Vec3 given = cone(x, k);
      const double shift = std::max(0.0, -spectral_values(given, dims_[k])[0]) + x_scale;
      x[offsets_[k]] = given[0] + shift;
      y[offsets_[k]] = y_scale;
    }
    if (!(warm_start && z.size() == equality_rows_ && z.allFinite()))
      z = VecX::Zero(equality_rows_);
  }

  // Largest common step keeping x + t dx and y + t dy in C, measured in the scaled space
  // (A is a cone automorphism: x + t dx in C <=> lambda + t A dx in C), where it is accurate.
  double max_step(const VecX& dx, const VecX& dy) const {
    double step = std::numeric_limits<double>::infinity();
    for (int k = 0; k < cones_; ++k) {
      const ConeScaling& scaling = scalings_[k];
      step = std::min(step, max_step_in_cone(scaling.lambda, scaling.a * cone(dx, k), dims_[k]));
      step = std::min(step, max_step_in_cone(scaling.lambda,
                                             scaling.a_inverse_transpose * cone(dy, k), dims_[k]));
    }
    return step;
  }

  // Solves (N + C + A^T A) dx - A^T dz = A^T (lambda \ target) - residual (A^T A = W^2),
  // A dx + E dz = equality_residual, to the residual min(tolerance, relative_tolerance |rhs|)
  // (relative_tolerance at most max_forcing), then dy = A^T (lambda \ target - A dx) from the
  // scaled complementarity row, so that the step is consistent with the scaled-space update of the
  // scaling; the linear solve's error (CG) lands in the primal residual, which the next
  // Newton right-hand side contains and removes.
  //
  // Except along the stiff directions of a cone's Newton block (an eigenvalue of C + W^2 far
  // above the cone's coupling to the rest of the system, kkt_system.hpp): there dy is taken
  // from the primal row, dy = (N + C) dx - A^T dz + residual. Near the solution W^2 grows like
  // 1/mu along the direction in which a contact opens or slides, and a direct solve's rounding
  // error e in that row, of size epsilon |W^2 dx|, grows with it: left in the primal residual
  // it reaches the tolerance (3e-8 of |r| on a sliding disk contact with W^2 at 1e16, the
  // iterates then stall there). From the primal row the same error enters the complementarity
  // row as A^-T e, divided by the square root of that eigenvalue: rounding. The soft
  // directions keep the complementarity form, where A^-T would instead amplify e.
  bool newton_direction(const std::vector<Vec3>& target, const VecX& residual,
                        const VecX& equality_residual, double tolerance, double relative_tolerance,
                        bool warm_start, VecX& dx, VecX& dy, VecX& dz, int& krylov) {
    const int n = problem_.size();
    VecX scaled_target(n), rhs(n);
    for (int k = 0; k < cones_; ++k) {
      const int dim = dims_[k];
      const Vec3 t = jordan_divide(lambda(k), target[k], dim);
      scaled_target.segment(offsets_[k], dim) = t.head(dim);
      rhs.segment(offsets_[k], dim) = (scalings_[k].a.transpose() * t).head(dim);
    }
    rhs -= residual;
    int iterations = 0;
    // Never looser than max_forcing relative to the right-hand side itself (a zero direction
    // would otherwise pass).
    tolerance =
        std::min(tolerance, std::min(relative_tolerance, options_.max_forcing) * rhs.norm());
    if (!system_->solve(rhs, equality_residual, tolerance, warm_start, dx, dz, iterations)) {
      return false;
    }
    krylov += iterations;
    dy.resize(n);
    for (int k = 0; k < cones_; ++k) {
      const int dim = dims_[k];
      const Vec3 t = cone(scaled_target, k) - scalings_[k].a * cone(dx, k);
      dy.segment(offsets_[k], dim) = (scalings_[k].a.transpose() * t).head(dim);
    }
    if (system_->has_stiff_directions()) {
      VecX primal_row_dy(n);
      apply_hessian(dx, primal_row_dy);
      primal_row_dy += residual;
      if (equality_rows_ > 0) primal_row_dy -= problem_.equality.transpose() * dz;
      dy += system_->stiff_projection(primal_row_dy - dy);
    }
    return true;
  }

  // The measure of the default stop test: the largest relative residual.
  double largest_residual() const {
    return std::max({stats_.primal_residual, stats_.equality_residual, stats_.complementarity});
  }

  // A failed factorization or a CG breakdown (p^T H p <= 0). Far along the central path
  // W^2 ~ 1/mu makes H so ill-conditioned that rounding alone can cause it: that is the
  // numerical limit of the method, reported as such. A non-finite scaling means an iterate
  // reached the cone boundary (a step-length failure, W^2 is then undefined), not that N is
  // indefinite; otherwise N is indefinite.
  bool near_solution() const { return largest_residual() < kNumericalLimitResidual; }

  // Iterates that grew by kUnboundedGrowth: a problem without solution (the primal objective
  // unbounded below along a ray of C with A d = 0, i.e. the dual infeasible: in a static
  // problem, no displacement of the bodies keeps every contact admissible), whose Newton
  // matrix degenerates as x grows; it then ends with a failed factorization or the step
  // limit, reported as what it is.
  bool unbounded() const { return x_norm_ > kUnboundedGrowth * initial_x_norm_; }

  InteriorPointStats diverged_without_bound() {
    return finish(InteriorPointStatus::diverged,
                  "the iterates grew without bound (|x| over 1e8 times its start): no solution, "
                  "the objective is unbounded below (the dual is infeasible; in a static "
                  "problem: no admissible displacement)");
  }

  // Multipliers whose image A^T z grew by kUnboundedGrowth over the start's y while the
  // equality residual stays: A x = b has no solution in the cones (primal infeasible; in a
  // static problem, loads that the contacts cannot equilibrate), z follows the Farkas ray.
  bool infeasible() const {
    return equality_rows_ > 0 && multiplier_norm_ > kUnboundedGrowth * initial_y_norm_ &&
           stats_.equality_residual > options_.tolerance;
  }

  InteriorPointStats infeasible_equalities() {
    return finish(InteriorPointStatus::diverged,
                  "the multipliers z grew without bound (|A^T z| over 1e8 times the start's y) "
                  "while A x = b stayed unmet: no solution, the equality constraints cannot be "
                  "met in the cones (primal infeasible; in a static problem: loads the contacts "
                  "cannot equilibrate)");
  }

  // No halving of the residuals in stall_newton_steps Newton steps.
  InteriorPointStats stopped_by_stall() {
    if (unbounded()) return diverged_without_bound();
    if (infeasible()) return infeasible_equalities();
    const std::string window = std::to_string(options_.stall_newton_steps);
    if (near_solution()) {
      return finish(InteriorPointStatus::numerical_limit,
                    "the residuals did not halve in " + window +
                        " Newton steps close to the solution (rounding in the Newton direction)");
    }
    return finish(InteriorPointStatus::iteration_limit,
                  "the residuals did not halve in " + window +
                      " Newton steps (stall_newton_steps): stalled short of the tolerance");
  }

  InteriorPointStats not_positive_definite() {
    if (unbounded()) return diverged_without_bound();
    if (infeasible()) return infeasible_equalities();
    if (near_solution()) {
      return finish(InteriorPointStatus::numerical_limit,
                    "the Newton matrix N + C + W^2 became numerically singular (W^2 ~ 1/mu) "
                    "before the tolerance was met");
    }
    for (const ConeScaling& scaling : scalings_) {
      if (!scaling.a.allFinite() || !scaling.lambda.allFinite()) {
        return finish(InteriorPointStatus::diverged,
                      "an iterate reached the cone boundary: its Nesterov-Todd scaling W is "
                      "not finite");
      }
    }
    return finish(InteriorPointStatus::not_positive_definite,
                  "the Newton matrix N + C + W^2 is not positive definite (N is not positive "
                  "semi-definite)");
  }

  bool relaxed() const { return problem_.equality_relaxation.size() > 0; }

  // The rows of A x + E z = b that leave z non-unique: a dependent combination of the rows with
  // E = 0 (a relaxed row's multiplier is fixed by its own E z).
  std::vector<int> unrelaxed_dependent_rows() const {
    std::vector<int> rigid;
    for (int i = 0; i < equality_rows_; ++i) {
      if (problem_.equality_relaxation(i) == 0.0) rigid.push_back(i);
    }
    if (rigid.empty()) return {};
    std::vector<Eigen::Triplet<double>> triplets;
    for (int k = 0; k < static_cast<int>(rigid.size()); ++k) {
      for (SparseMatrix::InnerIterator it(problem_.equality, rigid[k]); it; ++it)
        triplets.emplace_back(k, static_cast<int>(it.col()), it.value());
    }
    SparseMatrix rows(static_cast<int>(rigid.size()), problem_.equality.cols());
    rows.setFromTriplets(triplets.begin(), triplets.end());
    const detail::EqualityRows rigid_rows(rows);
    std::vector<int> dependent;
    for (const int k : rigid_rows.dependent()) dependent.push_back(rigid[k]);
    return dependent;
  }

  InteriorPointStats dependent_equalities(const std::vector<int>& rows) {
    std::ostringstream message;
    message << rows.size() << " of the " << equality_rows_
            << " equality rows are linearly dependent on the others (rows";
    const std::size_t shown = std::min<std::size_t>(rows.size(), kRowsNamed);
    for (std::size_t k = 0; k < shown; ++k) message << " " << rows[k];
    if (shown < rows.size()) message << " ...";
    message << "): the multipliers z of A x = b are not unique (in a static problem: a "
               "mechanism, a body whose contacts cannot resist one of its motions)";
    return finish(InteriorPointStatus::dependent_equalities, message.str());
  }

  InteriorPointStats finish(InteriorPointStatus status, const std::string& message) {
    // A step cut short by a breakdown still reports its Krylov iterations.
    if (static_cast<int>(stats_.krylov_iterations_per_step.size()) < stats_.newton_steps) {
      stats_.krylov_iterations_per_step.push_back(step_krylov_);
      stats_.krylov_iterations += step_krylov_;
    }
    stats_.status = status;
    stats_.message = message;
    return stats_;
  }

  const ConicQp& problem_;
  const InteriorPointOptions& options_;
  const std::vector<int>& dims_;
  std::vector<int> offsets_;
  int cones_;
  int equality_rows_;
  std::unique_ptr<detail::KktSystem> system_;
  // Per cone: A with A x = A^-T y = lambda (A^T A = W^2 of Nesterov-Todd).
  struct ConeScaling {
    Mat3 a;
    Mat3 a_inverse_transpose;
    Vec3 lambda;
  };
  std::vector<ConeScaling> scalings_;
  std::vector<Mat3> scaling_squared_;
  std::vector<Mat3> inverse_scaling_squared_;  // W^-2 = A^-1 A^-T
  InteriorPointStats stats_;
  int step_krylov_ = 0;           // Krylov iterations of the current Newton step
  double x_norm_ = 0.0;           // |x| of the current iterate
  double initial_x_norm_ = 0.0;   // and of the starting point
  double initial_y_norm_ = 0.0;   // |y| of the starting point
  double multiplier_norm_ = 0.0;  // |A^T z| of the current iterate
  double best_progress_ = std::numeric_limits<double>::infinity();
  int unproductive_ = 0;
  double stall_reference_ =
      std::numeric_limits<double>::infinity();  // largest_residual() at stall_start_
  int stall_start_ = 0;  // Newton step of the last halving of largest_residual()
  bool last_step_inexact_ = false;
};

}  // namespace

InteriorPointStats solve_conic_qp(const ConicQp& problem, const InteriorPointOptions& options,
                                  VecX& x, VecX& y, VecX& z, bool warm_start,
                                  const StopTest& stop) {
  problem.validate();
  options.validate();
  Solver solver(problem, options);
  return solver.run(x, y, z, warm_start, stop);
}

}  // namespace moreau::conic
