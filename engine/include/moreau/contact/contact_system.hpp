#pragma once
// Contact Jacobian H^T (B in Olsen & Kamrin eq. 15), block-diagonal inverse mass and the
// matrix-free Delassus product built from them.
#include <vector>

#include "moreau/collision/contact.hpp"
#include "moreau/contact/delassus.hpp"
#include "moreau/model/world.hpp"

namespace moreau {

// Rows of one contact: local velocity u_i = J_a v_a + J_b v_b with u = (u_n, u_t1, u_t2) the
// velocity of body b relative to body a at the contact point in the frame (n, t1, t2);
// u_n > 0 separates. A non-dynamic body (fixed, prescribed) has index -1 here: it takes no
// impulse, its velocity enters the free velocity instead.
struct ContactRows {
  int body_a = -1;
  int body_b = -1;
  JacobianBlock jacobian_a = JacobianBlock::Zero();
  JacobianBlock jacobian_b = JacobianBlock::Zero();
  // M^-1 J^T of each side (6 x 3), precomputed for the products.
  Eigen::Matrix<double, 6, 3> mobility_a = Eigen::Matrix<double, 6, 3>::Zero();
  Eigen::Matrix<double, 6, 3> mobility_b = Eigen::Matrix<double, 6, 3>::Zero();
};

// Jacobian block of a point p of a body at x: rows n, t1, t2 of [I, -(p - x)^x], so that
// J (v, omega) = (frame)^T (v + omega x (p - x)).
JacobianBlock point_jacobian(const Contact& contact, const Vec3& body_position);

// Local velocities u_i = J_a v_a + J_b v_b (leading `rows` entries per contact) of generalized
// body velocities (6 per body), over all bodies: unlike ContactSystem, fixed and prescribed
// bodies enter with their own velocity. Used for the free term q of every time stepper.
VecX local_velocities(const World& world, const std::vector<Contact>& contacts,
                      const VecX& body_velocities, int rows);
// The local velocity (n, t1, t2) of one contact, as local_velocities computes it.
Vec3 local_velocity(const World& world, const Contact& contact, const VecX& body_velocities);

// Coulomb coefficient of each contact from the friction table of the two bodies' materials.
VecX friction_coefficients(const World& world, const std::vector<Contact>& contacts);

// The contact system of one time step: Jacobians of all contacts and the inverse masses of
// all bodies. Implements the Delassus operator matrix-free: W x = J M^-1 J^T x, computed as a
// gather over each body's contacts (no atomics, deterministic) then a per-contact product,
// both OpenMP-parallel. apply() (the interior point method's inner loop) reads a compact
// form of the Jacobians, J_side v = sign F (v + omega x lever) with the contact frame F and
// the lever p - x of each side (12 numbers per side instead of a 3 x 6 Jacobian and a 6 x 3
// mobility block), stored in the order each phase streams through them; M^-1 is applied
// once per body after its gather.
class ContactSystem final : public DelassusOperator {
 public:
  // rows_per_contact: 1 for frictionless problems, else the world dimension.
  ContactSystem(const World& world, const std::vector<Contact>& contacts, int rows_per_contact);

  int contact_count() const override { return static_cast<int>(rows_.size()); }
  int rows_per_contact() const override { return rows_per_contact_; }
  void apply(const VecX& x, VecX& y) const override;
  Mat3 diagonal_block(int contact) const override;
  void begin_sweep(const VecX& r, VecX& work) const override;
  Vec3 local_velocity(int contact, const VecX& work) const override;
  void update_sweep(int contact, const Vec3& dr, VecX& work) const override;
  SparseMatrix assemble() const override;

  int body_count() const { return static_cast<int>(inverse_mass_.size()); }
  const std::vector<ContactRows>& rows() const { return rows_; }
  const InverseMass& inverse_mass(int body) const { return inverse_mass_[body]; }

  // Generalized body velocity change M^-1 H r (6 per body) for contact impulses r.
  VecX body_velocity_change(const VecX& impulses) const;
  // Generalized body impulse H r (6 per body), in N s and N m s.
  VecX body_impulse(const VecX& impulses) const;
  // Local contact velocities J v for generalized body velocities v (6 per body).
  VecX contact_velocity(const VecX& body_velocities) const;
  // The two halves of apply() in the compact form, parallel: H x (6 per body, no M^-1) and
  // J v. The interior point method's factored Newton system works with them in the body space.
  void apply_jacobian_transpose(const VecX& x, VecX& body_impulse) const;
  void apply_jacobian(const VecX& body_velocities, VecX& y) const;
  // Assembled H^T (contacts x 6 bodies), used where a solver or test needs it.
  SparseMatrix assemble_jacobian() const;

 private:
  int rows_per_contact_;
  std::vector<ContactRows> rows_;
  std::vector<InverseMass> inverse_mass_;
  // For each body, the (contact, side) pairs touching it, in contact order (CSR layout).
  std::vector<int> body_contact_start_;
  std::vector<int> body_contact_index_;  // 2*contact + side (0 = a, 1 = b)
  // Compact Jacobians (see the class comment). Gather phase, in body_contact_index_ order:
  // sign * F and the lever of each side, and its contact. Product phase, in contact order:
  // F, the two levers and the two bodies (-1: not dynamic).
  std::vector<Mat3> gather_frame_;
  std::vector<Vec3> gather_lever_;
  std::vector<int> gather_contact_;
  std::vector<Mat3> frame_;
  std::vector<Vec3> lever_;              // 2 per contact: side a, side b
  std::vector<Eigen::Vector2i> bodies_;  // (body_a, body_b)
  void gather_velocity(const VecX& x, VecX& body_velocity) const;
  void gather_velocity_compact(const VecX& x, VecX& body_velocity, bool inverse_mass) const;
  void contact_velocity_compact(const VecX& body_velocities, VecX& y) const;
};

}  // namespace moreau
