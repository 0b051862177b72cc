#include "moreau/model/shape.hpp"

#include <cmath>
#include <limits>
#include <numbers>
#include <sstream>
#include <type_traits>

#include "moreau/core/error.hpp"

namespace moreau {
namespace {

using std::numbers::pi;

std::string text(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

void require_density(double density) {
  if (!(density > 0.0) || !std::isfinite(density))
    throw InputError("mass_properties: density must be a finite positive number, got " +
                     text(density));
}

// Only I_zz acts in a 2D world; the in-plane axes get the same value so that the inertia stays
// positive definite for code that inverts the full 3x3 block.
Mat3 planar_inertia(double izz) { return izz * Mat3::Identity(); }

MassProperties sphere_mass(const Sphere& s, double density, Dimension dimension) {
  const double r = s.radius;
  if (!(r > 0.0))
    throw InputError("mass_properties: sphere of radius " + text(r) + " has no volume");
  MassProperties out;
  if (dimension == Dimension::two) {
    out.mass = density * pi * r * r;  // disk of unit thickness
    out.inertia = planar_inertia(0.5 * out.mass * r * r);
  } else {
    out.mass = density * 4.0 / 3.0 * pi * r * r * r;
    out.inertia = 0.4 * out.mass * r * r * Mat3::Identity();
  }
  return out;
}

MassProperties box_mass(const Box& b, double density, Dimension dimension) {
  const Vec3& e = b.half_extents;
  const bool planar = dimension == Dimension::two;
  if (!(e.x() > 0.0 && e.y() > 0.0 && (planar || e.z() > 0.0)))
    throw InputError("mass_properties: box with a non-positive half extent has no volume");
  MassProperties out;
  const Vec3 sq = e.cwiseAbs2();
  if (planar) {
    out.mass = density * 4.0 * e.x() * e.y();  // rectangle of unit thickness
    out.inertia = planar_inertia(out.mass / 3.0 * (sq.x() + sq.y()));
  } else {
    // m (a^2 + b^2) / 12 with full edges a = 2 e_i.
    out.mass = density * 8.0 * e.x() * e.y() * e.z();
    out.inertia.diagonal() << out.mass / 3.0 * (sq.y() + sq.z()),
        out.mass / 3.0 * (sq.x() + sq.z()), out.mass / 3.0 * (sq.x() + sq.y());
  }
  return out;
}

MassProperties capsule_mass(const Capsule& c, double density, Dimension dimension) {
  const double h = c.half_length;
  const double r = c.radius;
  if (!(r > 0.0))
    throw InputError("mass_properties: capsule of radius 0 (a bare segment) has no volume");
  MassProperties out;
  if (dimension == Dimension::two) {
    // Stadium of unit thickness: a 2h x 2r rectangle plus two half disks whose centroids lie
    // 4r/(3 pi) beyond the rectangle ends; the parallel-axis terms of the two halves sum to
    // m_disk (h^2 + 2 h 4r/(3 pi)).
    const double m_rect = density * 4.0 * h * r;
    const double m_disk = density * pi * r * r;
    out.mass = m_rect + m_disk;
    const double izz =
        m_rect * (h * h + r * r) / 3.0 + m_disk * (0.5 * r * r + h * h + 8.0 * h * r / (3.0 * pi));
    out.inertia = planar_inertia(izz);
  } else {
    // Cylinder of length 2h along x plus two hemispheres; each hemisphere has its centroid
    // 3r/8 from its flat face, which gives m_ball (2/5 r^2 + h^2 + 3/4 h r) about a
    // perpendicular axis through the capsule centre.
    const double m_cyl = density * pi * r * r * 2.0 * h;
    const double m_ball = density * 4.0 / 3.0 * pi * r * r * r;
    out.mass = m_cyl + m_ball;
    const double axial = 0.5 * m_cyl * r * r + 0.4 * m_ball * r * r;
    const double perpendicular =
        m_cyl * (h * h / 3.0 + r * r / 4.0) + m_ball * (0.4 * r * r + h * h + 0.75 * h * r);
    out.inertia.diagonal() << axial, perpendicular, perpendicular;
  }
  return out;
}

// Prism of unit thickness over the outline: m = rho A, I_zz = rho J_centroid (Green's theorem).
MassProperties polygon_mass(const Polygon& p, double density, Dimension dimension) {
  if (dimension != Dimension::two)
    throw InputError("mass_properties: a polygon is a 2D shape; the world is 3D");
  if (p.outline.empty() || p.pieces.empty())
    throw InputError("mass_properties: polygon without an outline (build it with make_polygon)");
  MassProperties out;
  out.mass = density * polygon_area(p.outline);
  out.inertia = planar_inertia(density * polygon_polar_moment(p.outline));
  return out;
}

}  // namespace

std::string shape_name(const ShapeGeometry& geometry) {
  return std::visit(
      [](const auto& g) -> std::string {
        using G = std::decay_t<decltype(g)>;
        if constexpr (std::is_same_v<G, Sphere>) return "sphere";
        if constexpr (std::is_same_v<G, HalfSpace>) return "half-space";
        if constexpr (std::is_same_v<G, Box>) return "box";
        if constexpr (std::is_same_v<G, Capsule>) return "capsule";
        if constexpr (std::is_same_v<G, Polygon>) return "polygon";
      },
      geometry);
}

double bounding_radius(const ShapeGeometry& geometry) {
  return std::visit(
      [](const auto& g) -> double {
        using G = std::decay_t<decltype(g)>;
        if constexpr (std::is_same_v<G, Sphere>) return g.radius;
        if constexpr (std::is_same_v<G, HalfSpace>) return std::numeric_limits<double>::infinity();
        if constexpr (std::is_same_v<G, Box>) return g.half_extents.norm();
        if constexpr (std::is_same_v<G, Capsule>) return g.half_length + g.radius;
        if constexpr (std::is_same_v<G, Polygon>) return g.radius;
      },
      geometry);
}

MassProperties mass_properties(const ShapeGeometry& geometry, double density, Dimension dimension) {
  require_density(density);
  return std::visit(
      [&](const auto& g) -> MassProperties {
        using G = std::decay_t<decltype(g)>;
        if constexpr (std::is_same_v<G, Sphere>) return sphere_mass(g, density, dimension);
        if constexpr (std::is_same_v<G, Box>) return box_mass(g, density, dimension);
        if constexpr (std::is_same_v<G, Capsule>) return capsule_mass(g, density, dimension);
        if constexpr (std::is_same_v<G, Polygon>) return polygon_mass(g, density, dimension);
        if constexpr (std::is_same_v<G, HalfSpace>)
          throw InputError("mass_properties: a half-space is unbounded and has no finite mass");
      },
      geometry);
}

}  // namespace moreau
