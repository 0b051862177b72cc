#include "release.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>
#include <utility>

#include "moreau/harness/stepping.hpp"

namespace moreau::column_drop {

using namespace resumable;
using Clock = std::chrono::steady_clock;

namespace {

StepRecord record(const World& world, const StepReport& report, double seconds, double gravity) {
  StepRecord r;
  r.step = report.step;
  r.toe = toe(free_surface(world, kBin), kBin);
  const Energy all = kinetic_energy(world, kInfinity);
  r.kinetic_energy = all.kinetic;
  r.energy_ratio = all.kinetic / (all.mass * gravity * kDiameter);
  const Energy deposit = kinetic_energy(world, r.toe);
  r.deposit_energy =
      deposit.mass > 0.0 ? deposit.kinetic / (deposit.mass * gravity * kDiameter) : 0.0;
  for (const Contact& c : report.contacts) r.max_overlap = std::max(r.max_overlap, -c.gap);
  r.contacts = static_cast<long>(report.contacts.size());
  r.newton_steps = report.solver_stats.iterations;
  r.converged = report.solver_stats.converged;
  if (!r.converged) r.status = conic::to_string(variational_details(report).interior_point.status);
  r.seconds = seconds;
  return r;
}

Snapshot snapshot(const World& world, long step) {
  Snapshot s{step, {}};
  for (const RigidBody& b : world.bodies) {
    if (!b.is_dynamic()) continue;
    const Eigen::AngleAxisd a(b.orientation);
    s.pose.emplace_back(b.position.x(), b.position.y(), a.angle() * a.axis().z());
  }
  return s;
}

bool is_snapshot_step(long step, long total) {
  for (long fraction : {16L, 8L, 4L, 2L})
    if (step == total / fraction) return true;
  return false;
}

// The column has stopped when the kinetic energy of all particles is below kStoppedEnergy M g d
// and the toe moved less than kStoppedToe d over the last `window` steps.
bool has_stopped(const std::vector<StepRecord>& steps, std::size_t window, double* advance) {
  if (steps.size() <= window) return false;
  *advance = steps.back().toe - steps[steps.size() - 1 - window].toe;
  return steps.back().energy_ratio < kStoppedEnergy && *advance < kStoppedToe * kDiameter;
}

nlohmann::json record_json(const StepRecord& r) {
  return nlohmann::json::array({r.step, r.kinetic_energy, r.toe, r.max_overlap, r.seconds,
                                r.energy_ratio, r.deposit_energy, r.contacts, r.newton_steps,
                                r.converged, r.status});
}

StepRecord record_from(const nlohmann::json& j) {
  if (!j.is_array() || j.size() != 11)
    throw nlohmann::json::other_error::create(501, "steps: expected 11 values per step", &j);
  StepRecord r;
  r.step = j[0].get<long>();
  r.kinetic_energy = j[1].get<double>();
  r.toe = j[2].get<double>();
  r.max_overlap = j[3].get<double>();
  r.seconds = j[4].get<double>();
  r.energy_ratio = j[5].get<double>();
  r.deposit_energy = j[6].get<double>();
  r.contacts = j[7].get<long>();
  r.newton_steps = j[8].get<long>();
  r.converged = j[9].get<bool>();
  r.status = j[10].get<std::string>();
  return r;
}

nlohmann::json release_fields(const Run& run, bool finished) {
  nlohmann::json steps = nlohmann::json::array(), snapshots = nlohmann::json::array();
  for (const StepRecord& r : run.steps) steps.push_back(record_json(r));
  for (const Snapshot& snap : run.snapshots) {
    nlohmann::json pose = nlohmann::json::array();
    for (const Vec3& p : snap.pose) pose.push_back({p.x(), p.y(), p.z()});
    snapshots.push_back({{"step", snap.step}, {"pose", pose}});
  }
  return {{"finished", finished},
          {"stopped", run.stopped},
          {"toe_advance", run.toe_advance},
          {"steps", steps},
          {"snapshots", snapshots}};
}

// Continues a release from its checkpoint, if any; returns whether it was finished.
bool resume_release(Run& run, World& world, const Persistence& persistence,
                    const nlohmann::json& identity, variational::ShearHistory& history) {
  if (!persistence.resume) return false;
  const auto checkpoint =
      read_checkpoint(persistence.directory, "column release", identity, world, history);
  if (!checkpoint) return false;
  bool finished = false;
  parse_fields(persistence.directory, [&] {
    const nlohmann::json& f = checkpoint->fields;
    finished = f.at("finished").get<bool>();
    run.stopped = f.at("stopped").get<bool>();
    run.toe_advance = f.at("toe_advance").get<double>();
    for (const nlohmann::json& r : f.at("steps")) run.steps.push_back(record_from(r));
    run.snapshots.clear();
    for (const nlohmann::json& snap : f.at("snapshots")) {
      Snapshot one{snap.at("step").get<long>(), {}};
      for (const nlohmann::json& p : snap.at("pose"))
        one.pose.emplace_back(p.at(0).get<double>(), p.at(1).get<double>(), p.at(2).get<double>());
      run.snapshots.push_back(std::move(one));
    }
  });
  return finished;
}

void release_progress(const Persistence& persistence, const Run& run, long steps, double started,
                      std::size_t first) {
  if (persistence.progress == nullptr || run.steps.empty()) return;
  const StepRecord& r = run.steps.back();
  const double per_step = (now_seconds() - started) / static_cast<double>(run.steps.size() - first);
  *persistence.progress << run.label() << " step " << r.step << " (" << steps << " to " << 2 * steps
                        << "): t " << r.step * kTimeStep << ", toe " << r.toe << ", E/(M g d) "
                        << r.energy_ratio << ", " << r.newton_steps << " IPM iterations, "
                        << r.contacts << " contacts, " << duration_text(r.seconds)
                        << " this step, ETA to step " << steps << " "
                        << duration_text(per_step * std::max(0L, steps - r.step)) << std::endl;
}

}  // namespace

Run release(const Settled& settled, Family family, double mu, long steps, double margin,
            double gravity, const Persistence& persistence) {
  Run run;
  run.family = family;
  run.mu = mu;
  World world = settled.world;
  world.bodies.erase(world.bodies.begin() + 2);
  world.friction = FrictionTable(mu);
  world.friction.set(0, 1, kBaseFriction);
  world.friction.set(0, 2, 0.0);
  const nlohmann::json identity = {{"run", run.label()}, {"particles", settled.world.bodies.size()},
                                   {"steps", steps},     {"margin", margin},
                                   {"gravity", gravity}, {"settling_steps", settled.steps}};
  run.snapshots.push_back(snapshot(world, 0));
  variational::ShearHistory history;
  bool finished = resume_release(run, world, persistence, identity, history);
  auto owned = std::make_unique<VariationalStepper>(world, stepper_options(margin, kTheta));
  const VariationalStepper& stepper = *owned;
  owned->resume_at(static_cast<long>(run.steps.size()));
  owned->resume_shear_history(std::move(history));
  const auto window = static_cast<std::size_t>(std::max(1L, steps / 10));
  const double started = now_seconds();
  const std::size_t first = run.steps.size();
  double saved = now_seconds();
  Clock::time_point start;
  SteppingRun stepping(std::move(owned), [&](const Stepper&, const StepReport& report) {
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    run.steps.push_back(record(world, report, seconds, gravity));
    const long s = static_cast<long>(run.steps.size());
    run.stopped = has_stopped(run.steps, window, &run.toe_advance);
    finished = s == 2 * steps || (s >= steps && run.stopped);
    if (finished || s == steps || (s < steps && is_snapshot_step(s, steps)))
      run.snapshots.push_back(snapshot(world, s));
    release_progress(persistence, run, steps, started, first);
    const bool interrupt = persistence.interrupt_after >= 0 && s >= persistence.interrupt_after;
    if (!persistence.directory.empty() &&
        (finished || interrupt || now_seconds() - saved >= persistence.every_seconds)) {
      write_checkpoint(persistence.directory,
                       {"column release", identity, release_fields(run, finished), s}, world,
                       stepper.shear_history());
      saved = now_seconds();
    }
    if (interrupt && !finished)
      throw Interrupted(run.label() + " interrupted after step " + std::to_string(s));
  });
  stepping.advance_while([&](Stepper&) {
    start = Clock::now();
    return !finished && static_cast<long>(run.steps.size()) < 2 * steps;
  });
  run.final_surface = free_surface(world, kBin);
  run.slope = surface_slope(run.final_surface, kBin, kSlopeLow, kSlopeHigh);
  run.spread = toe(run.final_surface, kBin);
  return run;
}

}  // namespace moreau::column_drop
