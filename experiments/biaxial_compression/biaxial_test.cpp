// The biaxial test of the Krabbenhoft/NURBS chapter Sec. 4.4.1 on the static formulation
// (eq. 4.16): "The upper wall is moved downwards while the applied stress on the right wall
// sigma_3 is maintained at 125 units ... The left and bottom walls are stationary."
#include "biaxial_test.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <utility>

#include "moreau/core/error.hpp"
#include "moreau/model/shape.hpp"

namespace biaxial {

using namespace moreau;
using namespace moreau::resumable;

namespace {

constexpr int kMaxHalvings = 3;
constexpr double kRigidReferenceStiffness = 1e8;  // N/m
// Newton steps without halving the residuals before a solve counts as stalled: a converging
// solve halves them every one to three steps.
constexpr int kStallNewtonSteps = 30;

// The mean mass of the particles and their mean diameter (of the bounding circles), kg and m.
std::pair<double, double> mean_mass_and_diameter(const World& world) {
  double mass = 0.0, diameter = 0.0;
  int count = 0;
  for (const RigidBody& body : world.bodies) {
    if (!body.is_dynamic()) continue;
    mass += body.mass;
    diameter += 2.0 * bounding_radius(body.shape.geometry);
    ++count;
  }
  return {mass / std::max(count, 1), diameter / std::max(count, 1)};
}

// dt with m u / dt^2 = fraction x sigma_3 d for u one axial increment (TestOptions).
double pseudo_time_step(const World& world, const TestOptions& options, double axial_increment) {
  if (!(options.dynamic_force_fraction > 0.0)) return std::numeric_limits<double>::infinity();
  const auto [mass, diameter] = mean_mass_and_diameter(world);
  return std::sqrt(mass * axial_increment /
                   (options.dynamic_force_fraction * options.confining_stress * diameter));
}

QuasiStaticOptions driver_options(const Sample& sample, const TestOptions& options,
                                  double axial_increment) {
  QuasiStaticOptions quasi;
  quasi.pseudo_time_step = pseudo_time_step(sample.world, options, axial_increment);
  if (std::isfinite(quasi.pseudo_time_step)) {
    quasi.dynamic_force_limit = options.equilibrium_fraction * options.confining_stress *
                                mean_mass_and_diameter(sample.world).second;
    quasi.max_relaxation_steps = options.max_relaxation_steps;
    // The driver takes a failed solve again with a shorter pseudo-time step, so a solve that
    // stops making progress is stopped by the interior point method's stall rule rather than
    // run to its step limit: a rigid sample locked by the walls' motion of the step (its
    // iterates run off slowly), or a stall at the rounding level near the solution (then
    // accepted where its residuals meet the tolerance, QuasiStaticReport::solved). Measured on
    // the rigid disk curve of the published sample: 10-16 solves per load step instead of
    // 19-32 (README.md "Quick and full scale").
    quasi.interior_point.stall_newton_steps = kStallNewtonSteps;
  }
  const double k = options.k_normal;
  quasi.contact.stiffness = {k, std::isinf(k) ? k : 2.0 * k / 3.0};  // k_T = 2 k_N / 3
  quasi.contact.frictional = options.friction > 0.0;
  // The rigid run starts from the reference state of k_N = 1e8 (overlaps F / k_N ~ 5e-6 m):
  // kept, not opened, by its rigid load steps (ContactModel::keep_rigid_overlaps; README.md
  // "Deviations").
  quasi.contact.keep_rigid_overlaps = true;
  // Contacts must be in the problem before a step closes them: twice the wall's step, and at
  // least 5% of a diameter for the lateral rearrangements.
  quasi.collision.margin = std::max(0.05, 2.0 * axial_increment);
  quasi.box = sample.box;
  quasi.interior_point.tolerance = options.tolerance;
  return quasi;
}

TestPoint measure(const QuasiStaticReport& r, double width0, double height0, int step,
                  double step_seconds) {
  TestPoint p;
  p.step = step;
  p.axial_strain = 1.0 - r.height / height0;
  p.volumetric_strain = 1.0 - r.area / (width0 * height0);
  p.sigma1 = r.walls[0].contact_force.y() / r.width;   // the top wall is walls[0]
  p.sigma3 = r.walls[1].contact_force.x() / r.height;  // the right wall is walls[1]
  p.newton_steps = r.interior_point.newton_steps;
  p.solve_seconds = r.solve_seconds;
  p.step_seconds = step_seconds;
  p.contacts = static_cast<long>(r.contacts.size());
  p.rattlers = r.rattlers;
  p.idle_particles = r.idle_particles;
  p.idle_released = r.idle_released;
  for (const Contact& c : r.contacts) p.deepest_overlap = std::max(p.deepest_overlap, -c.gap);
  p.overshooting_particles = r.overshooting_particles;
  p.largest_motion = r.largest_motion;
  p.largest_dynamic_force = r.largest_dynamic_force;
  p.relaxation_steps = r.relaxation_steps;
  p.numerical_limit_solves = r.numerical_limit_solves;
  p.converged = r.converged();
  return p;
}

// Solves one load step; where the interior point method does not converge or the step finds no
// static equilibrium (the load is then not applied; the driver's relaxation steps are), the step is
// retried as two half steps of the displacement-driven walls, down to 1 / 2^kMaxHalvings of the
// step. Returns the last report, or nullptr with `failure` set.
const QuasiStaticReport* solve_load(QuasiStaticDriver& driver, const LoadStep& load, int depth,
                                    int& substeps, std::string& failure) {
  const QuasiStaticReport& r = driver.step(load);
  ++substeps;
  if (r.converged()) return &r;
  bool splittable = false;
  LoadStep half = load;
  for (WallLoad& w : half.walls)
    if (w.control == WallControl::displacement && w.value != 0.0) {
      w.value *= 0.5;
      splittable = true;
    }
  if (!splittable || depth >= kMaxHalvings) {
    failure = r.message;
    return nullptr;
  }
  if (solve_load(driver, half, depth + 1, substeps, failure) == nullptr) return nullptr;
  return solve_load(driver, half, depth + 1, substeps, failure);
}

}  // namespace

namespace {

// The fields of a TestPoint in a checkpoint, in this order (a checkpoint without the last
// field reads it as 0).
nlohmann::json point_json(const TestPoint& p) {
  return nlohmann::json::array({p.step,
                                p.axial_strain,
                                p.volumetric_strain,
                                p.sigma1,
                                p.sigma3,
                                p.newton_steps,
                                p.substeps,
                                p.solve_seconds,
                                p.step_seconds,
                                p.contacts,
                                p.rattlers,
                                p.idle_particles,
                                p.idle_released,
                                p.deepest_overlap,
                                p.overshooting_particles,
                                p.largest_motion,
                                p.largest_dynamic_force,
                                p.relaxation_steps,
                                p.converged,
                                p.numerical_limit_solves});
}

TestPoint point_from(const nlohmann::json& j) {
  TestPoint p;
  if (!j.is_array() || (j.size() != 19 && j.size() != 20))
    throw nlohmann::json::other_error::create(501, "points: expected 20 values per point", &j);
  p.step = j[0].get<int>();
  p.axial_strain = j[1].get<double>();
  p.volumetric_strain = j[2].get<double>();
  p.sigma1 = j[3].get<double>();
  p.sigma3 = j[4].get<double>();
  p.newton_steps = j[5].get<int>();
  p.substeps = j[6].get<int>();
  p.solve_seconds = j[7].get<double>();
  p.step_seconds = j[8].get<double>();
  p.contacts = j[9].get<long>();
  p.rattlers = j[10].get<long>();
  p.idle_particles = j[11].get<long>();
  p.idle_released = j[12].get<long>();
  p.deepest_overlap = j[13].get<double>();
  p.overshooting_particles = j[14].get<long>();
  p.largest_motion = j[15].get<double>();
  p.largest_dynamic_force = j[16].get<double>();
  p.relaxation_steps = j[17].get<long>();
  p.converged = j[18].get<bool>();
  if (j.size() > 19) p.numerical_limit_solves = j[19].get<long>();
  return p;
}

// The options a checkpoint of the test must have been written with (k_N as text: JSON has no
// infinity).
nlohmann::json test_identity(const Sample& sample, const TestOptions& o) {
  char k[32];
  std::snprintf(k, sizeof k, "%.17g", o.k_normal);
  return {{"family", to_string(sample.family)},
          {"bodies", sample.world.bodies.size()},
          {"k_normal", k},
          {"friction", o.friction},
          {"wall_friction", o.wall_friction},
          {"confining_stress", o.confining_stress},
          {"final_axial_strain", o.final_axial_strain},
          {"load_steps", o.load_steps},
          {"consolidation_steps", o.consolidation_steps},
          {"mechanism_motion", o.mechanism_motion},
          {"tolerance", o.tolerance},
          {"dynamic_force_fraction", o.dynamic_force_fraction},
          {"equilibrium_fraction", o.equilibrium_fraction},
          {"max_relaxation_steps", o.max_relaxation_steps}};
}

// Between two load steps: the next step, the walls' distances, the curve so far.
struct TestState {
  int next = 0;  // the next load step (0: the reference step)
  double width = 0.0, height = 0.0;
  bool finished = false;
};

nlohmann::json test_fields(const TestState& state, const TestRun& run) {
  nlohmann::json points = nlohmann::json::array();
  for (const TestPoint& p : run.points) points.push_back(point_json(p));
  return {{"next_step", state.next},    {"width", state.width},   {"height", state.height},
          {"finished", state.finished}, {"width0", run.width0},   {"height0", run.height0},
          {"porosity0", run.porosity0}, {"failure", run.failure}, {"points", points}};
}

void read_test_fields(const nlohmann::json& f, TestState& state, TestRun& run) {
  state.next = f.at("next_step").get<int>();
  state.width = f.at("width").get<double>();
  state.height = f.at("height").get<double>();
  state.finished = f.at("finished").get<bool>();
  run.width0 = f.at("width0").get<double>();
  run.height0 = f.at("height0").get<double>();
  run.porosity0 = f.at("porosity0").get<double>();
  run.failure = f.at("failure").get<std::string>();
  run.points.clear();
  for (const nlohmann::json& p : f.at("points")) run.points.push_back(point_from(p));
}

// The checkpoints of one curve (moreau/harness/resumable_run.hpp): resumed at its start, saved
// after load steps.
class CurveCheckpoints {
 public:
  CurveCheckpoints(const Persistence& persistence, nlohmann::json identity)
      : persistence_(persistence), identity_(std::move(identity)) {}

