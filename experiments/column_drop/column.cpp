#include "column.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "deposit.hpp"

namespace moreau::column_drop {

const char* name(Family f) {
  return f == Family::disk ? "disk" : f == Family::angular ? "angular" : "non_convex";
}

namespace {

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

}  // namespace

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

VariationalOptions stepper_options(double margin, double theta) {
  VariationalOptions options;
  options.time_step = kTimeStep;
  options.theta = theta;
  options.contact.stiffness = {kNormalStiffness, 2.0 * kNormalStiffness / 3.0};
  options.frictional = true;
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

}  // namespace moreau::column_drop
