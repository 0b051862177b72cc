// Column drop, Krabbenhoft/NURBS chapter Sec. 4.4.2 (Fig. 4.8-4.13): columns of disks, angular
// convex and non-convex particles settled in a box against a smooth wall, then released by
// removing the other side wall; the dynamic variational contact dynamics (eq. 4.15) with
// theta = 0.7, dt = 0.05, k_N = 1e8, k_T = 2 k_N / 3, interparticle mu = 0.5 and 0. See
// README.md for the scene, the units and the measures.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <limits>
#include <map>
#include <numbers>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "deposit.hpp"
#include "moreau/core/error.hpp"
#include "moreau/harness/results.hpp"
#include "moreau/harness/table.hpp"
#include "moreau/model/shape_families.hpp"
#include "moreau/variational/variational_stepper.hpp"
#include "persistence.hpp"

namespace {

using namespace moreau;
using namespace moreau::column_drop;
using namespace moreau::resumable;
using Clock = std::chrono::steady_clock;

// Chapter Sec. 4.4.2.
constexpr double kAspect = 1.68;  // H0 / L0
constexpr double kBaseFriction = 0.5;
constexpr double kTheta = 0.7;
constexpr double kTimeStep = 0.05;
constexpr double kNormalStiffness = 1e8;
constexpr long kPublishedParticles = 1520;
// One of each shape: a smoke test (README.md "Quick and full scale").
constexpr long kQuickParticles = 16;
constexpr long kPublishedStepsFriction = 1600;      // Fig. 4.10: final configurations, mu = 0.5
constexpr long kPublishedStepsFrictionless = 3200;  // Fig. 4.13, mu = 0
// Choices (README.md "Scene"): mean diameter 1 m, density 1 kg/m^2. The time unit follows from
// the motion of one step at the free-fall speed of the column height, sqrt(2 g H0) dt = 0.15 d.
constexpr double kDiameter = 1.0;
constexpr double kDensity = 1.0;
constexpr double kStepMotion = 0.15;  // in mean diameters
// Packing fractions of the settled columns, to size each box for H0 / L0 = 1.68 (measured in a
// first settle of 60 particles per family; the settled H0 / L0 is measured again every run).
constexpr double kPackingDisk = 0.78, kPackingAngular = 0.72, kPackingNonConvex = 0.67;
constexpr double kMarginFactor = 1.2;  // margin = 1.2 x the step motion (as pile_problems)
// Measures (README.md "Measures").
constexpr double kBin = kDiameter;
constexpr double kSlopeLow = 0.1, kSlopeHigh = 0.9;
constexpr double kStoppedEnergy = 1e-3;  // kinetic energy / (N m g d) at the end
constexpr double kStoppedToe = 0.1;      // toe advance over the window, in d

constexpr double kInfinity = std::numeric_limits<double>::infinity();

enum class Family { disk, angular, non_convex };
const char* name(Family f) {
  return f == Family::disk ? "disk" : f == Family::angular ? "angular" : "non_convex";
}

struct Setup {
  long particles = 0;
  double width[3] = {0.0, 0.0, 0.0};  // L0 of each family's box, m
  double gravity = 0.0;               // m/s^2
  long steps_friction = 0, steps_frictionless = 0;
};

double mean_area(const ShapeFamilies& shapes, Family family) {
  double sum = 0.0;
  const std::size_t n = shapes.mean_diameter.size();
  for (std::size_t k = 0; k < n; ++k) {
    if (family == Family::disk)
      sum += std::numbers::pi * shapes.disk_radius[k] * shapes.disk_radius[k];
    else
      sum +=
          polygon_area((family == Family::angular ? shapes.angular : shapes.non_convex)[k].outline);
  }
  return sum / n;
}

// Box widths from the particle count, the packing and the aspect ratio; g so that a step moves a
// particle falling from the top of the non-convex column by kStepMotion diameters; run lengths
// scaled from the paper's step counts by the column height (steps to rest ~ H0 / (sqrt(2 g H0) dt)
// at fixed motion).
Setup make_setup(long particles, const ShapeFamilies& shapes) {
  Setup s;
  s.particles = particles;
  const double packing[3] = {kPackingDisk, kPackingAngular, kPackingNonConvex};
  for (Family f : {Family::disk, Family::angular, Family::non_convex}) {
    const int i = static_cast<int>(f);
    s.width[i] = std::sqrt(particles * mean_area(shapes, f) / (packing[i] * kAspect));
  }
  const double height = kAspect * s.width[static_cast<int>(Family::non_convex)];
  const double speed = kStepMotion * kDiameter / kTimeStep;
  s.gravity = speed * speed / (2.0 * height);
  const double scale = std::sqrt(static_cast<double>(particles) / kPublishedParticles);
  s.steps_friction = std::lround(kPublishedStepsFriction * scale);
  s.steps_frictionless = std::lround(kPublishedStepsFrictionless * scale);
  return s;
}

int add_wall(World& world, const Vec3& normal, const Vec3& position, int material) {
  RigidBody wall;
  wall.motion = Motion::fixed;
  wall.shape.geometry = HalfSpace{normal};
  wall.position = position;
  wall.material = material;
  return world.add_body(wall);
}

void add_particle(World& world, const ShapeFamilies& shapes, Family family, long k,
                  const Vec3& position) {
  RigidBody body;
  const long shape = k % static_cast<long>(shapes.mean_diameter.size());
  if (family == Family::disk)
    body.shape.geometry = Sphere{shapes.disk_radius[shape]};
  else
    body.shape.geometry = (family == Family::angular ? shapes.angular : shapes.non_convex)[shape];
  const MassProperties m = mass_properties(body.shape.geometry, kDensity, Dimension::two);
  body.mass = m.mass;
  body.inertia_body = m.inertia;
  body.position = position;
  const double angle = std::fmod(2.399963229728653 * k, 2.0 * std::numbers::pi);  // golden angle
  body.orientation = Quat(Eigen::AngleAxisd(angle, Vec3::UnitZ()));
  world.add_body(body);
}

double bounding_radius_of(const ShapeFamilies& shapes, Family family) {
  double r = 0.0;
  for (std::size_t k = 0; k < shapes.mean_diameter.size(); ++k)
    r = std::max(r, family == Family::disk      ? shapes.disk_radius[k]
                    : family == Family::angular ? shapes.angular[k].radius
                                                : shapes.non_convex[k].radius);
  return r;
}

// Materials: 0 particles, 1 base (mu 0.5 with particles), 2 the smooth walls (mu 0).
// Bodies: 0 base, 1 symmetry wall at x = 0, 2 the side wall at x = L0 (removed by release),
// then the particles on a loose lattice above the base.
World column_world(const Setup& setup, const ShapeFamilies& shapes, Family family, double mu) {
  const double width = setup.width[static_cast<int>(family)];
  World world;
  world.dimension = Dimension::two;
  world.gravity = Vec3(0.0, -setup.gravity, 0.0);
  world.materials = {Material{"particle", kDensity}, Material{"base", kDensity},
                     Material{"smooth wall", kDensity}};
  world.friction = FrictionTable(mu);
  world.friction.set(0, 1, kBaseFriction);
  world.friction.set(0, 2, 0.0);
  add_wall(world, Vec3::UnitY(), Vec3::Zero(), 1);
  add_wall(world, Vec3::UnitX(), Vec3::Zero(), 2);
  add_wall(world, -Vec3::UnitX(), Vec3(width, 0.0, 0.0), 2);
  const double spacing = 2.0 * bounding_radius_of(shapes, family) + 0.02 * kDiameter;
  const long columns = std::max(1L, static_cast<long>(width / spacing));
  const double pitch = width / columns;
  for (long k = 0; k < setup.particles; ++k) {
    const double shift = 0.5 * (pitch - spacing) * std::sin(1.7 * k);  // seeded, off-lattice
    add_particle(world, shapes, family, k,
                 Vec3((k % columns + 0.5) * pitch + shift, (k / columns + 0.5) * spacing, 0.0));
  }
  return world;
}

// The Newton systems in the body space (3 unknowns per particle, K = I + F D^-1 F^T) instead of
// the cone variables with N = theta dt^2 H^T M^-1 H assembled, whose factorization grows with the
// cube of the contacts per particle: with the vertex-within-margin rule a non-convex particle has
// tens of contact ends, which the cone variables factor in dense blocks. Same equations (eq.
// 4.15); the iterates agree to round-off (docs/variational.md "Cost"), and where the body space
// stalls the core falls back to the cone variables. Measured on this column: README.md, "Body
// space" under "Scene".
constexpr bool kBodySpace = true;

VariationalOptions stepper_options(double margin, double theta) {
  VariationalOptions options;
  options.interior_point.body_space = kBodySpace;
  options.time_step = kTimeStep;
  options.theta = theta;
  options.contact.stiffness = {kNormalStiffness, 2.0 * kNormalStiffness / 3.0};
  options.contact.frictional = true;
  options.collision.margin = margin;
  return options;
}

double highest_point(const World& world) {
  double top = 0.0;
  for (const RigidBody& b : world.bodies)
    if (b.is_dynamic())
      for (const Vec2& p : body_outline(b)) top = std::max(top, p.y());
  return top;
}

struct StepRecord {
  long step = 0;
  double kinetic_energy = 0.0, toe = 0.0, max_overlap = 0.0, seconds = 0.0;
  double energy_ratio = 0.0;    // kinetic energy / (M g d), all particles
  double deposit_energy = 0.0;  // kinetic energy of the deposit / (its m g d)
  long contacts = 0, newton_steps = 0;
  bool converged = true;
  std::string status;  // of the interior point method, for a step that did not converge
};

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

struct Settled {
  World world;
  long steps = 0;
  double seconds = 0.0, height = 0.0, max_overlap = 0.0;
  long non_converged = 0;
};

// Settles the lattice under gravity in the closed box (mu of the particles: 0.5). The chapter
// gives no settling parameters: theta = 1 (e = 0, eq. 4.7) so that the packing does not bounce.
// The fastest approach is the top row landing on the settled column, sqrt(2 g (top - H0)); the
// margin covers one step of it (and is at least the release's). The run stops once the kinetic
// energy is below 1e-4 M g d (a tenth of the release's stop measure, rms speed 1.4% of
// sqrt(g d)), after at least one free-fall time of the lattice top and at most two.
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

// Settles the lattice under gravity in the closed box (mu of the particles: 0.5). The chapter
// gives no settling parameters: theta = 1 (e = 0, eq. 4.7) so that the packing does not bounce.
// The fastest approach is the top row landing on the settled column, sqrt(2 g (top - H0)); the
// margin covers one step of it (and is at least the release's). The run stops once the kinetic
// energy is below 1e-4 M g d (a tenth of the release's stop measure, rms speed 1.4% of
// sqrt(g d)), after at least one free-fall time of the lattice top and at most two.
// Checkpointed in `persistence` (resumable.hpp) and, resuming, continued or read back.
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
  VariationalStepper stepper(s.world, options);
  stepper.resume_at(s.steps);
  stepper.resume_shear_history(std::move(history));
  const double start = now_seconds() - s.seconds;
  double saved = now_seconds();
  while (s.steps < 2 * min_steps) {
    const double step_start = now_seconds();
    const StepReport& report = stepper.step();
    ++s.steps;
    s.non_converged += report.solver_stats.converged ? 0 : 1;
    for (const Contact& c : report.contacts) s.max_overlap = std::max(s.max_overlap, -c.gap);
    s.seconds = now_seconds() - start;
    settle_progress(persistence, family, s, 2 * min_steps, report, now_seconds() - step_start);
    if (s.steps >= min_steps && kinetic_energy(s.world, kInfinity).kinetic < 1e-4 * weight) break;
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
  }
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

struct Snapshot {
  long step = 0;
  std::vector<Vec3> pose;  // x, y, angle of each particle
};

Snapshot snapshot(const World& world, long step) {
  Snapshot s{step, {}};
  for (const RigidBody& b : world.bodies) {
    if (!b.is_dynamic()) continue;
    const Eigen::AngleAxisd a(b.orientation);
    s.pose.emplace_back(b.position.x(), b.position.y(), a.angle() * a.axis().z());
  }
  return s;
}

struct Run {
  Family family = Family::disk;
  double mu = 0.0;
  std::vector<StepRecord> steps;
  std::vector<Snapshot> snapshots;
  std::vector<SurfaceBin> final_surface;
  SlopeFit slope;
  double spread = 0.0, toe_advance = 0.0;
  bool stopped = false;
  std::string label() const { return std::string(name(family)) + (mu > 0 ? "_mu0.5" : "_mu0"); }
};

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

// Removes the side wall (body 2) of the settled column and lets it spread: at least `steps`
// steps (the paper's final configuration, scaled), then until the deposit stops, at most twice
// as many (the paper's mu = 0 run). Checkpointed in `persistence` and, resuming, continued or
// read back.
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
  VariationalStepper stepper(world, stepper_options(margin, kTheta));
  stepper.resume_at(static_cast<long>(run.steps.size()));
  stepper.resume_shear_history(std::move(history));
  const auto window = static_cast<std::size_t>(std::max(1L, steps / 10));
  const double started = now_seconds();
  const std::size_t first = run.steps.size();
  double saved = now_seconds();
  for (long s = static_cast<long>(run.steps.size()) + 1; !finished && s <= 2 * steps; ++s) {
    const Clock::time_point start = Clock::now();
    const StepReport& report = stepper.step();
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    run.steps.push_back(record(world, report, seconds, gravity));
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
  }
  run.final_surface = free_surface(world, kBin);
  run.slope = surface_slope(run.final_surface, kBin, kSlopeLow, kSlopeHigh);
  run.spread = toe(run.final_surface, kBin);
  return run;
}

