#include "deposit.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <variant>

namespace moreau::column_drop {

std::vector<Vec2> body_outline(const RigidBody& body) {
  std::vector<Vec2> points;
  if (const auto* polygon = std::get_if<Polygon>(&body.shape.geometry)) {
    for (const Vec2& v : polygon->outline) {
      const Vec3 p = body.position + body.orientation * Vec3(v.x(), v.y(), 0.0);
      points.emplace_back(p.x(), p.y());
    }
  } else if (const auto* disk = std::get_if<Sphere>(&body.shape.geometry)) {
    constexpr int kRim = 32;
    for (int k = 0; k < kRim; ++k) {
      const double phi = 2.0 * std::numbers::pi * k / kRim;
      points.emplace_back(body.position.x() + disk->radius * std::cos(phi),
                          body.position.y() + disk->radius * std::sin(phi));
    }
  }
  return points;
}

std::vector<SurfaceBin> free_surface(const World& world, double bin) {
  std::vector<SurfaceBin> surface;
  for (const RigidBody& body : world.bodies) {
    if (!body.is_dynamic()) continue;
    for (const Vec2& p : body_outline(body)) {
      if (p.x() < 0.0) continue;  // at the wall within an overlap
      const auto k = static_cast<std::size_t>(p.x() / bin);
      if (k >= surface.size()) surface.resize(k + 1);
      surface[k].occupied = true;
      surface[k].height = std::max(surface[k].height, p.y());
    }
  }
  for (std::size_t k = 0; k < surface.size(); ++k) surface[k].x = (k + 0.5) * bin;
  return surface;
}

double toe(const std::vector<SurfaceBin>& surface, double bin) {
  std::size_t k = 0;
  while (k < surface.size() && surface[k].occupied) ++k;
  return k * bin;
}

SlopeFit surface_slope(const std::vector<SurfaceBin>& surface, double bin, double low,
                       double high) {
  const auto end = static_cast<std::size_t>(std::lround(toe(surface, bin) / bin));
  SlopeFit fit;
  for (std::size_t k = 0; k < end; ++k) fit.height = std::max(fit.height, surface[k].height);
  double sx = 0.0, sy = 0.0, sxx = 0.0, sxy = 0.0;
  for (std::size_t k = 0; k < end; ++k) {
    const double h = surface[k].height;
    if (h < low * fit.height || h > high * fit.height) continue;
    const double x = surface[k].x;
    sx += x;
    sy += h;
    sxx += x * x;
    sxy += x * h;
    ++fit.points;
  }
  if (fit.points < 2) return fit;
  const double n = fit.points;
  const double denominator = n * sxx - sx * sx;
  if (denominator <= 0.0) return fit;
  const double slope = (n * sxy - sx * sy) / denominator;
  fit.angle_deg = std::atan(-slope) * 180.0 / std::numbers::pi;
  return fit;
}

Energy kinetic_energy(const World& world, double x_max) {
  Energy energy;
  for (const RigidBody& body : world.bodies) {
    if (!body.is_dynamic() || body.position.x() >= x_max) continue;
    ++energy.bodies;
    energy.mass += body.mass;
    energy.kinetic +=
        0.5 * body.mass * body.linear_velocity.squaredNorm() +
        0.5 * body.inertia_body(2, 2) * body.angular_velocity.z() * body.angular_velocity.z();
  }
  return energy;
}

}  // namespace moreau::column_drop