  // Restores the curve so far, the world and the loading driver from the checkpoint, if any;
  // returns whether the curve was finished.
  bool resume(TestState& state, TestRun& run, World& world, QuasiStaticDriver& loading) {
    if (!persistence_.resume) return false;
    variational::ShearHistory history;
    const auto checkpoint =
        read_checkpoint(persistence_.directory, "biaxial test", identity_, world, history);
    if (!checkpoint) return false;
    parse_fields(persistence_.directory, [&] { read_test_fields(checkpoint->fields, state, run); });
    loading.resume(std::move(history), checkpoint->step);
    first_ = state.next;
    return state.finished;
  }

  // After a load step: the progress line, the checkpoint when due, the test hook.
  void after_step(int load_steps, const TestState& state, const TestRun& run, const World& world,
                  const QuasiStaticDriver& loading) {
    progress(run, load_steps);
    const int index = run.points.back().step;
    const bool interrupt =
        persistence_.interrupt_after >= 0 && index >= persistence_.interrupt_after;
    save(interrupt, state, run, world, loading);
    if (interrupt) throw Interrupted("test interrupted after load step " + std::to_string(index));
  }

  void save(bool force, const TestState& state, const TestRun& run, const World& world,
            const QuasiStaticDriver& loading) {
    if (persistence_.directory.empty() ||
        !(force || now_seconds() - last_save_ >= persistence_.every_seconds))
      return;
    write_checkpoint(persistence_.directory,
                     {"biaxial test", identity_, test_fields(state, run), loading.steps_taken()},
                     world, loading.shear_history());
    last_save_ = now_seconds();
  }

