#include "moreau/nlgs/nlgs_solver.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <sstream>
#include <utility>

#include "../solver/iteration_monitor.hpp"
#include "moreau/core/error.hpp"
#include "moreau/solver/merit.hpp"

namespace moreau {
namespace {

template <typename Value>
[[noreturn]] void reject(const std::string& field, const Value& value, const std::string& bound) {
  std::ostringstream message;
  message << field << " = " << value << " " << bound;
  throw InputError(message.str());
}

void require_finite_non_negative(const std::string& field, double value) {
  if (!(value >= 0.0) || !std::isfinite(value)) reject(field, value, "must be finite and >= 0");
}

GlobalErrorTerms& operator+=(GlobalErrorTerms& sum, const GlobalErrorTerms& terms) {
  sum.motion += terms.motion;
  sum.projection += terms.projection;
  sum.bipotential += terms.bipotential;
  sum.penetration += terms.penetration;
  return sum;
}

}  // namespace

void NlgsOptions::validate() const {
  require_finite_non_negative("NlgsOptions.rho_factor", rho_factor);
  require_finite_non_negative("NlgsOptions.epsilon_glob_tolerance", epsilon_glob_tolerance);
  require_finite_non_negative("NlgsOptions.newton_tolerance", newton_tolerance);
  require_finite_non_negative("NlgsOptions.time_step", time_step);
  if (newton_max_iterations < 1) {
    reject("NlgsOptions.newton_max_iterations", newton_max_iterations, "must be >= 1");
  }
}

GlobalErrorTerms contact_error_terms(const Vec3& r, const Vec3& v, const Vec3& u, double mu,
                                     int rows) {
  const auto head = [rows](const Vec3& x) {
    Vec3 out = Vec3::Zero();
    out.head(rows) = x.head(rows);
    return out;
  };
  const Vec3 r_c = head(r), v_c = head(v);
  const double slip = v_c.tail<2>().norm();
  GlobalErrorTerms terms;
  terms.motion = (v_c - head(u)).norm();                                       // eps_motion
  terms.projection = (r_c - project_onto_coulomb_cone(r_c, mu, rows)).norm();  // eps_proj
  terms.bipotential = std::abs(v_c.dot(r_c) + mu * r_c[0] * slip);             // eps_bc, eq. 11-12
  terms.penetration = -std::min(0.0, v_c[0]);                                  // eps_pen
  return terms;
}

NlgsSolver::NlgsSolver(SolverOptions options, NlgsOptions nlgs)
    : ContactSolver(std::move(options)),
      nlgs_(std::move(nlgs)),
      local_(make_local_solver(nlgs_.method)) {
  detail::validate_options(options_);
  nlgs_.validate();
  if (options_.order != ContactOrder::natural) {
    throw InputError(
        "SolverOptions.order: NLGS visits the contacts in natural order (Dumont "
        "Sec. 3.1); other orders are a PGS option");
  }
  if (options_.relaxation != 1.0) {
    reject("SolverOptions.relaxation", options_.relaxation,
           "must be 1 for NLGS: its step is the descent parameter rho (NlgsOptions.rho_factor)");
  }
}

std::string NlgsSolver::name() const { return "nlgs-" + local_->name(); }

SolverStats NlgsSolver::solve(const ConeProblem& problem, VecX& r) const {
  return solve_with_terms(problem, r).common;
}

NlgsStats NlgsSolver::solve_with_terms(const ConeProblem& problem, VecX& r) const {
  constexpr int kThreads = 1;
  NlgsStats stats;
  stats.method = nlgs_.method;
  stats.stopping = nlgs_.stopping;
  stats.rho_factor = nlgs_.rho_factor > 0.0 ? nlgs_.rho_factor : local_->default_rho_factor();
  if (auto empty = detail::begin_solve(name(), problem, options_, kThreads, r)) {
    stats.common = *empty;
    return stats;
  }
  const auto start = std::chrono::steady_clock::now();
  const DelassusOperator& delassus = *problem.delassus;
  const int contacts = problem.contact_count();
  const int rows = problem.rows();
  const double force_scale = nlgs_.time_step > 0.0 ? 1.0 / nlgs_.time_step : 1.0;
  const LocalOptions local_options{nlgs_.newton_tolerance, nlgs_.newton_max_iterations, force_scale,
                                   nlgs_.newton_line_search};

  // W_cc and rho_c = alpha / (W_cc)_nn per contact. A contact whose normal row moves nothing
  // (W_nn = 0) cannot be acted on by its own impulse: it is skipped and keeps its initial r.
  std::vector<Mat3> block(contacts);
  std::vector<double> rho(contacts, 0.0);
  std::vector<double> mu(contacts, 0.0);
  for (int c = 0; c < contacts; ++c) {
    block[c] = delassus.diagonal_block(c);
    if (block[c](0, 0) > 0.0) rho[c] = stats.rho_factor / block[c](0, 0);
    if (rows > 1) mu[c] = problem.mu[c];
  }
  const MeritScaling scaling = merit_scaling(problem);
  VecX work;
  delassus.begin_sweep(r, work);
  const auto motion_velocity = [&](int c) {
    Vec3 q_c = Vec3::Zero();
    q_c.head(rows) = problem.q.segment(c * rows, rows);
    return Vec3(delassus.local_velocity(c, work) + q_c);
  };
  const auto impulse = [&](int c) {
    Vec3 r_c = Vec3::Zero();
    r_c.head(rows) = r.segment(c * rows, rows);
    return r_c;
  };
  // The local velocity unknowns of the Newton methods start at the motion's velocity (chi_0 of
  // eq. 27 with u~^{c,0} from eq. 19).
  std::vector<Vec3> velocity(contacts);
  for (int c = 0; c < contacts; ++c) velocity[c] = motion_velocity(c);

  VecX u(problem.size());
  const auto measure = [&](int iteration, long newton_iterations) {
    NlgsIterate it;
    it.iteration = iteration;
    it.newton_iterations = newton_iterations;
    for (int c = 0; c < contacts; ++c) {
      const Vec3 u_c = motion_velocity(c);
      u.segment(c * rows, rows) = u_c.head(rows);
      const Vec3& v_c = local_->velocity_is_unknown() ? velocity[c] : u_c;
      const GlobalErrorTerms terms =
          contact_error_terms(force_scale * impulse(c), v_c, u_c, mu[c], rows);
      it.terms += terms;
      it.max_penetration = std::max(it.max_penetration, terms.penetration);
    }
    // eq. 37: the mean over contacts.
    it.terms.motion /= contacts;
    it.terms.projection /= contacts;
    it.terms.bipotential /= contacts;
    it.terms.penetration /= contacts;
    it.epsilon_glob = it.terms.total();
    it.merit = merit(problem, scaling, r, u);
    return it;
  };

  double initial_merit = 0.0;
  NlgsIterate last;
  const auto stop_after = [&](const NlgsIterate& it) {
    last = it;
    if (options_.record_history) {
      stats.history.push_back(it);
      stats.common.merit_history.push_back(it.merit);
    }
    if (it.iteration == 0) initial_merit = it.merit;
    if (!std::isfinite(it.merit) || !std::isfinite(it.epsilon_glob) ||
        (it.iteration > 0 && it.merit > options_.divergence_factor * initial_merit)) {
      stats.common.termination = Termination::diverged;
      return true;
    }
    const bool reached = nlgs_.stopping == NlgsStopping::merit
                             ? it.merit <= options_.tolerance
                             : it.epsilon_glob <= nlgs_.epsilon_glob_tolerance;
    if (reached) stats.common.termination = Termination::converged;
    return reached;
  };

  int iteration = 0;
  bool stop = stop_after(measure(0, 0));
  while (!stop && iteration < options_.max_iterations) {
    ++iteration;
    long newton_iterations = 0;
    for (int c = 0; c < contacts; ++c) {
      if (rho[c] == 0.0) continue;
      const Vec3 r_c = impulse(c);
      // eq. 24 with the other contacts frozen: u = W_cc r_c + b.
      const LocalProblem local{block[c], motion_velocity(c) - block[c] * r_c, mu[c], rho[c], rows};
      const LocalResult result = local_->solve(local, r_c, local_options);
      newton_iterations += result.newton_iterations;
      if (!result.newton_converged) ++stats.newton_unconverged;
      // eq. 23: the motion sees the new impulse before the next contact is visited.
      delassus.update_sweep(c, result.r - r_c, work);
      r.segment(c * rows, rows) = result.r.head(rows);
      velocity[c] = result.v;
    }
    stats.newton_iterations += newton_iterations;
    const bool due = iteration % options_.check_every == 0 || iteration == options_.max_iterations;
    if (due) stop = stop_after(measure(iteration, newton_iterations));
  }

  if (stats.common.termination == Termination::not_run) {
    stats.common.termination = Termination::iteration_limit;
  }
  stats.common.solver = name();
  stats.common.converged = stats.common.termination == Termination::converged;
  stats.common.iterations = iteration;
  stats.common.merit = last.merit;
  stats.common.criterion = nlgs_.stopping == NlgsStopping::merit ? "merit" : "epsilon_glob";
  stats.common.criterion_value =
      nlgs_.stopping == NlgsStopping::merit ? last.merit : last.epsilon_glob;
  stats.common.threads = kThreads;
  stats.common.tolerance =
      nlgs_.stopping == NlgsStopping::merit ? options_.tolerance : nlgs_.epsilon_glob_tolerance;
  stats.epsilon_glob = last.epsilon_glob;
  stats.terms = last.terms;
  stats.max_penetration = last.max_penetration;
  stats.common.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return stats;
}

std::vector<std::string> nlgs_solver_names() {
  return {"nlgs-sbp", "nlgs-ebp", "nlgs-sal", "nlgs-eal"};
}

std::unique_ptr<ContactSolver> make_nlgs_solver(const std::string& name,
                                                const SolverOptions& options) {
  return make_nlgs_solver(name, options, NlgsOptions{});
}

std::unique_ptr<ContactSolver> make_nlgs_solver(const std::string& name,
                                                const SolverOptions& options, NlgsOptions nlgs) {
  const std::string prefix = "nlgs-";
  if (name.rfind(prefix, 0) != 0) return nullptr;
  for (const std::string& known : nlgs_solver_names()) {
    if (name != known) continue;
    nlgs.method = local_method_from_string(name.substr(prefix.size()));
    return std::make_unique<NlgsSolver>(options, nlgs);
  }
  return nullptr;
}

}  // namespace moreau
