#include "moreau/simulation/channel_flow.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <sstream>
#include <string>
#include <utility>

#include "moreau/collision/collision_detector.hpp"
#include "moreau/core/error.hpp"
#include "moreau/model/shape.hpp"

namespace moreau {
namespace {

std::string text(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

[[noreturn]] void refuse(const std::string& field, double value, const std::string& rule) {
  throw InputError("ChannelFlowOptions." + field + " = " + text(value) + " " + rule);
}

// Grid points of spacing h across a width w, and the margin that centres them.
int grid_points(double width, double h) { return static_cast<int>(std::floor(width / h + 1e-9)); }
double grid_margin(double width, double h) {
  return 0.5 * (width - (grid_points(width, h) - 1) * h);
}

double sphere_radius(const RigidBody& body) { return bounding_radius(body.shape.geometry); }

}  // namespace

void ChannelFlowOptions::validate() const {
  const auto finite = [](double x) { return std::isfinite(x); };
  if (!(radius > 0.0) || !finite(radius)) refuse("radius", radius, "must be finite and > 0 m");
  if (!(grid_spacing >= 2.0 * radius) || !finite(grid_spacing))
    refuse("grid_spacing", grid_spacing,
           "must be finite and at least the particle diameter " + text(2.0 * radius) + " m");
  if (!finite(inlet_x)) refuse("inlet_x", inlet_x, "must be finite");
  if (!(outlet_x > inlet_x + 2.0 * reset_distance()) || !finite(outlet_x))
    refuse("outlet_x", outlet_x,
           "must be finite and beyond inlet_x + 4 radii = " + text(inlet_x + 4.0 * radius) + " m");
  if (!finite(y_min) || !finite(y_max) || !(y_max - y_min >= grid_spacing))
    refuse("y_max", y_max, "must be finite and at least one grid_spacing above y_min");
  if (!finite(z_min) || !finite(z_max) || !(z_max - z_min >= grid_spacing))
    refuse("z_max", z_max, "must be finite and at least one grid_spacing above z_min");
  if (grid_margin(y_max - y_min, grid_spacing) < radius)
    refuse("y_max", y_max, "leaves the outer layer columns closer than a radius to the walls");
  if (grid_margin(z_max - z_min, grid_spacing) < radius)
    refuse("z_max", z_max, "leaves the outer layer rows closer than a radius to the walls");
  if (!(speed > 0.0) || !finite(speed)) refuse("speed", speed, "must be finite and > 0 m/s");
  if (!(perturbation >= 0.0) || !finite(perturbation))
    refuse("perturbation", perturbation, "must be finite and >= 0 m/s");
  if (material < 0) refuse("material", material, "must be a material index >= 0");
  if (cells_x < 1) refuse("cells_x", static_cast<double>(cells_x), "must be >= 1");
  if (cells_y < 1) refuse("cells_y", static_cast<double>(cells_y), "must be >= 1");
}

int ChannelFlowOptions::layer_columns() const { return grid_points(y_max - y_min, grid_spacing); }
int ChannelFlowOptions::layer_rows() const { return grid_points(z_max - z_min, grid_spacing); }

ChannelInflow::ChannelInflow(World& world, ChannelFlowOptions options)
    : ChannelInflow(world, std::move(options), 0) {
  add_layer(world);
  if (options_.fill) fill(world);
}

ChannelInflow ChannelInflow::resume(World& world, ChannelFlowOptions options,
                                    const ChannelInflowState& state) {
  if (state.particles < 0 || state.layers < 0 || state.added < 0 || state.removed < 0)
    throw InputError("ChannelInflowState: negative counts (particles " +
                     std::to_string(state.particles) + ", layers " + std::to_string(state.layers) +
                     ", added " + std::to_string(state.added) + ", removed " +
                     std::to_string(state.removed) + ")");
  ChannelInflow inflow(world, std::move(options), 0);
  world.bodies.resize(world.bodies.size() + static_cast<std::size_t>(state.particles),
                      inflow.particle_);
  inflow.layers_ = state.layers;
  inflow.added_ = state.added;
  inflow.removed_ = state.removed;
  inflow.state_ = state.generator;
  return inflow;
}

ChannelInflowState ChannelInflow::state(const World& world) const {
  return {layers_, added_, removed_, state_,
          static_cast<long>(world.bodies.size()) - first_particle_};
}

ChannelInflow::ChannelInflow(World& world, ChannelFlowOptions options, int)
    : options_(std::move(options)), state_(options_.seed) {
  options_.validate();
  if (options_.material >= static_cast<int>(world.materials.size()))
    throw InputError("ChannelFlowOptions.material = " + std::to_string(options_.material) +
                     ": the world has " + std::to_string(world.materials.size()) + " materials");
  RigidBody plane;
  plane.name = "inflow_plane";
  plane.motion = Motion::prescribed;
  plane.shape.geometry = HalfSpace{Vec3::UnitX()};
  plane.position = Vec3(options_.inlet_x, 0.5 * (options_.y_min + options_.y_max),
                        0.5 * (options_.z_min + options_.z_max));
  plane.linear_velocity = Vec3(options_.speed, 0.0, 0.0);
  plane.material = options_.material;
  plane_ = world.add_body(plane);
  first_particle_ = plane_ + 1;

  particle_.shape.geometry = Sphere{options_.radius};
  particle_.material = options_.material;
  const MassProperties mass = mass_properties(
      particle_.shape.geometry, world.materials[options_.material].density, Dimension::three);
  particle_.mass = mass.mass;
  particle_.inertia_body = mass.inertia;
}

void ChannelInflow::fill(World& world) {
  const double h = options_.grid_spacing;
  RigidBody& plane = world.bodies[plane_];
  const double start = plane.position.x();
  const int first_new = static_cast<int>(world.bodies.size());
  // Each grid layer is made by add_layer with the plane moved there, then the plane returns.
  for (int k = 1; start + k * h + 2.0 * options_.radius <= options_.outlet_x; ++k) {
    world.bodies[plane_].position.x() = start + k * h;
    add_layer(world);
    --layers_;
  }
  world.bodies[plane_].position.x() = start;
  // Points inside the obstacle: a contact of negative gap with a fixed, bounded body.
  const int n = static_cast<int>(world.bodies.size());
  std::vector<char> removed(n, 0);
  std::vector<Contact> contacts;
  int count = 0;
  for (int b = 0; b < plane_; ++b) {
    const RigidBody& fixed = world.bodies[b];
    const double reach = bounding_radius(fixed.shape.geometry) + options_.radius;
    if (fixed.is_dynamic() || !std::isfinite(reach)) continue;
    const Vec3 centre = fixed.position + fixed.orientation * fixed.shape.offset;
    for (int i = first_new; i < n; ++i) {
      if (removed[i] || (world.bodies[i].position - centre).norm() > reach) continue;
      contacts.clear();
      narrow_phase(world, b, i, 0.0, contacts);
      for (const Contact& c : contacts)
        if (c.gap < 0.0) {
          removed[i] = 1;
          ++count;
          break;
        }
    }
  }
  if (count > 0) world.remove_bodies(removed);
  added_ -= count;
}

double ChannelInflow::uniform() {
  // splitmix64 (Steele, Lea & Flood 2014): a fixed sequence for a seed on every platform,
  // unlike the standard distributions.
  std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return 2.0 * (static_cast<double>(z >> 11) * 0x1.0p-53) - 1.0;
}

void ChannelInflow::add_layer(World& world) {
  const ChannelFlowOptions& o = options_;
  const double h = o.grid_spacing;
  const double x = world.bodies[plane_].position.x() + o.radius;
  const double y0 = o.y_min + grid_margin(o.y_max - o.y_min, h);
  const double z0 = o.z_min + grid_margin(o.z_max - o.z_min, h);
  const int columns = o.layer_columns(), rows = o.layer_rows();
  world.bodies.reserve(world.bodies.size() + static_cast<std::size_t>(columns) * rows);
  for (int k = 0; k < rows; ++k)
    for (int j = 0; j < columns; ++j) {
      RigidBody& p = world.bodies.emplace_back(particle_);
      p.position = Vec3(x, y0 + j * h, z0 + k * h);
      const double vy = o.perturbation * uniform();
      const double vz = o.perturbation * uniform();
      p.linear_velocity = Vec3(o.speed, vy, vz);
    }
  ++layers_;
  added_ += static_cast<long>(columns) * rows;
}

InflowUpdate ChannelInflow::after_step(Stepper& stepper) {
  World& world = stepper.world();
  InflowUpdate update;
  const int n = static_cast<int>(world.bodies.size());
  std::vector<char> removed;
  for (int i = first_particle_; i < n; ++i) {
    if (world.bodies[i].position.x() <= options_.outlet_x) continue;
    if (removed.empty()) removed.assign(n, 0);
    removed[i] = 1;
    ++update.removed;
  }
  if (update.removed > 0) {
    const std::vector<int> new_index = world.remove_bodies(removed);
    stepper.renumber_bodies(new_index);
    removed_ += update.removed;
  }
  // The plane moves with its prescribed velocity in every step; the reset is relative to the
  // distance it travelled, so a time step that does not divide two radii carries the rest on.
  RigidBody& plane = world.bodies[plane_];
  const double travelled = plane.position.x() - options_.inlet_x;
  if (travelled >= options_.reset_distance() * (1.0 - 1e-9)) {
    plane.position.x() -= options_.reset_distance();
    const long before = added_;
    add_layer(world);
    update.added = static_cast<int>(added_ - before);
  }
  return update;
}

CellFields::CellFields(double x_min, double x_max, double y_min, double y_max, long cells_x,
                       long cells_y)
    : x0_(x_min), x1_(x_max), y0_(y_min), y1_(y_max), nx_(cells_x), ny_(cells_y) {
  if (!(x_max > x_min) || !(y_max > y_min) || cells_x < 1 || cells_y < 1)
    throw InputError("CellFields: an empty grid");
  cells_.resize(static_cast<std::size_t>(nx_ * ny_));
}

void CellFields::clear() { std::fill(cells_.begin(), cells_.end(), Cell{}); }

void CellFields::add(const World& world, int first) {
  const double wx = cell_width(), wy = cell_depth();
  for (std::size_t i = static_cast<std::size_t>(first); i < world.bodies.size(); ++i) {
    const RigidBody& b = world.bodies[i];
    const double x = b.position.x(), y = b.position.y();
    if (!(x >= x0_ && x < x1_ && y >= y0_ && y < y1_)) continue;
    const long ix = std::min(nx_ - 1, static_cast<long>((x - x0_) / wx));
    const long iy = std::min(ny_ - 1, static_cast<long>((y - y0_) / wy));
    Cell& c = cells_[iy * nx_ + ix];
    ++c.count;
    c.velocity += b.linear_velocity;
    c.angular_velocity += b.angular_velocity;
    c.height = std::max(c.height, b.position.z() + sphere_radius(b));
  }
}

double CellFields::peak_speed(long min_count) const {
  double peak = 0.0;
  for (const Cell& c : cells_)
    if (c.count >= min_count && c.count > 0)
      peak = std::max(peak, c.velocity.norm() / static_cast<double>(c.count));
  return peak;
}

double bed_solid_fraction(const CellFields& cells, double radius, double z_floor) {
  double bed = 0.0;
  long count = 0;
  const double area = cells.cell_width() * cells.cell_depth();
  for (long iy = 0; iy < cells.cells_y(); ++iy)
    for (long ix = 0; ix < cells.cells_x(); ++ix) {
      const CellFields::Cell& c = cells.at(ix, iy);
      if (c.count == 0) continue;
      bed += area * (c.height - z_floor);
      count += c.count;
    }
  const double volume = 4.0 / 3.0 * std::numbers::pi * radius * radius * radius;
  return bed > 0.0 ? static_cast<double>(count) * volume / bed : 0.0;
}

std::vector<double> radial_distribution(const World& world, int first, const Vec3& lo,
                                        const Vec3& hi, double volume, double r_max, int bins) {
  std::vector<Vec3> points;
  for (std::size_t i = static_cast<std::size_t>(first); i < world.bodies.size(); ++i) {
    const Vec3& p = world.bodies[i].position;
    if ((p.array() >= lo.array()).all() && (p.array() <= hi.array()).all()) points.push_back(p);
  }
  std::vector<double> g(static_cast<std::size_t>(bins), 0.0);
  if (points.size() < 2 || !(volume > 0.0) || bins < 1) return g;
  std::sort(points.begin(), points.end(),
            [](const Vec3& a, const Vec3& b) { return a.x() < b.x(); });
  const double dr = r_max / bins;
  std::vector<long> pairs(static_cast<std::size_t>(bins), 0);
  for (std::size_t i = 0; i < points.size(); ++i)
    for (std::size_t j = i + 1; j < points.size() && points[j].x() - points[i].x() < r_max; ++j) {
      const double d = (points[j] - points[i]).norm();
      if (d < r_max) ++pairs[static_cast<std::size_t>(d / dr)];
    }
  const double n = static_cast<double>(points.size());
  const double rho = n / volume;
  for (int k = 0; k < bins; ++k) {
    const double r0 = k * dr, r1 = (k + 1) * dr;
    const double shell = 4.0 / 3.0 * std::numbers::pi * (r1 * r1 * r1 - r0 * r0 * r0);
    // Each pair is a neighbour of both its particles.
    g[static_cast<std::size_t>(k)] = 2.0 * static_cast<double>(pairs[k]) / (n * rho * shell);
  }
  return g;
}

}  // namespace moreau