 private:
  void progress(const TestRun& run, int load_steps) const {
    if (persistence_.progress == nullptr) return;
    const TestPoint& p = run.points.back();
    const double per_step = (now_seconds() - started_) / std::max(1, p.step - first_ + 1);
    *persistence_.progress << to_string(run.family) << " k_N = " << run.k_normal << ": load step "
                           << p.step << "/" << load_steps << ", eps_a " << p.axial_strain << ", q "
                           << p.deviatoric() << ", " << p.newton_steps << " IPM iterations, "
                           << p.contacts << " contacts, " << duration_text(p.step_seconds)
                           << " this step, ETA of the curve "
                           << duration_text(per_step * (load_steps - p.step)) << std::endl;
  }

  const Persistence& persistence_;
  nlohmann::json identity_;
  double last_save_ = now_seconds();
  double started_ = now_seconds();
  int first_ = 0;
};

}  // namespace

TestRun run_biaxial_test(const Sample& sample, const TestOptions& options,
                         const Persistence& persistence) {
  World world = sample.world;
  world.friction = FrictionTable(options.friction);
  world.friction.set(0, sample.wall_material, options.wall_friction);
  const int top = sample.box.top, right = sample.box.right;
  TestState state;
  state.width = world.bodies[right].position.x() - world.bodies[sample.box.left].position.x();
  state.height = world.bodies[top].position.y() - world.bodies[sample.box.bottom].position.y();
  const double increment = options.final_axial_strain * state.height / options.load_steps;
  // The rigid run reaches its reference state with k_N = 1e8, the stiffness of the
  // consolidation (README.md, "Deviations"); its load steps are rigid.
  const bool rigid = std::isinf(options.k_normal);
  TestOptions reference_options = options;
  if (rigid) reference_options.k_normal = kRigidReferenceStiffness;
  QuasiStaticDriver reference(world, driver_options(sample, reference_options, increment));
  QuasiStaticDriver loading(world, driver_options(sample, options, increment));
  TestRun run;
  run.family = sample.family;
  run.k_normal = options.k_normal;
  run.pseudo_time_step = pseudo_time_step(sample.world, options, increment);
  run.contact_force_scale = options.confining_stress * mean_mass_and_diameter(world).second;
  CurveCheckpoints checkpoints(persistence, test_identity(sample, options));
  if (checkpoints.resume(state, run, world, loading)) return run;
  const double s3 = options.confining_stress;
  // Returns false when the step failed (the run then stops: the next would start from the
  // same configuration).
  auto step = [&](int index, const LoadStep& load) {
    QuasiStaticDriver& driver = index <= 0 ? reference : loading;
    const auto start = std::chrono::steady_clock::now();
    int substeps = 0;
    std::string failure;
    const QuasiStaticReport* r = nullptr;
    try {
      r = solve_load(driver, load, 0, substeps, failure);
    } catch (const SimulationError& e) {  // e.g. the right wall lost its particles
      failure = e.what();
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (r == nullptr) {
      run.failure = "load step " + std::to_string(index) + ": " + failure;
      return false;
    }
    // A right wall that moves by more than a particle diameter in one load step (axial step
    // ~0.02-0.07 d) is no dilation but a mechanism: the displacements of eq. 4.16 are then not
    // unique, and the core returns one of them; the run stops there.
    if (index > 0 && std::abs(r->width - state.width) > options.mechanism_motion) {
      run.failure = "load step " + std::to_string(index) + ": the right wall moved " +
                    std::to_string(r->width - state.width) + " m in one step (a mechanism)";
      return false;
    }
    state.width = r->width;
    state.height = r->height;
    if (index < 0) return true;  // consolidation
    if (index == 0) {
      run.width0 = state.width;
      run.height0 = state.height;
      run.porosity0 = 1.0 - particle_area(world) / (state.width * state.height);
    }
    run.points.push_back(measure(*r, run.width0, run.height0, index, seconds));
    run.points.back().substeps = substeps;
    state.next = index + 1;
    checkpoints.after_step(options.load_steps, state, run, world, loading);
    return true;
  };
  // The end of the curve (all steps, or a failure): saved, so that a resumed run reads it back.
  auto finish = [&]() {
    state.finished = true;
    checkpoints.save(true, state, run, world, loading);
    return run;
  };
  // Reference state: sigma_3 on the right wall and on the top wall (isotropic), with the
  // elastic contacts of the reference driver (k_N = 1e8 for the rigid run).
  if (state.next == 0)
    for (int c = options.consolidation_steps; c >= 0; --c)
      if (!step(-c, {{{top, -Vec3::UnitY(), WallControl::force, s3 * state.width},
                      {right, -Vec3::UnitX(), WallControl::force, s3 * state.height}}}))
        return finish();
  for (int s = std::max(1, state.next); s <= options.load_steps; ++s)
    if (!step(s, {{{top, -Vec3::UnitY(), WallControl::displacement, increment},
                   {right, -Vec3::UnitX(), WallControl::force, s3 * (state.height - increment)}}}))
      return finish();
  return finish();
}

}  // namespace biaxial
