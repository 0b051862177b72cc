#include "moreau/model/world.hpp"

#include <Eigen/Eigenvalues>
#include <cmath>
#include <sstream>
#include <string>
#include <utility>

#include "moreau/core/error.hpp"

namespace moreau {
namespace {

std::string body_label(const World& world, int index) {
  std::ostringstream label;
  label << "body " << index;
  if (!world.bodies[index].name.empty()) label << " ('" << world.bodies[index].name << "')";
  return label.str();
}

bool finite(const Vec3& v) { return v.allFinite(); }

}  // namespace

int World::add_body(const RigidBody& body) {
  bodies.push_back(body);
  return static_cast<int>(bodies.size()) - 1;
}

std::vector<int> World::remove_bodies(const std::vector<char>& removed) {
  if (removed.size() != bodies.size())
    throw InputError("World::remove_bodies: " + std::to_string(removed.size()) + " flags for " +
                     std::to_string(bodies.size()) + " bodies");
  std::vector<int> new_index(bodies.size(), -1);
  int kept = 0;
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    if (removed[i]) continue;
    if (static_cast<int>(i) != kept) bodies[kept] = std::move(bodies[i]);
    new_index[i] = kept++;
  }
  bodies.resize(kept);
  return new_index;
}

int World::add_material(const Material& material) {
  materials.push_back(material);
  return static_cast<int>(materials.size()) - 1;
}

Vec6 World::external_force(int body) const {
  Vec6 force = Vec6::Zero();
  force.head<3>() = bodies[body].mass * gravity;
  if (dimension == Dimension::two) force(2) = 0.0;
  return force;
}

void World::validate() const {
  auto fail = [&](int index, const std::string& what) {
    throw InputError(body_label(*this, index) + ": " + what);
  };
  if (!gravity.allFinite()) throw InputError("gravity is not finite");
  if (dimension == Dimension::two && gravity.z() != 0.0)
    throw InputError("gravity has a z component in a 2D world");
  for (std::size_t m = 0; m < materials.size(); ++m) {
    const Material& mat = materials[m];
    const std::string where = "material " + std::to_string(m) + " ('" + mat.name + "'): ";
    if (!(mat.density > 0.0) || !std::isfinite(mat.density))
      throw InputError(where + "density must be a finite positive number");
    if (!(mat.youngs_modulus >= 0.0))  // +inf is allowed: a rigid body in a DEM pair
      throw InputError(where + "youngs_modulus must be >= 0");
    if (!(mat.poisson_ratio > -1.0 && mat.poisson_ratio < 0.5))
      throw InputError(where + "poisson_ratio must lie in (-1, 0.5)");
    if (!(mat.relative_stiffness > 0.0))  // +inf is allowed: a rigid partner (compatible CD)
      throw InputError(where + "relative_stiffness must be > 0");
    if (!(mat.restitution >= 0.0 && mat.restitution <= 1.0))
      throw InputError(where + "restitution must lie in [0, 1]");
  }
  for (int i = 0; i < static_cast<int>(bodies.size()); ++i) {
    const RigidBody& b = bodies[i];
    if (!finite(b.position) || !b.orientation.coeffs().allFinite() || !finite(b.linear_velocity) ||
        !finite(b.angular_velocity))
      fail(i, "state (position, orientation or velocity) is not finite");
    if (std::abs(b.orientation.norm() - 1.0) > 1e-9)
      fail(i, "orientation quaternion is not unit (norm " + std::to_string(b.orientation.norm()) +
                  ")");
    if (b.is_dynamic()) {
      if (!(b.mass > 0.0) || !std::isfinite(b.mass)) fail(i, "mass must be finite and > 0");
      if (!b.inertia_body.allFinite()) fail(i, "inertia is not finite");
      if (!b.rotation_locked) {
        Eigen::SelfAdjointEigenSolver<Mat3> eig(b.inertia_body);
        const bool planar = dimension == Dimension::two;
        if (planar ? !(b.inertia_body(2, 2) > 0.0) : !(eig.eigenvalues().minCoeff() > 0.0))
          fail(i, "inertia must be positive definite (free rotation needs it)");
      }
    }
    if (b.material < 0 || b.material >= static_cast<int>(materials.size()))
      fail(i, "material index " + std::to_string(b.material) + " does not exist");
    std::visit(
        [&](const auto& g) {
          using G = std::decay_t<decltype(g)>;
          if constexpr (std::is_same_v<G, Sphere>) {
            if (!(g.radius >= 0.0) || !std::isfinite(g.radius))
              fail(i, "sphere radius must be >= 0");
          } else if constexpr (std::is_same_v<G, HalfSpace>) {
            if (!finite(g.normal) || std::abs(g.normal.norm() - 1.0) > 1e-9)
              fail(i, "half-space normal must be a unit vector");
          } else if constexpr (std::is_same_v<G, Box>) {
            if (!finite(g.half_extents) || !(g.half_extents.minCoeff() > 0.0))
              fail(i, "box half extents must be > 0");
          } else if constexpr (std::is_same_v<G, Capsule>) {
            if (!(g.half_length >= 0.0) || !(g.radius >= 0.0) || !std::isfinite(g.half_length) ||
                !std::isfinite(g.radius))
              fail(i, "capsule half_length and radius must be >= 0");
          } else if constexpr (std::is_same_v<G, Polygon>) {
            if (dimension != Dimension::two) fail(i, "a polygon is a 2D shape; the world is 3D");
            if (g.pieces.empty()) fail(i, "polygon without pieces (build it with make_polygon)");
            try {
              check_outline(g.outline);
            } catch (const InputError& e) {
              fail(i, e.what());
            }
          }
        },
        b.shape.geometry);
    if (!finite(b.shape.offset)) fail(i, "shape offset is not finite");
    if (dimension == Dimension::two) {
      if (b.position.z() != 0.0 || b.linear_velocity.z() != 0.0)
        fail(i, "a 2D world needs z = 0 and vz = 0");
      if (b.angular_velocity.x() != 0.0 || b.angular_velocity.y() != 0.0)
        fail(i, "a 2D world allows rotation about z only");
    }
  }
}

void World::check_finite(long step) const {
  for (int i = 0; i < static_cast<int>(bodies.size()); ++i) {
    const RigidBody& b = bodies[i];
    if (!finite(b.position) || !b.orientation.coeffs().allFinite() || !finite(b.linear_velocity) ||
        !finite(b.angular_velocity))
      throw SimulationError("step " + std::to_string(step) + ": the state of " +
                            body_label(*this, i) + " is not finite (NaN or inf)");
  }
}

RigidCluster point_mass_cluster(const std::vector<PointMass>& masses) {
  RigidCluster cluster{0.0, Vec3::Zero(), Mat3::Zero()};
  for (const PointMass& p : masses) {
    if (!(p.mass > 0.0)) throw InputError("point mass must be > 0");
    cluster.mass += p.mass;
    cluster.centre += p.mass * p.position;
  }
  if (masses.empty()) throw InputError("a point-mass cluster needs at least one mass");
  cluster.centre /= cluster.mass;
  for (const PointMass& p : masses) {
    const Vec3 d = p.position - cluster.centre;
    cluster.inertia += p.mass * (d.squaredNorm() * Mat3::Identity() - d * d.transpose());
  }
  return cluster;
}

}  // namespace moreau
