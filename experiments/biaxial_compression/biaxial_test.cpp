// The biaxial test of the Krabbenhoft/NURBS chapter Sec. 4.4.1 on the static formulation
// (eq. 4.16): "The upper wall is moved downwards while the applied stress on the right wall
// sigma_3 is maintained at 125 units ... The left and bottom walls are stationary."
#include "biaxial_test.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "moreau/core/error.hpp"

namespace biaxial {

using namespace moreau;

namespace {

constexpr int kMaxHalvings = 3;
constexpr double kRigidReferenceStiffness = 1e8;  // N/m

QuasiStaticOptions driver_options(const Sample& sample, const TestOptions& options,
                                  double axial_increment) {
  QuasiStaticOptions quasi;
  const double k = options.k_normal;
  quasi.contact.stiffness = {k, std::isinf(k) ? k : 2.0 * k / 3.0};  // k_T = 2 k_N / 3
  quasi.contact.frictional = options.friction > 0.0;
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
  p.converged = r.converged();
  return p;
}

// Solves one load step; where the interior point method does not converge (the configuration is
// then unchanged), the step is retried as two half steps of the displacement-driven walls, down
// to 1 / 2^kMaxHalvings of the step. Returns the last report, or nullptr with `failure` set.
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
    failure = r.interior_point.message;
    return nullptr;
  }
  if (solve_load(driver, half, depth + 1, substeps, failure) == nullptr) return nullptr;
  return solve_load(driver, half, depth + 1, substeps, failure);
}

}  // namespace

TestRun run_biaxial_test(const Sample& sample, const TestOptions& options) {
  World world = sample.world;
  world.friction = FrictionTable(options.friction);
  world.friction.set(0, sample.wall_material, options.wall_friction);
  const int top = sample.box.top, right = sample.box.right;
  double width = world.bodies[right].position.x() - world.bodies[sample.box.left].position.x();
  double height = world.bodies[top].position.y() - world.bodies[sample.box.bottom].position.y();
  const double increment = options.final_axial_strain * height / options.load_steps;
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
    if (index > 0 && std::abs(r->width - width) > options.mechanism_motion) {
      run.failure = "load step " + std::to_string(index) + ": the right wall moved " +
                    std::to_string(r->width - width) + " m in one step (a mechanism)";
      return false;
    }
    width = r->width;
    height = r->height;
    if (index < 0) return true;  // consolidation
    if (index == 0) {
      run.width0 = width;
      run.height0 = height;
      run.porosity0 = 1.0 - particle_area(world) / (width * height);
    }
    run.points.push_back(measure(*r, run.width0, run.height0, index, seconds));
    run.points.back().substeps = substeps;
    return true;
  };
  // Reference state: sigma_3 on the right wall and on the top wall (isotropic), with the
  // elastic contacts of the reference driver (k_N = 1e8 for the rigid run).
  for (int c = options.consolidation_steps; c >= 0; --c)
    if (!step(-c, {{{top, -Vec3::UnitY(), WallControl::force, s3 * width},
                    {right, -Vec3::UnitX(), WallControl::force, s3 * height}}}))
      return run;
  for (int s = 1; s <= options.load_steps; ++s)
    if (!step(s, {{{top, -Vec3::UnitY(), WallControl::displacement, increment},
                   {right, -Vec3::UnitX(), WallControl::force, s3 * (height - increment)}}}))
      return run;
  return run;
}

}  // namespace biaxial
