#include "moreau/contact/contact_system.hpp"

#include <omp.h>

#include <string>

#include "moreau/core/error.hpp"

namespace moreau {
namespace {

// Below this many contacts (or bodies) a loop runs on one thread: the fork-join cost of an
// OpenMP region (~microseconds, far more on a loaded machine) exceeds the work.
constexpr int kParallelGrain = 2048;

// Contacts (or contact sides) ahead of the one in hand whose scattered operands are prefetched.
constexpr int kPrefetchDistance = 8;

using Mobility = Eigen::Matrix<double, 6, 3>;

void accumulate(VecX& target, int body, const Vec6& value) {
  target.segment<6>(kBodyDofs * body) += value;
}

}  // namespace

JacobianBlock point_jacobian(const Contact& contact, const Vec3& body_position) {
  // e . (v + omega x r) = e . v + omega . (r x e): the row maps body velocity (v, omega) to the
  // velocity of the material point at the contact along frame direction e (Olsen & Kamrin eq. 15).
  const Vec3 lever = contact.point - body_position;
  JacobianBlock block;
  const Vec3* frame[3] = {&contact.normal, &contact.tangent1, &contact.tangent2};
  for (int k = 0; k < 3; ++k) {
    block.block<1, 3>(k, 0) = frame[k]->transpose();
    block.block<1, 3>(k, 3) = lever.cross(*frame[k]).transpose();
  }
  return block;
}

Vec3 local_velocity(const World& world, const Contact& c, const VecX& body_velocities) {
  return point_jacobian(c, world.bodies[c.body_b].position) *
             body_velocities.segment<6>(kBodyDofs * c.body_b) -
         point_jacobian(c, world.bodies[c.body_a].position) *
             body_velocities.segment<6>(kBodyDofs * c.body_a);
}

VecX local_velocities(const World& world, const std::vector<Contact>& contacts,
                      const VecX& body_velocities, int rows) {
  VecX u(rows * static_cast<Eigen::Index>(contacts.size()));
  for (std::size_t i = 0; i < contacts.size(); ++i)
    u.segment(rows * static_cast<Eigen::Index>(i), rows) =
        local_velocity(world, contacts[i], body_velocities).head(rows);
  return u;
}

VecX friction_coefficients(const World& world, const std::vector<Contact>& contacts) {
  VecX mu(static_cast<Eigen::Index>(contacts.size()));
  for (std::size_t i = 0; i < contacts.size(); ++i)
    mu(static_cast<Eigen::Index>(i)) = world.friction.get(
        world.bodies[contacts[i].body_a].material, world.bodies[contacts[i].body_b].material);
  return mu;
}

ContactSystem::ContactSystem(const World& world, const std::vector<Contact>& contacts,
                             int rows_per_contact)
    : rows_per_contact_(rows_per_contact) {
  const int max_rows = world.dimension == Dimension::two ? 2 : 3;
  if (rows_per_contact < 1 || rows_per_contact > max_rows)
    throw InputError("contact problem: rows per contact must be 1 (frictionless) or " +
                     std::to_string(max_rows) + " (frictional) in this world, got " +
                     std::to_string(rows_per_contact));
  const int body_count = static_cast<int>(world.bodies.size());
  inverse_mass_.reserve(body_count);
  for (const RigidBody& body : world.bodies)
    inverse_mass_.push_back(moreau::inverse_mass(body, world.dimension));

  rows_.resize(contacts.size());
  std::vector<int> degree(body_count + 1, 0);
  const int contact_count = static_cast<int>(contacts.size());
#pragma omp parallel for schedule(static) if (contact_count > kParallelGrain)
  for (int i = 0; i < contact_count; ++i) {
    const Contact& c = contacts[i];
    ContactRows& row = rows_[i];
    auto side = [&](int body, double sign, JacobianBlock& jacobian, Mobility& mobility) -> int {
      if (body < 0 || !world.bodies[body].is_dynamic()) return -1;
      jacobian = sign * point_jacobian(c, world.bodies[body].position);
      jacobian.bottomRows(3 - rows_per_contact).setZero();
      for (int k = 0; k < 3; ++k)
        mobility.col(k) = inverse_mass_[body].apply(jacobian.row(k).transpose());
      return body;
    };
    // u is the velocity of b relative to a, so body a enters with a minus sign.
    row.body_a = side(c.body_a, -1.0, row.jacobian_a, row.mobility_a);
    row.body_b = side(c.body_b, +1.0, row.jacobian_b, row.mobility_b);
  }
  for (const ContactRows& row : rows_) {
    if (row.body_a >= 0) ++degree[row.body_a + 1];
    if (row.body_b >= 0) ++degree[row.body_b + 1];
  }
  for (int b = 0; b < body_count; ++b) degree[b + 1] += degree[b];
  body_contact_start_ = degree;
  body_contact_index_.resize(degree.back());
  std::vector<int> fill(degree.begin(), degree.end() - 1);
  for (int i = 0; i < contact_count; ++i) {
    if (rows_[i].body_a >= 0) body_contact_index_[fill[rows_[i].body_a]++] = 2 * i;
    if (rows_[i].body_b >= 0) body_contact_index_[fill[rows_[i].body_b]++] = 2 * i + 1;
  }

  // Compact Jacobians for apply(): the frame (rows n, t1, t2; rows past rows_per_contact zero,
  // as in the Jacobian blocks) and each dynamic side's lever.
  frame_.resize(contacts.size());
  lever_.assign(2 * contacts.size(), Vec3::Zero());
  bodies_.resize(contacts.size());
  for (int i = 0; i < contact_count; ++i) {
    const Contact& c = contacts[i];
    Mat3 frame;
    frame.row(0) = c.normal.transpose();
    frame.row(1) = c.tangent1.transpose();
    frame.row(2) = c.tangent2.transpose();
    frame.bottomRows(3 - rows_per_contact).setZero();
    frame_[i] = frame;
    bodies_[i] = {rows_[i].body_a, rows_[i].body_b};
    if (rows_[i].body_a >= 0) lever_[2 * i] = c.point - world.bodies[c.body_a].position;
    if (rows_[i].body_b >= 0) lever_[2 * i + 1] = c.point - world.bodies[c.body_b].position;
  }
  gather_frame_.resize(body_contact_index_.size());
  gather_lever_.resize(body_contact_index_.size());
  gather_contact_.resize(body_contact_index_.size());
  for (std::size_t k = 0; k < body_contact_index_.size(); ++k) {
    const int entry = body_contact_index_[k];
    const int contact = entry / 2;
    // u is the velocity of b relative to a: side a enters with a minus sign.
    gather_frame_[k] = (entry % 2 == 0 ? -1.0 : 1.0) * frame_[contact];
    gather_lever_[k] = lever_[entry];
    gather_contact_[k] = contact;
  }
}

namespace {

// M^-1 H x for one body, with the row count fixed at compile time: the runtime-sized block
// products cost about a third of the matrix-free product's time.
template <int Rows>
Vec6 gather_mobility(const std::vector<ContactRows>& rows, const int* entries, int count,
                     const VecX& x) {
  Vec6 sum = Vec6::Zero();
  for (int k = 0; k < count; ++k) {
    const int entry = entries[k];
    const ContactRows& row = rows[entry / 2];
    const Mobility& mobility = (entry % 2 == 0) ? row.mobility_a : row.mobility_b;
    sum.noalias() += mobility.leftCols<Rows>() * x.segment<Rows>(Rows * (entry / 2));
  }
  return sum;
}

// H x for one body over its sides k in [first, last): J_side^T x_c = (f, lever x f) with
// f = (sign F)^T x_c; the row count is fixed at compile time (runtime-sized block products
// cost about a third of the product's time).
template <int Rows>
Vec6 gather_body(const Mat3* frames, const Vec3* levers, const int* contacts, int first, int last,
                 const VecX& x) {
  Vec3 force = Vec3::Zero();
  Vec3 torque = Vec3::Zero();
  for (int k = first; k < last; ++k) {
    const Vec3 f = frames[k].topRows<Rows>().transpose() * x.segment<Rows>(Rows * contacts[k]);
    force += f;
    torque += levers[k].cross(f);
  }
  Vec6 sum;
  sum << force, torque;
  return sum;
}

}  // namespace

void ContactSystem::gather_velocity(const VecX& x, VecX& body_velocity) const {
  // M^-1 H x, gathered per body over its own contacts: each body is written by one thread
  // only and sums in contact order, so the result does not depend on the thread count.
  const int body_count = this->body_count();
  body_velocity.resize(kBodyDofs * body_count);
#pragma omp parallel for schedule(dynamic, 256) if (body_count > kParallelGrain)
  for (int b = 0; b < body_count; ++b) {
    const int* entries = body_contact_index_.data() + body_contact_start_[b];
    const int count = body_contact_start_[b + 1] - body_contact_start_[b];
    Vec6 sum;
    switch (rows_per_contact_) {
      case 1:
        sum = gather_mobility<1>(rows_, entries, count, x);
        break;
      case 2:
        sum = gather_mobility<2>(rows_, entries, count, x);
        break;
      default:
        sum = gather_mobility<3>(rows_, entries, count, x);
        break;
    }
    body_velocity.segment<6>(kBodyDofs * b) = sum;
  }
}

void ContactSystem::gather_velocity_compact(const VecX& x, VecX& body_velocity,
                                            bool inverse_mass) const {
  // M^-1 H x (or H x), gathered per body over its own contacts: each body is written by one
  // thread only and sums in contact order, so the result does not depend on the thread count.
  const int body_count = this->body_count();
  body_velocity.resize(kBodyDofs * body_count);
#pragma omp parallel for schedule(dynamic, 256) if (body_count > kParallelGrain)
  for (int b = 0; b < body_count; ++b) {
    const int first = body_contact_start_[b];
    const int last = body_contact_start_[b + 1];
    const Mat3* frames = gather_frame_.data();
    const Vec3* levers = gather_lever_.data();
    const int* contacts = gather_contact_.data();
    Vec6 sum;
    switch (rows_per_contact_) {
      case 1:
        sum = gather_body<1>(frames, levers, contacts, first, last, x);
        break;
      case 2:
        sum = gather_body<2>(frames, levers, contacts, first, last, x);
        break;
      default:
        sum = gather_body<3>(frames, levers, contacts, first, last, x);
        break;
    }
    body_velocity.segment<6>(kBodyDofs * b) = inverse_mass ? inverse_mass_[b].apply(sum) : sum;
  }
}

// The inner loop of the matrix-free solvers (the IPM's CG, APGD, PGJ) on the compact
// Jacobians. The Gauss-Seidel sweeps (begin_sweep / update_sweep), the velocity updates of the
// time steppers and contact_velocity keep the Jacobian and mobility blocks, so that the sweeps'
// incremental products round exactly like their starting product.
void ContactSystem::apply(const VecX& x, VecX& y) const {
  // The body velocities live in a per-thread buffer that keeps its memory between products:
  // a fresh one would cost the page faults of a new allocation in every product.
  thread_local VecX body_velocity;
  gather_velocity_compact(x, body_velocity, true);
  contact_velocity_compact(body_velocity, y);
}

void ContactSystem::apply_jacobian_transpose(const VecX& x, VecX& body_impulse) const {
  gather_velocity_compact(x, body_impulse, false);
}

void ContactSystem::apply_jacobian(const VecX& body_velocities, VecX& y) const {
  contact_velocity_compact(body_velocities, y);
}

VecX ContactSystem::contact_velocity(const VecX& body_velocities) const {
  const int m = rows_per_contact_;
  const int contact_count = this->contact_count();
  VecX y(m * contact_count);
#pragma omp parallel for schedule(static) if (contact_count > kParallelGrain)
  for (int i = 0; i < contact_count; ++i) {
    const ContactRows& row = rows_[i];
    Vec3 u = Vec3::Zero();
    if (row.body_a >= 0) u += row.jacobian_a * body_velocities.segment<6>(kBodyDofs * row.body_a);
    if (row.body_b >= 0) u += row.jacobian_b * body_velocities.segment<6>(kBodyDofs * row.body_b);
    y.segment(m * i, m) = u.head(m);
  }
  return y;
}

void ContactSystem::contact_velocity_compact(const VecX& body_velocities, VecX& y) const {
  const int m = rows_per_contact_;
  const int contact_count = this->contact_count();
  y.resize(m * contact_count);
  // J_a v_a + J_b v_b = F ((v + omega x lever)_b - (v + omega x lever)_a).
  auto point_velocity = [&](int body, const Vec3& lever) -> Vec3 {
    const auto v = body_velocities.segment<6>(kBodyDofs * body);
    return v.head<3>() + v.tail<3>().cross(lever);
  };
#pragma omp parallel for schedule(static) if (contact_count > kParallelGrain)
  for (int i = 0; i < contact_count; ++i) {
    if (i + kPrefetchDistance < contact_count) {
      // Body b of a contact is a random access into the velocities (contacts are ordered by
      // body a); fetching both bodies a few contacts ahead overlaps the misses.
      const Eigen::Vector2i ahead = bodies_[i + kPrefetchDistance];
      if (ahead[0] >= 0) __builtin_prefetch(body_velocities.data() + kBodyDofs * ahead[0]);
      if (ahead[1] >= 0) __builtin_prefetch(body_velocities.data() + kBodyDofs * ahead[1]);
    }
    const Eigen::Vector2i bodies = bodies_[i];
    Vec3 relative = Vec3::Zero();
    if (bodies[0] >= 0) relative -= point_velocity(bodies[0], lever_[2 * i]);
    if (bodies[1] >= 0) relative += point_velocity(bodies[1], lever_[2 * i + 1]);
    const Vec3 u = frame_[i] * relative;
    y.segment(m * i, m) = u.head(m);
  }
}

Mat3 ContactSystem::diagonal_block(int contact) const {
  const ContactRows& row = rows_[contact];
  Mat3 block = Mat3::Zero();
  if (row.body_a >= 0) block += row.jacobian_a * row.mobility_a;
  if (row.body_b >= 0) block += row.jacobian_b * row.mobility_b;
  const int m = rows_per_contact_;
  Mat3 out = Mat3::Zero();
  out.topLeftCorner(m, m) = block.topLeftCorner(m, m);
  return out;
}

void ContactSystem::begin_sweep(const VecX& r, VecX& work) const { gather_velocity(r, work); }

Vec3 ContactSystem::local_velocity(int contact, const VecX& work) const {
  const ContactRows& row = rows_[contact];
  Vec3 u = Vec3::Zero();
  if (row.body_a >= 0) u += row.jacobian_a * work.segment<6>(kBodyDofs * row.body_a);
  if (row.body_b >= 0) u += row.jacobian_b * work.segment<6>(kBodyDofs * row.body_b);
  u.tail(3 - rows_per_contact_).setZero();
  return u;
}

void ContactSystem::update_sweep(int contact, const Vec3& dr, VecX& work) const {
  const ContactRows& row = rows_[contact];
  Vec3 d = dr;
  d.tail(3 - rows_per_contact_).setZero();
  if (row.body_a >= 0) accumulate(work, row.body_a, row.mobility_a * d);
  if (row.body_b >= 0) accumulate(work, row.body_b, row.mobility_b * d);
}

VecX ContactSystem::body_velocity_change(const VecX& impulses) const {
  VecX dv;
  gather_velocity(impulses, dv);
  return dv;
}

VecX ContactSystem::body_impulse(const VecX& impulses) const {
  const int m = rows_per_contact_;
  VecX out = VecX::Zero(kBodyDofs * body_count());
  for (int i = 0; i < contact_count(); ++i) {
    const ContactRows& row = rows_[i];
    const VecX r = impulses.segment(m * i, m);
    if (row.body_a >= 0) accumulate(out, row.body_a, row.jacobian_a.topRows(m).transpose() * r);
    if (row.body_b >= 0) accumulate(out, row.body_b, row.jacobian_b.topRows(m).transpose() * r);
  }
  return out;
}

SparseMatrix ContactSystem::assemble_jacobian() const {
  const int m = rows_per_contact_;
  std::vector<Eigen::Triplet<double>> triplets;
  triplets.reserve(static_cast<std::size_t>(contact_count()) * m * 12);
  for (int i = 0; i < contact_count(); ++i) {
    const ContactRows& row = rows_[i];
    for (int k = 0; k < m; ++k)
      for (int d = 0; d < kBodyDofs; ++d) {
        if (row.body_a >= 0 && row.jacobian_a(k, d) != 0.0)
          triplets.emplace_back(m * i + k, kBodyDofs * row.body_a + d, row.jacobian_a(k, d));
        if (row.body_b >= 0 && row.jacobian_b(k, d) != 0.0)
          triplets.emplace_back(m * i + k, kBodyDofs * row.body_b + d, row.jacobian_b(k, d));
      }
  }
  SparseMatrix jacobian(m * contact_count(), kBodyDofs * body_count());
  jacobian.setFromTriplets(triplets.begin(), triplets.end());
  return jacobian;
}

SparseMatrix ContactSystem::assemble() const {
  // W = H^T M^-1 H with the block-diagonal M^-1 of Olsen & Kamrin eq. 9.
  std::vector<Eigen::Triplet<double>> triplets;
  for (int b = 0; b < body_count(); ++b) {
    const InverseMass& inv = inverse_mass_[b];
    for (int d = 0; d < 3; ++d) {
      if (inv.linear(d) != 0.0) triplets.emplace_back(6 * b + d, 6 * b + d, inv.linear(d));
      for (int e = 0; e < 3; ++e)
        if (inv.angular(d, e) != 0.0)
          triplets.emplace_back(6 * b + 3 + d, 6 * b + 3 + e, inv.angular(d, e));
    }
  }
  SparseMatrix inverse_mass(kBodyDofs * body_count(), kBodyDofs * body_count());
  inverse_mass.setFromTriplets(triplets.begin(), triplets.end());
  const SparseMatrix jacobian = assemble_jacobian();
  SparseMatrix w = jacobian * inverse_mass * SparseMatrix(jacobian.transpose());
  w.prune(0.0);
  return w;
}

}  // namespace moreau