void write_series(ExperimentResults& results, const std::string& directory,
                  const std::vector<Run>& runs) {
  CsvTable out(results, directory, "series.csv",
               {"run", "step", "kinetic_energy", "energy_ratio", "deposit_energy", "toe",
                "max_overlap", "contacts", "newton_steps", "converged", "seconds"},
               10);
  for (const Run& run : runs)
    for (const StepRecord& r : run.steps)
      out.row(run.label(), r.step, r.kinetic_energy, r.energy_ratio, r.deposit_energy, r.toe,
              r.max_overlap, r.contacts, r.newton_steps, r.converged, r.seconds);
}

void write_snapshots(ExperimentResults& results, const std::string& directory,
                     const std::vector<Run>& runs) {
  CsvTable out(results, directory, "snapshots.csv",
               {"run", "family", "step", "particle", "x", "y", "angle"}, 10);
  for (const Run& run : runs)
    for (const Snapshot& s : run.snapshots)
      for (std::size_t k = 0; k < s.pose.size(); ++k)
        out.row(run.label(), name(run.family), s.step, k, s.pose[k].x(), s.pose[k].y(),
                s.pose[k].z());
  // The free surface at the default 6 digits, as the figures of Fig. 4.10 and 4.13 read it.
  CsvTable profiles(results, directory, "profiles.csv", {"run", "x", "height", "occupied"}, 6);
  for (const Run& run : runs)
    for (const SurfaceBin& b : run.final_surface)
      profiles.row(run.label(), b.x, b.height, b.occupied);
}

