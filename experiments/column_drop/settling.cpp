#include "settling.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "deposit.hpp"
#include "moreau/harness/stepping.hpp"

namespace moreau::column_drop {

using namespace resumable;

namespace {

// The settling's own fields of its checkpoint.
nlohmann::json settle_fields(const Settled& s, bool done) {
  return {{"done", done},
          {"steps", s.steps},
          {"seconds", s.seconds},
          {"height", s.height},
          {"max_overlap", s.max_overlap},
          {"non_converged", s.non_converged}};
}

// Continues the settling from its checkpoint, if any; returns whether it was finished.
bool resume_settling(Settled& s, const Persistence& persistence, const nlohmann::json& identity,
                     variational::ShearHistory& history) {
  if (!persistence.resume) return false;
  const auto checkpoint =
      read_checkpoint(persistence.directory, "column settle", identity, s.world, history);
  if (!checkpoint) return false;
  bool done = false;
  parse_fields(persistence.directory, [&] {
    const nlohmann::json& f = checkpoint->fields;
    done = f.at("done").get<bool>();
    s.steps = f.at("steps").get<long>();
    s.seconds = f.at("seconds").get<double>();
    s.height = f.at("height").get<double>();
    s.max_overlap = f.at("max_overlap").get<double>();
    s.non_converged = f.at("non_converged").get<long>();
  });
  return done;
}

void settle_progress(const Persistence& persistence, Family family, const Settled& s, long limit,
                     const StepReport& report, double seconds) {
  if (persistence.progress == nullptr) return;
  *persistence.progress << name(family) << " settling step " << s.steps << " (at most " << limit
                        << "): t " << s.world.time << ", " << report.contacts.size()
                        << " contacts, " << report.solver_stats.iterations << " IPM iterations, "
                        << duration_text(seconds) << " per step" << std::endl;
}

}  // namespace

Settled settle(const Setup& setup, const ShapeFamilies& shapes, Family family, double margin,
               const Persistence& persistence) {
  Settled s{column_world(setup, shapes, family, 0.5)};
  const double top = highest_point(s.world);
  const double drop = std::max(0.0, top - kAspect * setup.width[static_cast<int>(family)]);
  const double landing_speed = std::sqrt(2.0 * setup.gravity * drop);
  const VariationalOptions options =
      stepper_options(std::max(margin, kMarginFactor * landing_speed * kTimeStep), 1.0);
  const long min_steps = std::lround(std::sqrt(2.0 * top / setup.gravity) / kTimeStep);
  const double weight = kinetic_energy(s.world, kInfinity).mass * setup.gravity * kDiameter;
  const nlohmann::json identity = {{"family", name(family)},
                                   {"particles", setup.particles},
                                   {"gravity", setup.gravity},
                                   {"margin", options.collision.margin}};
  variational::ShearHistory history;
  if (resume_settling(s, persistence, identity, history)) return s;
  auto owned = std::make_unique<VariationalStepper>(s.world, options);
  const VariationalStepper& stepper = *owned;
  owned->resume_at(s.steps);
  owned->resume_shear_history(std::move(history));
  const double start = now_seconds() - s.seconds;
  double saved = now_seconds();
  double step_start = 0.0;
  bool settled = false;
  SteppingRun run(std::move(owned), [&](const Stepper&, const StepReport& report) {
    ++s.steps;
    s.non_converged += report.solver_stats.converged ? 0 : 1;
    for (const Contact& c : report.contacts) s.max_overlap = std::max(s.max_overlap, -c.gap);
    s.seconds = now_seconds() - start;
    settle_progress(persistence, family, s, 2 * min_steps, report, now_seconds() - step_start);
    settled = s.steps >= min_steps && kinetic_energy(s.world, kInfinity).kinetic < 1e-4 * weight;
    if (settled) return;
    const bool interrupt =
        persistence.interrupt_after >= 0 && s.steps >= persistence.interrupt_after;
    if (!persistence.directory.empty() &&
        (interrupt || now_seconds() - saved >= persistence.every_seconds)) {
      write_checkpoint(persistence.directory,
                       {"column settle", identity, settle_fields(s, false), s.steps}, s.world,
                       stepper.shear_history());
      saved = now_seconds();
    }
    if (interrupt)
      throw Interrupted("settling interrupted after " + std::to_string(s.steps) + " steps");
  });
  run.advance_while([&](Stepper&) {
    step_start = now_seconds();
    return !settled && s.steps < 2 * min_steps;
  });
  for (RigidBody& b : s.world.bodies) b.set_velocity(Vec6::Zero());
  s.world.time = 0.0;
  std::vector<SurfaceBin> surface = free_surface(s.world, kBin);
  double sum = 0.0;
  for (const SurfaceBin& b : surface) sum += b.height;
  s.height = surface.empty() ? 0.0 : sum / surface.size();
  if (!persistence.directory.empty())
    write_checkpoint(persistence.directory,
                     {"column settle", identity, settle_fields(s, true), s.steps}, s.world,
                     variational::ShearHistory{});
  return s;
}

}  // namespace moreau::column_drop
