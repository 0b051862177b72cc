// Cost of the variational contact dynamics (Krabbenhoft/NURBS chapter eq. 4.15 and 4.16) on a
// packing of the chapter's particle families: prints, per step, the contacts, the interior
// point method's Newton steps and the wall-clock time of the step and of its conic solve.
//
//   variational_timing FAMILY COUNT DYNAMIC_STEPS STATIC_STEPS [--spacing S] [--margin M]
//                      [--static-k-n K] [--confine]
//
// FAMILY: non_convex, angular or disk (shape_families.hpp, mean diameter 1 m, density 1
// kg/m^2). The particles start on a lattice in a box 40 diameters wide and fall under gravity
// with theta = 0.7, dt = 0.05 s, k_N = 1e8 N/m, k_T = 2 k_N / 3, mu = 0.5 (the column drop's
// parameters; collision margin half a diameter); then gravity is switched off and the quasi-static
// driver presses the top wall down by 1e-3 m per load step (with --confine, the right wall is
// held by a force of 125 N/m times the sample height, the biaxial test's confinement).
#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "moreau/model/shape_families.hpp"
#include "moreau/variational/quasi_static_driver.hpp"
#include "moreau/variational/variational_stepper.hpp"

using namespace moreau;

namespace {

int add_wall(World& world, const Vec3& normal, const Vec3& position, Motion motion) {
  RigidBody wall;
  wall.motion = motion;
  wall.shape.geometry = HalfSpace{normal};
  wall.position = position;
  return world.add_body(wall);
}

// Particle k of the family at a lattice site, turned by a seeded angle.
void add_particle(World& world, const ShapeFamilies& families, const std::string& family, int k,
                  const Vec3& position) {
  RigidBody body;
  const int shape = k % static_cast<int>(families.mean_diameter.size());
  if (family == "disk") {
    body.shape.geometry = Sphere{families.disk_radius[shape]};
  } else {
    body.shape.geometry =
        family == "angular" ? families.angular[shape] : families.non_convex[shape];
  }
  const MassProperties m = mass_properties(body.shape.geometry, 1.0, Dimension::two);
  body.mass = m.mass;
  body.inertia_body = m.inertia;
  body.position = position;
  const double angle = std::fmod(2.399963 * k, 6.283185307);  // golden-angle sequence
  body.orientation = Quat(Eigen::AngleAxisd(angle, Vec3::UnitZ()));
  world.add_body(body);
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Cost per step of the variational contact dynamics on a packing of the chapter's "
      "particle families",
      "variational_timing"};
  std::string family;
  int count = 0, dynamic_steps = 0, static_steps = 0;
  // Lattice spacing in diameters and collision margin, for other packings than the default.
  double spacing = 1.3, margin = 0.5;
  double static_k_n = 0.0;  // 0: the dynamic part's k_N
  // The lattice packing of this tool has no horizontal force chains, so a confining force on
  // the right wall has no static equilibrium (the driver reports that); --confine asks for it.
  bool confined = false;
  app.add_option("FAMILY", family, "particle family")
      ->required()
      ->check(CLI::IsMember({"non_convex", "angular", "disk"}));
  app.add_option("COUNT", count, "particles")->required()->check(CLI::PositiveNumber);
  app.add_option("DYNAMIC_STEPS", dynamic_steps, "steps of the fall")->required();
  app.add_option("STATIC_STEPS", static_steps, "quasi-static load steps")->required();
  app.add_option("--spacing", spacing, "lattice spacing in diameters")->check(CLI::PositiveNumber);
  app.add_option("--margin", margin, "collision margin of the fall, m")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--static-k-n", static_k_n, "k_N of the quasi-static part (k_T = 2 k_N / 3)")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--confine", confined, "hold the right wall by the biaxial test's confinement");
  CLI11_PARSE(app, argc, argv);
  const ShapeFamilies families = make_shape_families();
  World world;
  world.dimension = Dimension::two;
  world.gravity = Vec3(0.0, -9.81, 0.0);
  world.friction = FrictionTable(0.5);
  const int columns = 40;
  const double width = columns * spacing;
  const int floor = add_wall(world, Vec3::UnitY(), Vec3::Zero(), Motion::fixed);
  const int left = add_wall(world, Vec3::UnitX(), Vec3::Zero(), Motion::fixed);
  const int right = add_wall(world, -Vec3::UnitX(), Vec3(width, 0.0, 0.0), Motion::prescribed);
  for (int k = 0; k < count; ++k) {
    // A small seeded shift off the lattice so that the columns collapse into a packing.
    const double shift = 0.15 * std::sin(1.7 * k);
    add_particle(world, families, family, k,
                 Vec3((k % columns + 0.5) * spacing + shift, (k / columns + 0.5) * spacing, 0.0));
  }
  VariationalOptions options;
  options.time_step = 0.05;
  options.theta = 0.7;
  options.contact.stiffness = {1e8, 2e8 / 3.0};
  // Half a diameter: the particles reach ~10 m/s, 0.5 m per step, and contacts must be in the
  // problem before they close (the chapter needs the gaps g0 of every contact that can close).
  options.collision.margin = margin;
  {
    VariationalStepper stepper(world, options);
    std::printf("dynamic: family contacts newton solve_s step_s converged min_gap\n");
    for (int s = 0; s < dynamic_steps; ++s) {
      const auto start = std::chrono::steady_clock::now();
      const StepReport& r = stepper.step();
      const double step_seconds = seconds_since(start);
      double min_gap = 0.0;
      for (const Contact& c : r.contacts) min_gap = std::min(min_gap, c.gap);
      std::printf("dynamic %s %zu %d %.4f %.4f %d %.3g\n", family.c_str(), r.contacts.size(),
                  r.solver_stats.iterations, r.solver_stats.wall_seconds, step_seconds,
                  r.solver_stats.converged ? 1 : 0, min_gap);
    }
  }
  // The walls moved onto the sample (exact extents: the outline vertices of the polygons).
  double top_y = 0.0, min_x = width, max_x = 0.0;
  for (const RigidBody& b : world.bodies) {
    if (!b.is_dynamic()) continue;
    std::vector<Vec3> points;
    if (const auto* polygon = std::get_if<Polygon>(&b.shape.geometry)) {
      for (const Vec2& v : polygon->outline)
        points.push_back(b.position + b.orientation * Vec3(v.x(), v.y(), 0.0));
    } else {
      const double r = std::get<Sphere>(b.shape.geometry).radius;
      for (const Vec3& d : {Vec3(1, 0, 0), Vec3(-1, 0, 0), Vec3(0, 1, 0)})
        points.push_back(b.position + r * d);
    }
    for (const Vec3& p : points) {
      top_y = std::max(top_y, p.y());
      min_x = std::min(min_x, p.x());
      max_x = std::max(max_x, p.x());
    }
  }
  world.bodies[left].position.x() = min_x;
  world.bodies[right].position.x() = max_x;
  const int top = add_wall(world, -Vec3::UnitY(), Vec3(0.0, top_y, 0.0), Motion::prescribed);
  world.gravity = Vec3::Zero();
  for (RigidBody& b : world.bodies) b.set_velocity(Vec6::Zero());
  QuasiStaticOptions quasi;
  quasi.contact = options.contact;
  if (static_k_n > 0.0) quasi.contact.stiffness = {static_k_n, 2.0 * static_k_n / 3.0};
  quasi.collision.margin = 0.1;
  quasi.box = {left, right, floor, top};
  QuasiStaticDriver driver(world, quasi);
  std::printf("static: family contacts rattlers newton solve_s height width converged\n");
  for (int s = 0; s < static_steps; ++s) {
    const double height = world.bodies[top].position.y();
    LoadStep load{{{top, -Vec3::UnitY(), WallControl::displacement, 1e-3}}};
    if (confined) load.walls.push_back({right, -Vec3::UnitX(), WallControl::force, 125.0 * height});
    const QuasiStaticReport& r = driver.step(load);
    std::printf(
        "static %s %zu %ld %d %.3f %.5f %.5f %d %s (primal %.2e equality %.2e complementarity "
        "%.2e)\n",
        family.c_str(), r.contacts.size(), r.rattlers, r.interior_point.newton_steps,
        r.solve_seconds, r.height, r.width, r.converged() ? 1 : 0, r.interior_point.message.c_str(),
        r.interior_point.primal_residual, r.interior_point.equality_residual,
        r.interior_point.complementarity);
  }
  return 0;
}