// Outlines of shape k of each family in its body frame (particle i has shape i mod 16).
void write_shapes(ExperimentResults& results, const std::string& directory,
                  const ShapeFamilies& shapes) {
  CsvTable out(results, directory, "shapes.csv", {"family", "shape", "vertex", "x", "y"}, 10);
  for (std::size_t k = 0; k < shapes.mean_diameter.size(); ++k) {
    out.row("disk", k, -1, shapes.disk_radius[k], 0);  // radius
    for (Family f : {Family::angular, Family::non_convex}) {
      const Polygon& p = (f == Family::angular ? shapes.angular : shapes.non_convex)[k];
      for (std::size_t v = 0; v < p.outline.size(); ++v)
        out.row(name(f), k, v, p.outline[v].x(), p.outline[v].y());
    }
  }
}

void measure_run(ExperimentResults& results, const Run& run) {
  const std::string p = run.label() + ": ";
  results.measure(p + "final slope", run.slope.angle_deg, "deg",
                  "line fit to the free surface, bins between 10% and 90% of the deposit height");
  results.measure(p + "bins in the slope fit", run.slope.points, "");
  results.measure(p + "deposit height", run.slope.height, "m");
  results.measure(p + "spread (toe from the symmetry wall)", run.spread, "m");
  results.measure(p + "steps run", static_cast<double>(run.steps.size()), "");
  results.measure(p + "kinetic energy at the end / (M g d)", run.steps.back().energy_ratio, "");
  results.measure(p + "deposit kinetic energy at the end / (m g d)",
                  run.steps.back().deposit_energy, "", "particles with centre behind the toe");
  results.measure(p + "toe advance over the last window", run.toe_advance, "m",
                  "window: a tenth of the scaled paper step count");
  results.measure(p + "stopped", run.stopped ? 1.0 : 0.0, "");
  double overlap = 0.0, seconds = 0.0, newton = 0.0;
  long failed = 0;
  std::map<std::string, long> statuses;
  for (const StepRecord& r : run.steps) {
    if (!r.converged) ++statuses[r.status];
    overlap = std::max(overlap, r.max_overlap);
    seconds += r.seconds;
    newton += r.newton_steps;
    failed += r.converged ? 0 : 1;
  }
  const double n = static_cast<double>(run.steps.size());
  results.measure(p + "largest overlap of a step", overlap, "m", "largest -g0 over all contacts");
  results.measure(p + "Newton steps per step (mean)", newton / n, "");
  std::string why;
  for (const auto& [status, count] : statuses)
    why += (why.empty() ? "" : ", ") + status + ": " + std::to_string(count);
  results.measure(p + "steps not converged", failed, "", why);
  results.measure(p + "wall time per step (mean)", seconds / n, "s", "one thread");
}

