// Cost of one dynamic step of the variational contact dynamics (Krabbenhoft/NURBS chapter
// eq. 4.15, VariationalStepper) on a column like column_drop's: a performance benchmark, not a
// test (README.md). It compacts a packing of one shape family in a closed box, then times the
// same steps with the Newton system of the interior point method solved through the augmented
// KKT matrix (`kkt`), in the body space (`body`) or in the cone variables (`cone`, N
// assembled), each with every contact within the margin in the solve, or through the augmented
// KKT matrix with contact screening (`screened`, the stepper's default), from the same state,
// and prints the largest force difference between the first two variants on the first timed
// step where both solved the same contacts.
//
// Usage: variational_step_benchmark FAMILY PARTICLES [STEPS] [VARIANTS]
//   FAMILY disk|angular|non_convex, VARIANTS a list of kkt, body, cone, screened (default
//   body,cone).
#include <algorithm>
#include <cmath>
#include <ctime>
#include <iostream>
#include <numbers>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "moreau/core/allocator.hpp"
#include "moreau/model/shape_families.hpp"
#include "moreau/variational/variational_stepper.hpp"

namespace {

using namespace moreau;

// column_drop's published parameters (chapter Sec. 4.4.2) and its choices (its README.md).
constexpr double kTimeStep = 0.05, kTheta = 0.7, kStiffness = 1e8, kAspect = 1.68;
constexpr double kMu = 0.5, kStepMotion = 0.15, kMargin = 1.2 * kStepMotion;
// Compaction: gravity times this factor for kCompactionSteps steps (the packing's gaps close
// within them at under 0.1 d per step), then the velocities are zeroed and gravity restored, so
// that the timed steps see a dense column at rest, as the settled column of column_drop.
constexpr double kCompactionGravity = 40.0;
constexpr int kCompactionSteps = 16;
constexpr double kGap = 0.01;  // between the particles' bounding boxes, in d
constexpr double kHuge = 1e300;

void add_wall(World& world, const Vec3& normal, const Vec3& position) {
  RigidBody wall;
  wall.motion = Motion::fixed;
  wall.shape.geometry = HalfSpace{normal};
  wall.position = position;
  world.add_body(wall);
}

double shape_area(const ShapeFamilies& shapes, const std::string& family, std::size_t k) {
  if (family == "disk") return std::numbers::pi * shapes.disk_radius[k] * shapes.disk_radius[k];
  return polygon_area((family == "angular" ? shapes.angular : shapes.non_convex)[k].outline);
}

// The particle's turned outline bounds: (min x, min y, max x, max y) about its centre.
Eigen::Vector4d turned_bounds(const RigidBody& body) {
  if (const auto* disk = std::get_if<Sphere>(&body.shape.geometry))
    return Eigen::Vector4d(-disk->radius, -disk->radius, disk->radius, disk->radius);
  const Mat3 rotation = body.orientation.toRotationMatrix();
  Eigen::Vector4d b(kHuge, kHuge, -kHuge, -kHuge);
  for (const Vec2& v : std::get<Polygon>(body.shape.geometry).outline) {
    const Vec3 p = rotation * Vec3(v.x(), v.y(), 0.0);
    b = Eigen::Vector4d(std::min(b(0), p.x()), std::min(b(1), p.y()), std::max(b(2), p.x()),
                        std::max(b(3), p.y()));
  }
  return b;
}

// Particles (shape k mod 16, turned by the golden angle) packed row by row on their turned
// bounding boxes with gaps of kGap, in a box of width L0 sized for H0 / L0 = 1.68 at
// column_drop's settled packing; g as column_drop's (0.15 d of motion per step at the top).
World column(const std::string& family, long particles, double* gravity) {
  const ShapeFamilies shapes = make_shape_families();
  const std::size_t count = shapes.mean_diameter.size();
  double area = 0.0;
  for (std::size_t k = 0; k < count; ++k) area += shape_area(shapes, family, k) / count;
  const double packing = family == "disk" ? 0.78 : family == "angular" ? 0.72 : 0.67;
  const double width = std::sqrt(particles * area / (packing * kAspect));
  const double speed = kStepMotion / kTimeStep;
  *gravity = speed * speed / (2.0 * kAspect * width);
  World world;
  world.dimension = Dimension::two;
  world.gravity = Vec3(0.0, -*gravity, 0.0);
  world.materials = {Material{"particle", 1.0}};
  world.friction = FrictionTable(kMu);
  add_wall(world, Vec3::UnitY(), Vec3::Zero());
  add_wall(world, Vec3::UnitX(), Vec3::Zero());
  add_wall(world, -Vec3::UnitX(), Vec3(width, 0.0, 0.0));
  double x = kGap, y = kGap, row_height = 0.0;
  for (long k = 0; k < particles; ++k) {
    RigidBody body;
    const std::size_t shape = static_cast<std::size_t>(k) % count;
    if (family == "disk")
      body.shape.geometry = Sphere{shapes.disk_radius[shape]};
    else
      body.shape.geometry = (family == "angular" ? shapes.angular : shapes.non_convex)[shape];
    const MassProperties m = mass_properties(body.shape.geometry, 1.0, Dimension::two);
    body.mass = m.mass;
    body.inertia_body = m.inertia;
    body.orientation = Quat(Eigen::AngleAxisd(2.399963229728653 * k, Vec3::UnitZ()));
    const Eigen::Vector4d b = turned_bounds(body);
    if (x + b(2) - b(0) > width - kGap) {
      x = kGap;
      y += row_height + kGap;
      row_height = 0.0;
    }
    body.position = Vec3(x - b(0), y - b(1), 0.0);
    x += b(2) - b(0) + kGap;
    row_height = std::max(row_height, b(3) - b(1));
    world.add_body(body);
  }
  return world;
}

VariationalOptions options(const std::string& variant) {
  VariationalOptions o;
  o.time_step = kTimeStep;
  o.theta = kTheta;
  o.contact.stiffness = {kStiffness, 2.0 * kStiffness / 3.0};
  o.frictional = true;
  o.collision.margin = kMargin;
  o.interior_point.body_space = variant == "body";
  o.interior_point.augmented_kkt = variant == "kkt" || variant == "screened";
  o.screen_contacts = variant == "screened";
  return o;
}

double process_seconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

struct Timing {
  double solve_cpu = 0.0, step_cpu = 0.0;
  long contacts = 0, newton = 0, failed = 0;
  VecX first_impulses;
};

Timing run(const World& start, const std::string& variant, int steps) {
  World world = start;
  VariationalStepper stepper(world, options(variant));
  Timing t;
  for (int s = 0; s < steps; ++s) {
    const double begin = process_seconds();
    const StepReport& report = stepper.step();
    t.step_cpu += process_seconds() - begin;
    t.solve_cpu += report.solve_cpu_seconds;
    t.contacts += report.active_contacts;
    t.newton += report.solver_stats.iterations;
    if (!report.solver_stats.converged) {
      ++t.failed;
      std::cout << "  step " << s << " not converged: "
                << conic::to_string(variational_details(report).interior_point.status) << " "
                << variational_details(report).interior_point.message << " (primal residual "
                << variational_details(report).interior_point.primal_residual
                << ", complementarity "
                << variational_details(report).interior_point.complementarity << ", Newton steps "
                << variational_details(report).interior_point.newton_steps << ")\n";
    }
    if (s == 0) t.first_impulses = report.impulses;
  }
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  moreau::keep_freed_memory();
  if (argc < 3) {
    std::cerr << "usage: variational_step_benchmark disk|angular|non_convex PARTICLES [STEPS] "
                 "[kkt,body,cone,screened]\n";
    return 2;
  }
  const std::string family = argv[1];
  const long particles = std::stol(argv[2]);
  const int steps = argc > 3 ? std::stoi(argv[3]) : 3;
  const std::string variants = argc > 4 ? argv[4] : "body,cone";
  double gravity = 0.0;
  World world = column(family, particles, &gravity);
  {
    world.gravity *= kCompactionGravity;
    VariationalStepper compaction(world, options("cone"));
    for (int s = 0; s < kCompactionSteps; ++s) compaction.step();
    world.gravity /= kCompactionGravity;
    for (RigidBody& b : world.bodies) b.set_velocity(Vec6::Zero());
  }
  std::cout << family << " " << particles << " particles, " << steps << " steps each\n";
  std::vector<VecX> first;
  std::stringstream list(variants);
  for (std::string variant; std::getline(list, variant, ',');) {
    const Timing t = run(world, variant, steps);
    std::cout << variant << ": contacts/step " << t.contacts / steps << ", Newton steps/step "
              << static_cast<double>(t.newton) / steps << ", not converged " << t.failed
              << ", solve CPU s/step " << t.solve_cpu / steps << ", step CPU s/step "
              << t.step_cpu / steps << "\n";
    first.push_back(t.first_impulses);
  }
  if (first.size() >= 2 && first[0].size() == first[1].size() && first[0].size() > 0) {
    std::cout << "first step: max |impulse difference| / max |impulse| = "
              << (first[0] - first[1]).cwiseAbs().maxCoeff() / first[1].cwiseAbs().maxCoeff()
              << "\n";
  }
  return 0;
}
