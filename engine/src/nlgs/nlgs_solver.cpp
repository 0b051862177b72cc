#include "moreau/nlgs/nlgs_solver.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <utility>

#include "moreau/core/error.hpp"
#include "moreau/solver/gauss_seidel.hpp"
#include "moreau/solver/merit.hpp"
#include "moreau/solver/solver_registry.hpp"

namespace moreau {
namespace {

GlobalErrorTerms& operator+=(GlobalErrorTerms& sum, const GlobalErrorTerms& terms) {
  sum.motion += terms.motion;
  sum.projection += terms.projection;
  sum.bipotential += terms.bipotential;
  sum.penetration += terms.penetration;
  return sum;
}

}  // namespace

const OptionTable<NlgsOptions>& NlgsOptions::fields() {
  static const OptionTable<NlgsOptions> table = [] {
    OptionTable<NlgsOptions> t;
    add_iterative_fields(t);
    t.push_back(custom_option<NlgsOptions>("nlgs", "object", "")
                    .described("Dumont's options of the NLGS (section solver.nlgs)"));
    return t;
  }();
  return table;
}

const OptionTable<NlgsOptions>& NlgsOptions::nested_fields() {
  using O = NlgsOptions;
  static const OptionTable<O> table{
      number_option("alpha", &O::rho_factor, Bounds::at_least(0.0))
          .described("alpha of rho = alpha rho_bar (Dumont Sec. 4); 0 takes the method's default"),
      choice_option("stopping", &O::stopping,
                    {{"merit", NlgsStopping::merit}, {"epsilon_glob", NlgsStopping::epsilon_glob}})
          .described("stop on the suite's merit or on Dumont's eps_glob (eq. 37)"),
      number_option("epsilon_glob_tolerance", &O::epsilon_glob_tolerance, Bounds::above(0.0),
                    "m/s + N + W")
          .described("tolerance on eps_glob with stopping epsilon_glob"),
      number_option("newton_tolerance", &O::newton_tolerance, Bounds::above(0.0))
          .described("local Newton tolerance of EBP and EAL (Dumont Sec. 4)"),
      integer_option("newton_max_iterations", &O::newton_max_iterations, Bounds::at_least(1))
          .described("local Newton iterations at most (Dumont Sec. 4)"),
      bool_option("newton_line_search", &O::newton_line_search)
          .described("line search in the local Newton (not in Dumont)"),
  };
  return table;
}

namespace {
// What the program sets rather than a scene: the time step that turns impulses into forces.
const OptionTable<NlgsOptions>& program_fields() {
  static const OptionTable<NlgsOptions> table{
      number_option("time_step", &NlgsOptions::time_step, Bounds::at_least(0.0), "s")};
  return table;
}
}  // namespace

void NlgsOptions::validate() const {
  validate_fields(fields(), *this, "NlgsOptions");
  validate_fields(nested_fields(), *this, "NlgsOptions");
  validate_fields(program_fields(), *this, "NlgsOptions");
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

NlgsSolver::NlgsSolver(NlgsOptions nlgs)
    : ContactSolver(nlgs), nlgs_(std::move(nlgs)), local_(make_local_solver(nlgs_.method)) {
  nlgs_.validate();
}

std::string NlgsSolver::name() const { return "nlgs-" + local_->name(); }

SolverStats NlgsSolver::solve(const ConeProblem& problem, VecX& r) const {
  return solve_with_terms(problem, r).common;
}

namespace {

// The NLGS local law (Dumont eq. 24 with the other contacts frozen, u = W_cc r_c + b), solved by
// one of the four local solvers, with rho_c = alpha / (W_cc)_nn. A contact whose normal row
// moves nothing (W_nn = 0) cannot be acted on by its own impulse: it is skipped and keeps its
// initial r.
struct NlgsLaw {
  const LocalSolver& local;
  LocalOptions options;
  int rows;
  std::vector<Mat3> block;
  std::vector<double> rho;
  std::vector<double> mu;
  // The local velocity unknowns of the Newton methods.
  std::vector<Vec3> velocity;
  long sweep_newton_iterations = 0;
  long newton_iterations = 0;
  long newton_unconverged = 0;

  bool active(int c) const { return rho[c] != 0.0; }
  void begin_sweep() { sweep_newton_iterations = 0; }
  LocalUpdate solve(int c, const ContactSweep& sweep) {
    const Vec3 r_c = sweep.impulse(c);
    const LocalProblem problem{block[c], sweep.velocity(c) - block[c] * r_c, mu[c], rho[c], rows};
    const LocalResult result = local.solve(problem, r_c, options);
    sweep_newton_iterations += result.newton_iterations;
    newton_iterations += result.newton_iterations;
    if (!result.newton_converged) ++newton_unconverged;
    velocity[c] = result.v;
    // eq. 23: the motion sees the new impulse before the next contact is visited.
    return {result.r, result.r - r_c};
  }
};

// Dumont's eps_glob terms (eq. 37: the mean over contacts) and the suite's merit of the
// current iterate.
NlgsIterate measure_iterate(const ConeProblem& problem, const ContactSweep& sweep,
                            const NlgsLaw& law, bool velocity_unknown, double force_scale,
                            const MeritScaling& scaling, const VecX& r, VecX& u) {
  const int contacts = problem.contact_count();
  const int rows = problem.rows();
  NlgsIterate it;
  u.resize(problem.size());
  for (int c = 0; c < contacts; ++c) {
    const Vec3 u_c = sweep.velocity(c);
    u.segment(c * rows, rows) = u_c.head(rows);
    const Vec3& v_c = velocity_unknown ? law.velocity[c] : u_c;
    const GlobalErrorTerms terms =
        contact_error_terms(force_scale * sweep.impulse(c), v_c, u_c, law.mu[c], rows);
    it.terms += terms;
    it.max_penetration = std::max(it.max_penetration, terms.penetration);
  }
  it.terms.motion /= contacts;
  it.terms.projection /= contacts;
  it.terms.bipotential /= contacts;
  it.terms.penetration /= contacts;
  it.epsilon_glob = it.terms.total();
  it.merit = merit(problem, scaling, r, u);
  return it;
}

}  // namespace

NlgsStats NlgsSolver::solve_with_terms(const ConeProblem& problem, VecX& r) const {
  constexpr int kThreads = 1;
  NlgsStats stats;
  stats.method = nlgs_.method;
  stats.stopping = nlgs_.stopping;
  stats.rho_factor = nlgs_.rho_factor > 0.0 ? nlgs_.rho_factor : local_->default_rho_factor();
  if (auto empty = begin_solve(name(), problem, options_, kThreads, r)) {
    stats.common = *empty;
    return stats;
  }
  IterationMonitor monitor(name(), problem, options_, kThreads);
  if (nlgs_.stopping == NlgsStopping::epsilon_glob) {
    monitor.set_criterion("epsilon_glob", nlgs_.epsilon_glob_tolerance);
  }
  const int contacts = problem.contact_count();
  const int rows = problem.rows();
  const double force_scale = nlgs_.time_step > 0.0 ? 1.0 / nlgs_.time_step : 1.0;
  NlgsLaw law{
      *local_,
      {nlgs_.newton_tolerance, nlgs_.newton_max_iterations, force_scale, nlgs_.newton_line_search},
      rows,
      std::vector<Mat3>(contacts),
      std::vector<double>(contacts, 0.0),
      std::vector<double>(contacts, 0.0),
      std::vector<Vec3>(contacts)};
  for (int c = 0; c < contacts; ++c) {
    law.block[c] = problem.delassus->diagonal_block(c);
    if (law.block[c](0, 0) > 0.0) law.rho[c] = stats.rho_factor / law.block[c](0, 0);
    if (rows > 1) law.mu[c] = problem.mu[c];
  }
  ContactSweep sweep(problem, r);
  // The local velocity unknowns start at the motion's velocity (chi_0 of eq. 27 with u~^{c,0}
  // from eq. 19).
  for (int c = 0; c < contacts; ++c) law.velocity[c] = sweep.velocity(c);

  VecX u;
  NlgsIterate last;
  const int iterations = gauss_seidel(
      sweep, visiting_order(ContactOrderOptions{}, contacts), options_, monitor, law,
      [&](int iteration) {
        last = measure_iterate(problem, sweep, law, local_->velocity_is_unknown(), force_scale,
                               monitor.scaling(), r, u);
        last.iteration = iteration;
        last.newton_iterations = law.sweep_newton_iterations;
        if (options_.record_history) stats.history.push_back(last);
        const bool merit_stop = nlgs_.stopping == NlgsStopping::merit;
        return monitor.check(iteration, last.merit, merit_stop ? last.merit : last.epsilon_glob,
                             std::isfinite(last.epsilon_glob));
      });

  stats.common = monitor.finish(iterations);
  stats.newton_iterations = law.newton_iterations;
  stats.newton_unconverged = law.newton_unconverged;
  stats.epsilon_glob = last.epsilon_glob;
  stats.terms = last.terms;
  stats.max_penetration = last.max_penetration;
  return stats;
}

namespace {
// Dumont's NLGS with each of his four local solvers (Sec. 3): Coulomb's law only.
using Registrar = SolverRegistrar<NlgsSolver, NlgsOptions>;
constexpr SolverLaws kCoulomb{.coulomb = true};
std::function<void(NlgsOptions&)> method(LocalMethod local) {
  return [local](NlgsOptions& o) { o.method = local; };
}
const Registrar kSbp{"nlgs-sbp",
                     kCoulomb,
                     "NLGS, Uzawa step on the bi-potential (Dumont eq. 21-22)",
                     {},
                     method(LocalMethod::sbp)};
const Registrar kEbp{"nlgs-ebp",
                     kCoulomb,
                     "NLGS, Newton on the bi-potential (Dumont eq. 24-32)",
                     {},
                     method(LocalMethod::ebp)};
const Registrar kSal{"nlgs-sal",
                     kCoulomb,
                     "NLGS, Uzawa step on the augmented Lagrangian (Dumont eq. 35)",
                     {},
                     method(LocalMethod::sal)};
const Registrar kEal{"nlgs-eal",
                     kCoulomb,
                     "NLGS, Newton on the augmented Lagrangian (Dumont eq. 36)",
                     {},
                     method(LocalMethod::eal)};
}  // namespace

}  // namespace moreau