// The published slopes and spreads (mu = 0.5), checked at full scale only (expected.json).
void published_checks(ExperimentResults& results, const Run& disk, const Run& angular,
                      const Run& non_convex) {
  results.check("slope_disk", disk.slope.angle_deg);
  results.check("slope_angular", angular.slope.angle_deg);
  results.check("slope_non_convex", non_convex.slope.angle_deg);
  results.check("slope_ordering",
                disk.slope.angle_deg < angular.slope.angle_deg &&
                    angular.slope.angle_deg < non_convex.slope.angle_deg,
                "disk < angular < non-convex at mu = 0.5");
  results.check("spread_ratio_disk", disk.spread / non_convex.spread);
  results.check("spread_ratio_angular", angular.spread / non_convex.spread);
}

// runs: disk 0.5, disk 0, angular 0.5, angular 0, non-convex 0.5, non-convex 0.
void check(ExperimentResults& results, const std::vector<Run>& runs, bool full) {
  if (full) published_checks(results, runs[0], runs[2], runs[4]);
  results.check("frictionless_disk_flows", !runs[1].stopped);
  results.check("frictionless_angular_stops", runs[3].stopped);
  results.check("frictionless_non_convex_stops", runs[5].stopped);
  double overlap = 0.0;
  for (const Run& run : runs)
    for (const StepRecord& r : run.steps) overlap = std::max(overlap, r.max_overlap);
  results.check("largest_overlap", overlap / kDiameter, "largest -g0 of any step of any release");
}

}  // namespace

