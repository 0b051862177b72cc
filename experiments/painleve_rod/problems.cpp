#include "problems.hpp"

#include <algorithm>
#include <vector>

#include "moreau/collision/collision_detector.hpp"
#include "moreau/contact/contact_system.hpp"
#include "moreau/contact/delassus.hpp"
#include "moreau/core/error.hpp"
#include "moreau/impact/block_solvers.hpp"
#include "moreau/impact/coulomb_enumeration.hpp"
#include "moreau/impact/reference_minimizer.hpp"
#include "moreau/impact/single_contact.hpp"
#include "moreau/integrator/impulse_velocity_stepper.hpp"
#include "moreau/solver/projected_gauss_seidel.hpp"

namespace painleve_rod {

using namespace moreau;

Mat3 world_delassus(double mass, const Mat3& inertia, const Vec3& point, const Vec3& normal) {
  World world;
  RigidBody plane;
  plane.motion = Motion::fixed;
  plane.shape.geometry = HalfSpace{Vec3::UnitY()};
  world.add_body(plane);
  RigidBody body;
  body.mass = mass;
  body.inertia_body = inertia;
  world.add_body(body);
  Contact contact;
  contact.body_a = 0;
  contact.body_b = 1;
  contact.normal = normal;
  contact.point = point;
  complete_frame(contact, Dimension::three);
  const ContactSystem system(world, {contact}, 3);
  Mat3 frame;
  frame << contact.normal, contact.tangent1, contact.tangent2;
  return frame * system.diagonal_block(0) * frame.transpose();
}

Academic academic_problem(bool normalized_frame) {
  std::vector<PointMass> masses;
  for (const double sign : {1.0, -1.0}) {
    masses.push_back({Vec3(sign * kDx, 0.0, 0.0), kMx});
    masses.push_back({Vec3(0.0, sign * kDy, 0.0), kMy});
    masses.push_back({Vec3(0.0, 0.0, sign * kDz), kMz});
  }
  const RigidCluster cluster = point_mass_cluster(masses);
  const Mat3 paper_inertia =
      2.0 * Vec3(kMy * kDy * kDy + kMz * kDz * kDz, kMx * kDx * kDx + kMz * kDz * kDz,
                 kMx * kDx * kDx + kMy * kDy * kDy)
                .asDiagonal();
  const Vec3 n = kPlaneNormal.normalized();
  Vec3 t = n.cross(Vec3::UnitX());
  Vec3 o = n.cross(t);
  if (normalized_frame) {
    t.normalize();
    o.normalize();
  }
  Academic academic;
  academic.frame << n, t, o;
  const Mat3 world = world_delassus(cluster.mass, cluster.inertia, Vec3(kDx, 0.0, 0.0), n);
  academic.problem.a = academic.frame.transpose() * world * academic.frame;
  academic.problem.b = academic.frame.transpose() * kAcademicVelocity;
  academic.problem.mu = kAcademicMu;
  academic.problem.validate();
  academic.inertia_error = (cluster.inertia - paper_inertia).norm() / paper_inertia.norm();
  return academic;
}

World rod_world(double theta, double mu) {
  World world;
  world.gravity = Vec3(0.0, -kGravity, 0.0);
  world.friction = FrictionTable(mu);
  RigidBody plane;
  plane.name = "half-space";
  plane.motion = Motion::fixed;
  plane.shape.geometry = HalfSpace{Vec3::UnitY()};
  world.add_body(plane);
  RigidBody rod;
  rod.name = "rod";
  rod.mass = kRodMass;
  // m l^2 / 12 about the transverse axes; the axial moment (infinite in the paper) never enters,
  // contact forces act on the axis: any positive value gives the same dynamics.
  rod.inertia_body =
      Vec3(1e-3, 1.0, 1.0).asDiagonal() * (kRodMass * kRodLength * kRodLength / 12.0);
  rod.shape.geometry = Capsule{0.5 * kRodLength, 0.0};
  rod.position = 0.5 * kRodLength * Vec3(std::cos(theta), std::sin(theta), 0.0);
  rod.orientation = Quat(Eigen::AngleAxisd(theta, Vec3::UnitZ()));
  rod.linear_velocity = Vec3(-kSlidingSpeed, 0.0, 0.0);
  world.add_body(rod);
  return world;
}

RodImpact rod_impact(double theta) {
  const World world = rod_world(theta, 0.0);
  CollisionOptions collision;
  collision.margin = kContactMargin;
  const std::vector<Contact> contacts = detect_contacts(world, collision);
  if (contacts.size() != 1) throw SimulationError("painleve_rod: expected one tip contact at t0");
  const ContactSystem system(world, contacts, 3);
  VecX velocities(12);
  velocities << world.bodies[0].velocity(), world.bodies[1].velocity();
  RodImpact impact;
  impact.problem.a = system.diagonal_block(0);
  impact.problem.b = -system.contact_velocity(velocities).head<3>();
  impact.frame << contacts[0].normal, contacts[0].tangent1, contacts[0].tangent2;
  return impact;
}

double mu_star(double theta) {
  return (std::cos(theta) + 1.0 / (3.0 * std::cos(theta))) / std::sin(theta);
}

Vec3 lambda0(double theta) {
  return kRodMass * kSlidingSpeed / 8.0 *
         Vec3(5.0 + 3.0 * std::cos(2.0 * theta), 3.0 * std::sin(2.0 * theta), 0.0);
}

double engine_mu_star(double theta) {
  const SingleContactProblem p = rod_impact(theta).problem;
  return p.a(0, 0) / std::hypot(p.a(0, 1), p.a(0, 2));
}

}  // namespace painleve_rod
