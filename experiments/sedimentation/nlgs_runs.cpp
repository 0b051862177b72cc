#include "nlgs_runs.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <memory>

#include "moreau/collision/collision_detector.hpp"
#include "moreau/harness/stepping.hpp"
#include "moreau/integrator/theta_stepper.hpp"
#include "moreau/model/shape.hpp"

namespace sedimentation {

using namespace moreau;

namespace {

std::unique_ptr<NlgsSolver> make_nlgs(LocalMethod method, double alpha, const Settings& s) {
  NlgsOptions nlgs;
  nlgs.max_iterations = kMaxIterations;
  nlgs.method = method;
  nlgs.rho_factor = alpha;
  nlgs.stopping = NlgsStopping::epsilon_glob;
  nlgs.epsilon_glob_tolerance = s.epsilon_glob;
  nlgs.time_step = s.time_step;  // eps_glob with forces, as Dumont
  nlgs.newton_tolerance = s.newton_tolerance;
  nlgs.newton_line_search = s.newton_line_search;
  return std::make_unique<NlgsSolver>(nlgs);
}

ThetaOptions theta_options(const Settings& s) {
  ThetaOptions options;
  options.time_step = s.time_step;
  options.theta = 0.5;  // Dumont eq. 18 and the final update
  options.collision.margin = s.margin;
  return options;
}

}  // namespace

Outcome run(const std::string& label, const World& initial, LocalMethod method, double alpha,
            const Settings& s) {
  World world = initial;
  auto stepper =
      std::make_unique<ThetaStepper>(world, theta_options(s), make_nlgs(method, alpha, s));
  Outcome out;
  out.label = label;
  out.method = method;
  const std::clock_t start = std::clock();
  std::clock_t step_start = start;
  if (s.steps == 1) out.before_last = world;
  run_steps(std::move(stepper), s.steps, [&](const Stepper&, const StepReport& report) {
    const long k = report.step;
    const bool last = k == s.steps;
    StepRow row{k,        static_cast<long>(report.contacts.size()),
                0,        0.0,
                0.0,      static_cast<double>(std::clock() - step_start) / CLOCKS_PER_SEC,
                "not_run"};
    if (const NlgsStats* nlgs = nlgs_stats(report)) {
      row.iterations = nlgs->common.iterations;
      row.epsilon_glob = nlgs->epsilon_glob;
      row.max_penetration = nlgs->max_penetration;
      row.termination = to_string(nlgs->common.termination);
      if (!nlgs->common.converged) ++out.unconverged_steps;
      if (last) out.last = *nlgs;
    }
    out.rows.push_back(row);
    if (k + 1 == s.steps) out.before_last = world;  // the state the last step starts from
    step_start = std::clock();
  });
  out.cpu_seconds = static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
  out.final_world = world;
  return out;
}

NlgsStats probe(const World& state, LocalMethod method, double alpha, const Settings& s) {
  World world = state;
  ThetaStepper stepper(world, theta_options(s), make_nlgs(method, alpha, s));
  const StepReport& report = stepper.step();
  const NlgsStats* nlgs = nlgs_stats(report);
  return nlgs ? *nlgs : NlgsStats{};
}

double max_overlap(const World& world) {
  double worst = 0.0;
  for (const Contact& c : detect_contacts(world, CollisionOptions{}))
    worst = std::max(worst, -c.gap);
  return worst;
}

int iterations_of(const std::vector<Outcome>& outcomes, LocalMethod method) {
  for (const Outcome& o : outcomes)
    if (o.method == method) return o.last.common.iterations;
  return -1;
}

double penetration_of(const std::vector<Outcome>& outcomes, LocalMethod method) {
  for (const Outcome& o : outcomes)
    if (o.method == method) return o.last.max_penetration;
  return std::nan("");
}

void write_steps(CsvTable& out, const std::string& part, const Outcome& o) {
  for (const StepRow& r : o.rows)
    out.row(part, o.label, r.step, r.contacts, r.iterations, r.epsilon_glob, r.max_penetration,
            r.cpu_seconds, r.termination);
}

void write_history(CsvTable& out, const std::string& part, const Outcome& o) {
  for (const NlgsIterate& it : o.last.history)
    out.row(part, o.label, it.iteration, it.terms.motion, it.terms.projection, it.terms.bipotential,
            it.terms.penetration, it.epsilon_glob);
}

void write_positions(CsvTable& out, const std::string& part, const std::string& label,
                     const World& world) {
  for (const RigidBody& b : world.bodies)
    if (b.is_dynamic())
      out.row(part, label, b.position.x(), b.position.y(), b.position.z(),
              std::get<Sphere>(b.shape.geometry).radius);
}

}  // namespace sedimentation