int main(int argc, char** argv) {
  try {
    // README.md "Running": --resume continues every piece from its checkpoint ("Resuming from
    // checkpoints"); --particles sets the count between the two scales; --family and
    // --friction run one family or one of the two releases (both start from the same settled
    // column, so they can run as two processes whose checkpoints are merged), leaving the
    // checks, which compare families and releases, unchecked; --interrupt-after stops every
    // piece after N steps as if killed (resume_test.cmake).
    bool resume = false;
    std::optional<long> count;
    std::optional<std::string> only;
    std::optional<double> only_mu;
    long interrupt_after = -1;
    ExperimentOptions own;
    own.flag("--resume", resume, "continue each piece from its latest checkpoint");
    own.option("--particles", count, "particles per family (default: the scale's)").within(16);
    own.option("--family", only, "run only this family").choices({"disk", "angular", "non_convex"});
    own.option("--friction", only_mu, "run only the release of this mu").choices({"0.5", "0"});
    own.option("--interrupt-after", interrupt_after,
               "test hook: every piece stops after N steps as if killed")
        .within(0);
    const ExperimentArguments args = ExperimentArguments::parse(argc, argv, "column_drop", own);
    Persistence persistence =
        experiment_persistence(args.output_directory, args.full(), resume, std::cerr);
    persistence.interrupt_after = interrupt_after;
    ExperimentResults results("column_drop", args.scale, Reference::load(args.reference_directory));
    const ShapeFamilies shapes = make_shape_families();
    const long particles = count.value_or(args.full() ? kPublishedParticles : kQuickParticles);
    const Setup setup = make_setup(particles, shapes);
    const double margin = kMarginFactor * kStepMotion * kDiameter;
    results.measure("particles per family", particles, "");
    results.measure("gravity (time unit: sqrt(2 g H0) dt = 0.15 d)", setup.gravity, "m/s^2");
    results.measure("collision margin of the release", margin, "m");
    results.measure("steps, mu = 0.5", setup.steps_friction, "");
    results.measure("steps, mu = 0", setup.steps_frictionless, "");
    std::vector<Run> runs;
    for (Family family : {Family::disk, Family::angular, Family::non_convex}) {
      if (only && *only != name(family)) continue;
      const Settled settled = settle(setup, shapes, family, margin,
                                     persistence.child(std::string(name(family)) + "_settle"));
      const std::string p = std::string(name(family)) + ": ";
      results.measure(p + "settling steps", settled.steps, "");
      results.measure(p + "settling wall time", settled.seconds, "s");
      const double aspect = settled.height / setup.width[static_cast<int>(family)];
      results.measure(p + "settled H0 / L0", aspect, "");
      if (!only) results.check(std::string("settled_aspect_") + name(family), aspect);
      results.measure(p + "settling, largest overlap", settled.max_overlap, "m");
      results.measure(p + "settling, steps not converged", settled.non_converged, "");
      std::cerr << "column_drop: " << name(family) << " settled in " << settled.steps << " steps ("
                << settled.seconds << " s), H0/L0 = " << aspect << "\n";
      for (double mu : {0.5, 0.0}) {
        if (only_mu && mu != *only_mu) continue;
        const long steps = mu > 0 ? setup.steps_friction : setup.steps_frictionless;
        const std::string piece = std::string(name(family)) + (mu > 0 ? "_mu0.5" : "_mu0");
        runs.push_back(
            release(settled, family, mu, steps, margin, setup.gravity, persistence.child(piece)));
        measure_run(results, runs.back());
        std::cerr << "column_drop: " << runs.back().label() << " slope "
                  << runs.back().slope.angle_deg << " spread " << runs.back().spread << "\n";
      }
    }
    if (runs.size() == 6) check(results, runs, args.full());
    write_series(results, args.output_directory, runs);
    write_snapshots(results, args.output_directory, runs);
    write_shapes(results, args.output_directory, shapes);
    for (const char* f : {"column_drop_mu05.png", "column_drop_mu0.png", "column_drop_profiles.png",
                          "column_drop_series.png"})
      results.add_file(f, "figure");
    results.write(args.output_directory);
    return results.exit_code();
  } catch (const std::exception& e) {
    std::cerr << "column_drop: error: " << e.what() << "\n";
    return 2;
  }
}
