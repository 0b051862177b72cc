// Preparation of the biaxial sample (Krabbenhoft/NURBS chapter Sec. 4.4.1). The chapter shows
// its three assemblies (Fig. 4.3) but not how they were made; here the particles are poured from
// loose rows into a box of fixed width and settled under gravity by the chapter's own dynamic
// scheme (eq. 4.15) with little friction (mu = 0.1) so that they pack densely, then pressed by
// servo walls (README.md).
#include "sample.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "moreau/core/error.hpp"
#include "moreau/harness/resumable_run.hpp"
#include "moreau/harness/stepping.hpp"
#include "moreau/model/shape_families.hpp"
#include "moreau/variational/variational_stepper.hpp"

namespace biaxial {

using namespace moreau;
using namespace moreau::resumable;

namespace {

constexpr double kGravity = 9.81;  // m/s^2, settling only
constexpr double kDensity = 1.0;   // kg/m^2 (per unit thickness); the static test has no mass
// m: the collision margin of the settling. Its steps are shortened so that no point of a particle
// moves more than half of it (settling_step).
constexpr double kSettleMargin = 0.15;
constexpr double kRestSpeed = 0.02;      // m/s: at rest below (largest, mean: see each use)
constexpr long kMaxSettleFailures = 20;  // non-converged settling steps tolerated
// Servo walls: 0.5 m/s is 5 mm per step, a thirtieth of the margin; the walls must travel up
// to a diameter or two (the rows leave up to a diameter free at the right wall, the settled
// surface is uneven by about one).
constexpr double kServoSpeed = 0.5;  // m/s: largest wall speed of the consolidation
constexpr double kServoBand = 0.25;  // a wall carrying 0.75 of the target is loaded
constexpr int kServoHold = 10;       // steps both walls stay loaded and the particles at rest

int add_wall(World& world, const Vec3& normal, const Vec3& position, int material) {
  RigidBody wall;
  wall.motion = Motion::prescribed;  // moved by the static driver, never by the dynamics
  wall.shape.geometry = HalfSpace{normal};
  wall.position = position;
  wall.material = material;
  return world.add_body(wall);
}

ShapeGeometry particle_shape(const ShapeFamilies& families, Family family, int shape) {
  switch (family) {
    case Family::disk:
      return Sphere{families.disk_radius[shape]};
    case Family::angular:
      return families.angular[shape];
    case Family::non_convex:
      break;
  }
  return families.non_convex[shape];
}

double bounding_radius_of(const ShapeGeometry& geometry) {
  if (const auto* polygon = std::get_if<Polygon>(&geometry)) return polygon->radius;
  return std::get<Sphere>(geometry).radius;
}

// Points that bound the particle in the world frame (outline vertices, or a disk's extremes).
std::vector<Vec3> extreme_points(const RigidBody& body) {
  std::vector<Vec3> points;
  if (const auto* polygon = std::get_if<Polygon>(&body.shape.geometry)) {
    for (const Vec2& v : polygon->outline)
      points.push_back(body.position + body.orientation * Vec3(v.x(), v.y(), 0.0));
  } else {
    const double r = std::get<Sphere>(body.shape.geometry).radius;
    for (const Vec3& d : {Vec3(1, 0, 0), Vec3(-1, 0, 0), Vec3(0, 1, 0)})
      points.push_back(body.position + r * d);
  }
  return points;
}

// Loose rows: particle k is shape k mod 16 at a seeded (golden-angle) orientation, placed left
// to right with its bounding circle clear of its neighbour's, rows a bounding diameter apart.
void pour_rows(World& world, const ShapeFamilies& families, Family family, int count,
               double width) {
  double x = 0.0, y = 0.0, row_height = 0.0;
  for (int k = 0; k < count; ++k) {
    const int shape = k % static_cast<int>(families.mean_diameter.size());
    RigidBody body;
    body.shape.geometry = particle_shape(families, family, shape);
    const double r = bounding_radius_of(body.shape.geometry) * 1.02;
    if (x + 2.0 * r > width) {
      x = 0.0;
      y += row_height;
      row_height = 0.0;
    }
    const MassProperties m = mass_properties(body.shape.geometry, kDensity, Dimension::two);
    body.mass = m.mass;
    body.inertia_body = m.inertia;
    body.position = Vec3(x + r, y + r, 0.0);
    body.orientation = Quat(Eigen::AngleAxisd(std::fmod(2.399963 * k, 2.0 * M_PI), Vec3::UnitZ()));
    world.add_body(body);
    x += 2.0 * r;
    row_height = std::max(row_height, 2.0 * r);
  }
}

// Mean particle speed: the consolidation's measure of rest. Not the largest or the rms speed:
// without gravity a rattler keeps drifting at a few cm/s until its next impact (hundreds of
// steps at 200 disks), carries no load of the static step, and in a sample of 40 particles
// one such rattler alone sets the rms speed.
double mean_speed(const World& world) {
  double sum = 0.0;
  int count = 0;
  for (const RigidBody& b : world.bodies) {
    if (!b.is_dynamic()) continue;
    sum += b.velocity().head<3>().norm();
    ++count;
  }
  return count > 0 ? sum / count : 0.0;
}

double largest_speed(const World& world) {
  double speed = 0.0;
  for (const RigidBody& b : world.bodies)
    if (b.is_dynamic()) speed = std::max(speed, b.velocity().head<3>().norm());
  return speed;
}

// The settling's dt: settle_step, shortened so that no point of a particle moves more than half
// the margin in the step (the fastest point speed |v| + |omega| R, R the bounding radius, plus
// the g dt gravity adds). Two particles that approach head-on then close at most the margin, so
// no pair the collision detection left out can meet within the step. Without it the rows of a
// tall pour land at up to sqrt(2 g h): 38 m/s at the top of the 123 m non-convex pour of the
// full scale, 0.38 m per 0.01 s step against the 0.15 m margin; with such steps a sample of
// 1,520 non-convex particles keeps two of them interlocked 0.16 m deep (README.md
// "Preparation").
double settling_step(const World& world, double longest) {
  double speed = 0.0;
  for (const RigidBody& b : world.bodies) {
    if (!b.is_dynamic()) continue;
    const Vec6 v = b.velocity();
    speed = std::max(
        speed, v.head<3>().norm() + v.tail<3>().norm() * bounding_radius_of(b.shape.geometry));
  }
  speed += world.gravity.norm() * longest;
  return speed > 0.0 ? std::min(longest, 0.5 * kSettleMargin / speed) : longest;
}

// The dynamic scheme of the preparation (eq. 4.15), theta = 1: e = 0 (eq. 4.7), the most
// dissipative theta, to come to rest quickly.
VariationalOptions preparation_options(const SampleOptions& options) {
  VariationalOptions dynamic;
  dynamic.time_step = options.settle_step;
  dynamic.theta = 1.0;
  dynamic.contact.stiffness = {1e8, 2e8 / 3.0};
  dynamic.collision.margin = kSettleMargin;
  // Preparation only: a looser stop test than the experiment's static solves (1e-8), since the
  // core stalls near 1e-8 on some frictional packings (README.md).
  dynamic.interior_point.tolerance = 1e-6;
  return dynamic;
}

// The preparation between two dynamic steps: the sample, the phase, the servo's count of
// balanced steps, and where it saves (moreau/harness/resumable_run.hpp).
struct Preparation {
  Sample sample;
  std::string phase = "settle";       // settle, consolidate, done
  int balanced = 0;                   // consolidation steps in a row in equilibrium
  variational::ShearHistory history;  // of the checkpoint resumed from
  Persistence persistence;
  nlohmann::json identity;  // sample_identity
  double last_save = 0.0;
};

nlohmann::json sample_identity(const SampleOptions& o) {
  return {{"family", to_string(o.family)},
          {"count", o.count},
          {"aspect", o.aspect},
          {"settle_friction", o.settle_friction},
          {"settle_time", o.settle_time},
          {"max_servo_steps", o.max_servo_steps},
          {"settle_step", o.settle_step},
          {"settle_motion_limit", 0.5 * kSettleMargin},
          {"stress", o.stress}};
}

nlohmann::json sample_fields(const Preparation& p) {
  const Sample& s = p.sample;
  return {{"phase", p.phase},
          {"balanced", p.balanced},
          {"box", {s.box.left, s.box.right, s.box.bottom, s.box.top}},
          {"settle_steps", s.settle_steps},
          {"consolidation_steps", s.consolidation_steps},
          {"settle_failures", s.settle_failures},
          {"settle_newton_steps", s.settle_newton_steps},
          {"settle_seconds", s.settle_seconds},
          {"shortened_settle_steps", s.shortened_settle_steps},
          {"shortest_settle_step", s.shortest_settle_step},
          {"largest_overlap", s.largest_overlap},
          {"porosity", s.porosity},
          {"top_stress", s.top_stress},
          {"right_stress", s.right_stress},
          {"final_speed", s.final_speed},
          {"consolidated", s.consolidated}};
}

void read_sample_fields(const nlohmann::json& f, Preparation& p) {
  Sample& s = p.sample;
  p.phase = f.at("phase").get<std::string>();
  p.balanced = f.at("balanced").get<int>();
  s.settle_steps = f.at("settle_steps").get<long>();
  s.consolidation_steps = f.at("consolidation_steps").get<long>();
  s.settle_failures = f.at("settle_failures").get<long>();
  s.settle_newton_steps = f.at("settle_newton_steps").get<long>();
  s.settle_seconds = f.at("settle_seconds").get<double>();
  s.shortened_settle_steps = f.at("shortened_settle_steps").get<long>();
  s.shortest_settle_step = f.at("shortest_settle_step").get<double>();
  s.largest_overlap = f.at("largest_overlap").get<double>();
  s.porosity = f.at("porosity").get<double>();
  s.top_stress = f.at("top_stress").get<double>();
  s.right_stress = f.at("right_stress").get<double>();
  s.final_speed = f.at("final_speed").get<double>();
  s.consolidated = f.at("consolidated").get<bool>();
  if (p.phase != "settle" && p.phase != "consolidate" && p.phase != "done")
    throw nlohmann::json::other_error::create(501, "phase: unknown \"" + p.phase + "\"", &f);
}

// Saves the preparation when `force`d or due (moreau/harness/resumable_run.hpp); then stops it
// where the test hook asks.
void save(Preparation& p, const variational::ShearHistory& history, bool force) {
  const Persistence& persistence = p.persistence;
  if (persistence.directory.empty()) return;
  const long total = p.sample.settle_steps + p.sample.consolidation_steps;
  if (force || now_seconds() - p.last_save >= persistence.every_seconds) {
    write_checkpoint(persistence.directory, {"biaxial sample", p.identity, sample_fields(p), total},
                     p.sample.world, history);
    p.last_save = now_seconds();
  }
  if (persistence.interrupt_after >= 0 && total >= persistence.interrupt_after && p.phase != "done")
    throw Interrupted("preparation interrupted after " + std::to_string(total) + " steps");
}

void report_progress(const Preparation& p, long step, long limit, const StepReport& report,
                     double seconds) {
  if (p.persistence.progress == nullptr) return;
  *p.persistence.progress << to_string(p.sample.family) << " sample, " << p.phase << " step "
                          << step << "/" << limit << ": t " << p.sample.world.time << " s, "
                          << report.contacts.size() << " contacts, "
                          << report.solver_stats.iterations << " IPM iterations, "
                          << duration_text(seconds) << " per step, mean speed "
                          << mean_speed(p.sample.world) << " m/s" << std::endl;
}

void settle(Preparation& p, const SampleOptions& options, bool resumed) {
  Sample& sample = p.sample;
  auto owned = std::make_unique<VariationalStepper>(sample.world, preparation_options(options));
  VariationalStepper& stepper = *owned;
  if (resumed) {
    stepper.resume_at(sample.settle_steps);
    stepper.resume_shear_history(p.history);
  }
  const double start = now_seconds() - sample.settle_seconds;
  // The steps of settle_step that settle_time holds, for the progress line; shortened steps
  // make more of them.
  const long steps = std::lround(options.settle_time / options.settle_step);
  double step_start = 0.0;
  bool rested = false;
  SteppingRun run(std::move(owned), [&](const Stepper&, const StepReport& report) {
    if (!report.solver_stats.converged && ++sample.settle_failures > kMaxSettleFailures)
      throw SimulationError("settling: " + std::to_string(sample.settle_failures) +
                            " steps did not converge, the last (" +
                            std::to_string(sample.settle_steps + 1) +
                            "): " + variational_details(report).interior_point.message);
    ++sample.settle_steps;
    sample.settle_newton_steps += report.solver_stats.iterations;
    for (const Contact& c : report.contacts)
      sample.largest_overlap = std::max(sample.largest_overlap, -c.gap);
    sample.settle_seconds = now_seconds() - start;
    report_progress(p, sample.settle_steps, steps, report, now_seconds() - step_start);
    rested =
        sample.world.time > 0.25 * options.settle_time && largest_speed(sample.world) < kRestSpeed;
    if (!rested) save(p, stepper.shear_history(), false);
  });
  // Each step is as long as the fastest particle allows (settling_step), the last one ends at
  // settle_time.
  run.advance_while([&](Stepper&) {
    if (rested || !(sample.world.time < options.settle_time - 1e-9)) return false;
    step_start = now_seconds();
    const double limited = settling_step(sample.world, options.settle_step);
    const double dt = std::min(limited, options.settle_time - sample.world.time);
    if (limited < options.settle_step) {
      const bool first = sample.shortened_settle_steps++ == 0;
      sample.shortest_settle_step = first ? dt : std::min(sample.shortest_settle_step, dt);
    }
    stepper.set_time_step(dt);
    return true;
  });
}

// Force of the particles on a wall along its normal, from the step's contact forces.
double wall_force(const StepReport& report, int wall) {
  const VariationalStepDetails& d = variational_details(report);
  double force = 0.0;
  for (std::size_t i = 0; i < report.contacts.size(); ++i)
    if (report.contacts[i].body_a == wall || report.contacts[i].body_b == wall)
      force += d.forces(2 * static_cast<Eigen::Index>(i));
  return force;
}

// Dynamic servo consolidation: without gravity, the top and right walls move in at a speed
// proportional to the shortfall of their force below stress * (the wall's length), at most
// kServoSpeed, and stop (never retreat) once they carry it; it ends when both walls carry the
// stress and every particle is at rest for kServoHold steps, i.e. in equilibrium under the
// isotropic stress, which the static reference step (eq. 4.16 with both stress walls
// force-driven) needs: a particle that a stress wall pushes must be held by contacts on its
// other side. The walls never retreat: with contacts of k_N = 1e8 the force of a jammed sample
// goes from 0 to many times the target within a micrometre of wall travel, and a servo that
// also pulled the walls back oscillated (forces 10 times the target, never balanced); an
// overshoot is an elastic overlap that the static reference step releases.
void consolidate(Preparation& p, const SampleOptions& options, bool resumed) {
  Sample& sample = p.sample;
  World& world = sample.world;
  world.gravity = Vec3::Zero();
  auto owned = std::make_unique<VariationalStepper>(world, preparation_options(options));
  const VariationalStepper& stepper = *owned;
  if (resumed) {
    owned->resume_at(sample.consolidation_steps);
    owned->resume_shear_history(p.history);
  }
  const SampleBox& box = sample.box;
  double step_start = 0.0, width = 0.0, height = 0.0;  // of the box at the start of the step
  SteppingRun run(std::move(owned), [&](const Stepper&, const StepReport& report) {
    ++sample.consolidation_steps;
    if (!report.solver_stats.converged && ++sample.settle_failures > kMaxSettleFailures)
      throw SimulationError("consolidation: " + variational_details(report).interior_point.message);
    sample.top_stress = wall_force(report, box.top) / width;
    sample.right_stress = wall_force(report, box.right) / height;
    const double top_error = 1.0 - sample.top_stress / options.stress;
    const double right_error = 1.0 - sample.right_stress / options.stress;
    Vec6 v = Vec6::Zero();
    v(1) = -kServoSpeed * std::clamp(top_error, 0.0, 1.0);
    world.bodies[box.top].set_velocity(v);
    v(1) = 0.0;
    v(0) = -kServoSpeed * std::clamp(right_error, 0.0, 1.0);
    world.bodies[box.right].set_velocity(v);
    sample.final_speed = mean_speed(world);
    const bool balanced =
        top_error < kServoBand && right_error < kServoBand && sample.final_speed < kRestSpeed;
    p.balanced = balanced ? p.balanced + 1 : 0;
    report_progress(p, sample.consolidation_steps, options.max_servo_steps, report,
                    now_seconds() - step_start);
    save(p, stepper.shear_history(), false);
  });
  run.advance_while([&](Stepper&) {
    if (sample.consolidation_steps >= options.max_servo_steps || p.balanced >= kServoHold)
      return false;
    step_start = now_seconds();
    width = world.bodies[box.right].position.x() - world.bodies[box.left].position.x();
    height = world.bodies[box.top].position.y() - world.bodies[box.bottom].position.y();
    return true;
  });
  for (RigidBody& b : world.bodies) b.set_velocity(Vec6::Zero());
  sample.consolidated = p.balanced >= kServoHold;
}

}  // namespace

std::string to_string(Family family) {
  switch (family) {
    case Family::disk:
      return "disk";
    case Family::angular:
      return "angular";
    case Family::non_convex:
      break;
  }
  return "non_convex";
}

double particle_area(const World& world) {
  double area = 0.0;
  for (const RigidBody& b : world.bodies) {
    if (!b.is_dynamic()) continue;
    if (const auto* polygon = std::get_if<Polygon>(&b.shape.geometry))
      area += polygon_area(polygon->outline);
    else
      area += M_PI * std::pow(std::get<Sphere>(b.shape.geometry).radius, 2);
  }
  return area;
}

namespace {

// The poured sample before settling: walls at the bottom, left and right, the particles in rows.
Sample poured_sample(const SampleOptions& options) {
  const ShapeFamilies families = make_shape_families();
  Sample sample;
  sample.family = options.family;
  World& world = sample.world;
  world.dimension = Dimension::two;
  world.gravity = Vec3(0.0, -kGravity, 0.0);
  sample.wall_material = world.add_material(Material{"wall", kDensity, 0.0, 0.3, 1.0, 0.0});
  world.friction = FrictionTable(options.settle_friction);
  world.friction.set(0, sample.wall_material, 0.0);
  // Box width from the particles' area, a dense porosity (~0.17) and the target aspect H0/W0.
  double area = 0.0;
  for (int k = 0; k < options.count; ++k) {
    const int shape = k % static_cast<int>(families.mean_diameter.size());
    area +=
        mass_properties(particle_shape(families, options.family, shape), 1.0, Dimension::two).mass;
  }
  const double width = std::sqrt(area / 0.83 / options.aspect);
  sample.box.bottom = add_wall(world, Vec3::UnitY(), Vec3::Zero(), sample.wall_material);
  sample.box.left = add_wall(world, Vec3::UnitX(), Vec3::Zero(), sample.wall_material);
  sample.box.right = add_wall(world, -Vec3::UnitX(), Vec3(width, 0, 0), sample.wall_material);
  pour_rows(world, families, options.family, options.count, width);
  return sample;
}

// The highest particle point.
double pour_top(const World& world) {
  double top = 0.0;
  for (const RigidBody& b : world.bodies)
    if (b.is_dynamic())
      for (const Vec3& p : extreme_points(b)) top = std::max(top, p.y());
  return top;
}

// The top wall on the highest particle point of the settled sample, everything at rest.
void close_box(Sample& sample) {
  World& world = sample.world;
  const double top = pour_top(world);
  sample.box.top = add_wall(world, -Vec3::UnitY(), Vec3(0, top, 0), sample.wall_material);
  for (RigidBody& b : world.bodies) b.set_velocity(Vec6::Zero());
}

// Continues from the checkpoint of the preparation, if any: the world of its phase (the top
// wall exists from the consolidation on; its position and every state come from the file).
bool resume_preparation(Preparation& p) {
  const std::filesystem::path& directory = p.persistence.directory;
  const auto peek = peek_checkpoint(directory, "biaxial sample", p.identity);
  if (!peek) return false;
  parse_fields(directory, [&] { read_sample_fields(peek->fields, p); });
  if (p.phase != "settle") close_box(p.sample);
  if (p.phase != "settle") p.sample.world.gravity = Vec3::Zero();
  read_checkpoint(directory, "biaxial sample", p.identity, p.sample.world, p.history);
  parse_fields(directory, [&] {
    const auto box = peek->fields.at("box").get<std::vector<int>>();
    if (box != std::vector<int>{p.sample.box.left, p.sample.box.right, p.sample.box.bottom,
                                p.sample.box.top})
      throw nlohmann::json::other_error::create(501, "box: not this sample's walls", &peek->fields);
  });
  return true;
}

}  // namespace

Sample prepare_sample(const SampleOptions& options, const Persistence& persistence) {
  Preparation p;
  p.sample = poured_sample(options);
  p.persistence = persistence;
  p.identity = sample_identity(options);
  p.last_save = now_seconds();
  const bool resumed = persistence.resume && resume_preparation(p);
  if (persistence.progress != nullptr && !resumed)
    *persistence.progress << to_string(options.family) << " sample: " << options.count
                          << " particles poured in rows up to y = " << pour_top(p.sample.world)
                          << " m" << std::endl;
  if (p.phase == "settle") {
    settle(p, options, resumed);
    close_box(p.sample);
    p.phase = "consolidate";
  }
  if (p.phase == "consolidate") {
    consolidate(p, options, resumed && p.sample.consolidation_steps > 0);
    World& world = p.sample.world;
    p.sample.porosity =
        1.0 - particle_area(world) / (world.bodies[p.sample.box.right].position.x() *
                                      world.bodies[p.sample.box.top].position.y());
    p.phase = "done";
    save(p, variational::ShearHistory{}, true);
  }
  return std::move(p.sample);
}

}  // namespace biaxial
