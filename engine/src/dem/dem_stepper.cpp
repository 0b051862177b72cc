#include "moreau/dem/dem_stepper.hpp"

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <string>

#include "moreau/collision/contact.hpp"
#include "moreau/core/error.hpp"
#include "moreau/integrator/scheme_registry.hpp"

namespace moreau {
namespace {

// Pairs (or bodies) below which a loop stays on one thread: an OpenMP fork-join costs more
// than the work of a small scene.
constexpr int kParallelGrain = 2048;

double smallest_finite_radius(const World& world) {
  double smallest = std::numeric_limits<double>::infinity();
  for (const RigidBody& b : world.bodies) {
    const double r = bounding_radius(b.shape.geometry);
    if (std::isfinite(r) && r > 0.0) smallest = std::min(smallest, r);
  }
  return smallest;
}

double default_skin(const World& world, const DemOptions& options) {
  if (options.skin > 0.0) return options.skin;
  const double r = smallest_finite_radius(world);
  if (!std::isfinite(r))
    throw InputError("DEM: no body with a finite size to derive the neighbour skin from");
  return 0.1 * r;
}

double reference_force(const World& world, const DemOptions& options) {
  if (options.reference_force > 0.0) return options.reference_force;
  double weight = 0.0;
  for (const RigidBody& b : world.bodies)
    if (b.is_dynamic()) weight += b.mass * world.gravity.norm();
  return weight;
}

// The geometry of a touching pair: unit normal from a to b, contact point, gap (< 0). Left
// uninitialized (unlike Contact, whose frame defaults cost stores in the pair loop).
struct Touch {
  Vec3 normal;
  Vec3 point;
  double gap;
};

// Closest-point contact of a pair through the engine's narrow phase (the pairs that are not
// centred spheres or a centred sphere and a half-space, which DemStepper evaluates inline).
bool pair_geometry(const World& world, int a, int b, std::vector<Contact>& scratch, Touch& out) {
  const RigidBody& ba = world.bodies[a];
  const RigidBody& bb = world.bodies[b];
  scratch.clear();
  narrow_phase(world, a, b, 0.0, scratch);
  if (scratch.empty() || scratch.front().gap >= 0.0) return false;
  if (scratch.size() > 1)
    throw InputError(
        "DEM: bodies '" + ba.name + "' and '" + bb.name +
        "' touch at several points; the DEM reference handles single-point pairs (spheres, disks, "
        "capsule ends against curved shapes)");
  out.normal = scratch.front().normal;
  out.point = scratch.front().point;
  out.gap = scratch.front().gap;
  return true;
}

// Two centred spheres (centres p_a, p_b): normal from a to b, the point halfway across the
// overlap.
bool sphere_sphere(const Vec3& p_a, double r_a, const Vec3& p_b, double r_b, Touch& out) {
  const Vec3 d = p_b - p_a;
  const double distance = d.norm();
  const double gap = distance - r_a - r_b;
  if (gap >= 0.0 || distance == 0.0) return false;
  out.normal = d / distance;
  out.gap = gap;
  out.point = p_a + out.normal * (r_a + 0.5 * gap);
  return true;
}

// A centred sphere (centre c, radius r) against a half-space body, with the narrow phase's
// arithmetic (ball_halfspace and its emitter): the plane's pose from its orientation, the
// normal from the sphere into the solid (negated when the half-space is side a), the point
// halfway between the sphere's deepest point and the centre's projection on the plane.
bool sphere_plane(const Vec3& c, double r, const RigidBody& plane, bool plane_is_a, Touch& out) {
  const Mat3 rotation = plane.orientation.toRotationMatrix();
  const Vec3 h = plane.position + rotation * plane.shape.offset;
  const Vec3 m = rotation * std::get<HalfSpace>(plane.shape.geometry).normal;
  const double height = m.dot(c - h);
  const double gap = height - r;
  if (!(gap < 0.0)) return false;
  const Vec3 normal = -m;
  out.normal = plane_is_a ? Vec3(-normal) : normal;
  const Vec3 point_sphere = c - r * m;
  const Vec3 point_plane = c - height * m;
  out.point = 0.5 * (point_sphere + point_plane);
  out.gap = gap;
  return true;
}

// Exact tests: Eigen's isZero() is relative to 1e-12 and would take a spring of a fresh contact
// (displacements of 1e-12 m and less) for none.
template <typename Matrix>
bool exactly_zero(const Matrix& m) {
  return (m.array() == 0.0).all();
}

}  // namespace

// Its own section and its own time step ("auto" by default): the DEM reference runs a scene's
// simulated time at the step its stiffnesses allow. A DEM scene may carry the
// semi_implicit_euler keys, so that the same scene runs under CD for comparison.
const SchemeRegistrar<DemStepper, DemOptions> kRegistration{
    "dem",
    "explicit penalty DEM, velocity Verlet (the reference of Olsen & Kamrin Sec. 8)",
    [] {
      DemOptions defaults;
      defaults.time_step = 0.0;
      return defaults;
    }(),
    {},
    [](SchemeRegistration& r) {
      r.section = "dem";
      r.accepts_keys_of = "semi_implicit_euler";
    }};

const OptionTable<DemOptions>& DemOptions::fields() {
  using O = DemOptions;
  static const OptionTable<O> table = [] {
    OptionTable<O> out =
        nested_options(DemMaterialLaw::fields(), &O::law, option_keys(DemMaterialLaw::fields()));
    OptionField<O> step = number_option("time_step", &O::time_step, Bounds::at_least(0.0), "s")
                              .with_word("auto", 0.0)
                              .described(
                                  "the DEM's own time step; \"auto\": half the stability "
                                  "estimate for the initial neighbours");
    step.type_text = "number > 0 or `\"auto\"`";
    out.push_back(std::move(step));
    out.push_back(number_option("skin", &O::skin, Bounds::at_least(0.0), "m")
                      .described("neighbour-list skin; 0 = a tenth of the smallest finite "
                                 "bounding radius"));
    return out;
  }();
  return table;
}

void DemOptions::validate() const {
  if (!(time_step >= 0.0) || !std::isfinite(time_step))
    throw InputError("DEM: time_step must be > 0 (or 0 for the stability estimate's half)");
  if (!(skin >= 0.0)) throw InputError("DEM: skin must be >= 0");
  if (!(law.damping_ratio >= 0.0)) throw InputError("DEM: damping_ratio must be >= 0");
  if (!(law.tangential_stiffness_ratio >= 0.0))
    throw InputError("DEM: tangential_stiffness_ratio must be >= 0");
}

void DemOptions::validate(const World& world) const {
  validate();
  for (const RigidBody& body : world.bodies) {
    const Material& material = world.materials[body.material];
    if (material.youngs_modulus == 0.0)
      throw InputError("scheme \"dem\": material \"" + material.name + "\" (of body \"" +
                       body.name +
                       "\") has no youngs_modulus; DEM needs one (in Pa, or \"rigid\")");
  }
}

// Bound of the largest eigenvalue of M^-1/2 A M^-1/2 for a matrix A assembled from contact
// blocks (stiffness K or damping C), by 3x3 block Gershgorin: the diagonal block of body b is
// sum_c A_c / m_b, each neighbour j adds an off-diagonal block of norm |A_c| / sqrt(m_b m_j).
class GershgorinBound {
 public:
  explicit GershgorinBound(std::size_t body_count)
      : diagonal_(body_count, Mat3::Zero()), off_diagonal_(body_count, 0.0) {}
  // A contact block a_n n n^T + a_t (I - n n^T) between bodies a and b; the tangential part is
  // scaled per body by its rotational mobility at the contact point (1 + m |p - x|^2 / I_min,
  // 3.5 for a sphere), since a tangential load turns the body as well as pushing it.
  void add(const World& world, int a, int b, const Contact& c, double normal, double tangential) {
    const Mat3 nn = c.normal * c.normal.transpose();
    const Mat3 tangent_plane = Mat3::Identity() - nn;
    const double mobility_a = rotational_mobility(world, a, c.point);
    const double mobility_b = rotational_mobility(world, b, c.point);
    diagonal_[a] += (normal * nn + mobility_a * tangential * tangent_plane) / world.bodies[a].mass;
    diagonal_[b] += (normal * nn + mobility_b * tangential * tangent_plane) / world.bodies[b].mass;
    if (world.bodies[a].is_dynamic() && world.bodies[b].is_dynamic()) {
      const double coupling = std::max(normal, std::sqrt(mobility_a * mobility_b) * tangential) /
                              std::sqrt(world.bodies[a].mass * world.bodies[b].mass);
      off_diagonal_[a] += coupling;
      off_diagonal_[b] += coupling;
    }
  }
  // Bound for body i (0 for a body without contacts).
  double bound(std::size_t i) const {
    if (diagonal_[i].isZero()) return 0.0;
    return Eigen::SelfAdjointEigenSolver<Mat3>(diagonal_[i]).eigenvalues().maxCoeff() +
           off_diagonal_[i];
  }

 private:
  std::vector<Mat3> diagonal_;
  std::vector<double> off_diagonal_;

  static double rotational_mobility(const World& world, int body, const Vec3& point) {
    const RigidBody& b = world.bodies[body];
    if (!b.is_dynamic() || b.rotation_locked) return 1.0;
    const double smallest_inertia =
        Eigen::SelfAdjointEigenSolver<Mat3>(b.inertia_body).eigenvalues().minCoeff();
    if (!(smallest_inertia > 0.0)) return 1.0;
    return 1.0 + b.mass * (point - b.position).squaredNorm() / smallest_inertia;
  }
};

// Critical step of the explicit central-difference scheme with damping evaluated at the
// half-step velocity, for the largest frequency omega and damping rate gamma (eigenvalues of
// M^-1 K and M^-1 C): dt = 2 (sqrt(zeta^2 + 1) - zeta) / omega with zeta = gamma / (2 omega)
// (Belytschko, Liu & Moran, Nonlinear Finite Elements, Sec. 6.3), i.e.
// dt = (sqrt(gamma^2 + 4 omega^2) - gamma) / omega^2. It decreases in both arguments, so upper
// bounds of omega and gamma give a safe step. The damping of a contact is stiffness-like
// (c = 2 zeta sqrt(k m*)), so the highest mode is damped well beyond zeta: using the
// contact's own zeta instead underestimates gamma by up to the square root of the
// coordination number, and the step it gives rattles a dense packing without settling.
double critical_time_step(double omega_squared, double gamma) {
  if (omega_squared == 0.0) return std::numeric_limits<double>::infinity();
  return (std::sqrt(gamma * gamma + 4.0 * omega_squared) - gamma) / omega_squared;
}

double estimate_stable_time_step(const World& world, const DemOptions& options) {
  CollisionOptions collision;
  collision.margin = default_skin(world, options);
  const auto pairs = broad_phase_pairs(world, collision);
  const double force = reference_force(world, options);
  const std::size_t body_count = world.bodies.size();
  GershgorinBound stiffness(body_count);
  GershgorinBound damping(body_count);
  // Overlap at which a pair carries the reference force, for the Hertzian tangent.
  auto reference_overlap = [&](const PairLaw& law) {
    if (law.law == NormalLaw::hertzian)
      return std::pow(force * std::sqrt(law.diameter) / law.stiffness, 2.0 / 3.0);
    return force / law.stiffness;
  };
  std::vector<Contact> scratch;
  for (const auto& [a, b] : pairs) {
    scratch.clear();
    narrow_phase(world, a, b, collision.margin, scratch);
    if (scratch.empty()) continue;
    const PairLaw law = pair_law(world, a, b, options.law);
    const double overlap = reference_overlap(law);
    for (const Contact& c : scratch) {
      stiffness.add(world, a, b, c, law.tangent_stiffness(overlap), law.tangential_stiffness);
      damping.add(world, a, b, c, law.damping(overlap), law.tangential_damping);
    }
  }
  double worst_omega_squared = 0.0;
  double worst_gamma = 0.0;
  for (std::size_t i = 0; i < body_count; ++i) {
    const RigidBody& body = world.bodies[i];
    if (!body.is_dynamic()) continue;
    // A body with no neighbour yet will touch something: bound it at least by one contact
    // against a wall of its own material at the reference force.
    if (std::isfinite(curvature_radius(body.shape.geometry))) {
      World probe;
      probe.materials = {world.materials[body.material]};
      probe.gravity = world.gravity;
      RigidBody wall;
      wall.motion = Motion::fixed;
      wall.shape.geometry = HalfSpace{};
      probe.bodies = {wall, body};
      probe.bodies[1].material = 0;
      const PairLaw law = pair_law(probe, 0, 1, options.law);
      const double overlap = reference_overlap(law);
      const double tangential_mobility = 3.5;  // a sphere's, as in GershgorinBound
      worst_omega_squared = std::max(
          worst_omega_squared,
          std::max(law.tangent_stiffness(overlap), tangential_mobility * law.tangential_stiffness) /
              body.mass);
      worst_gamma = std::max(
          worst_gamma,
          std::max(law.damping(overlap), tangential_mobility * law.tangential_damping) / body.mass);
    }
    worst_omega_squared = std::max(worst_omega_squared, stiffness.bound(i));
    worst_gamma = std::max(worst_gamma, damping.bound(i));
  }
  return critical_time_step(worst_omega_squared, worst_gamma);
}

DemStepper::DemStepper(World& world, DemOptions options)
    : Stepper(world), options_(std::move(options)) {
  contacts_requested_ = false;
  options_.validate();
  world_.validate();
  if (options_.time_step == 0.0) {
    options_.time_step = 0.5 * estimate_stable_time_step(world_, options_);
    if (!std::isfinite(options_.time_step))
      throw InputError(
          "dem.time_step: \"auto\" needs a dynamic body to estimate from; give a number");
  }
  skin_ = default_skin(world_, options_);
  force_.assign(world_.bodies.size(), Vec6::Zero());
  update_mass_properties();
  state_.resize(world_.bodies.size());
  angular_velocity_.resize(world_.bodies.size());
  for (int i = 0; i < static_cast<int>(world_.bodies.size()); ++i) copy_state(i);
  rebuild_neighbours();
  compute_forces(false);
}

DemState DemStepper::state() const {
  DemState out;
  for (std::size_t p = 0; p < pairs_.size(); ++p)
    if (!exactly_zero(spring_[p]))
      out.springs.push_back({pairs_[p].first, pairs_[p].second, spring_[p]});
  out.forces = force_;
  return out;
}

void DemStepper::resume(const DemState& state) {
  const int bodies = static_cast<int>(world_.bodies.size());
  if (!state.forces.empty() && static_cast<int>(state.forces.size()) != bodies)
    throw InputError("forces: " + std::to_string(state.forces.size()) + " rows for the world's " +
                     std::to_string(bodies) + " bodies");
  for (const Vec6& f : state.forces)
    if (!f.allFinite()) throw InputError("forces: not finite");
  update_mass_properties();
  for (int i = 0; i < bodies; ++i) copy_state(i);
  spring_.assign(pairs_.size(), Vec3::Zero());  // rebuild_neighbours keeps none of the old run
  rebuild_neighbours();
  std::map<std::pair<int, int>, std::size_t> pair_index;
  for (std::size_t p = 0; p < pairs_.size(); ++p) pair_index[pairs_[p]] = p;
  for (const TangentialSpring& s : state.springs) {
    const std::string pair = "tangential spring of bodies " + std::to_string(s.body_a) + " and " +
                             std::to_string(s.body_b);
    if (s.body_a < 0 || s.body_b >= bodies || !(s.body_a < s.body_b))
      throw InputError(pair + ": expected body_a < body_b among the world's " +
                       std::to_string(bodies) + " bodies");
    if (!s.displacement.allFinite()) throw InputError(pair + ": not finite");
    const auto it = pair_index.find({s.body_a, s.body_b});
    if (it == pair_index.end())
      throw InputError(pair + ": the bodies are not within reach of each other");
    spring_[it->second] = s.displacement;
  }
  // The pairs' contacts (touching_, pair_contact_) at the restored state. Computing them
  // advances each spring by h times its tangential velocity, which the checkpoint's springs
  // already hold: they are put back, so that the next step advances them once.
  const std::vector<Vec3> restored = spring_;
  compute_forces(false);
  spring_ = restored;
  if (!state.forces.empty()) force_ = state.forces;
}

void DemStepper::copy_state(int i) {
  const RigidBody& body = world_.bodies[i];
  BodyState& state = state_[i];
  state.position = body.position;
  state.velocity = body.linear_velocity;
  state.mass = body.mass;
  state.dynamic = body.is_dynamic();
  const Vec3& w = body.angular_velocity;
  state.spins = !(w.x() == 0.0 && w.y() == 0.0 && w.z() == 0.0);
  angular_velocity_[i] = w;
}

void DemStepper::update_mass_properties() {
  const std::size_t n = world_.bodies.size();
  inverse_mass_.resize(n);
  inverse_inertia_body_.assign(n, Mat3::Zero());
  inverse_mass_orientation_.resize(n);
  rotating_.assign(n, 0);
  turns_.assign(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const RigidBody& body = world_.bodies[i];
    inverse_mass_[i] = moreau::inverse_mass(body, world_.dimension);
    rotating_[i] =
        body.is_dynamic() && !body.rotation_locked && world_.dimension == Dimension::three;
    turns_[i] = rotating_[i] || !exactly_zero(inverse_mass_[i].angular);
    if (!rotating_[i]) continue;
    inverse_inertia_body_[i] = body.inertia_body.inverse();
    inverse_mass_orientation_[i] = body.orientation;
  }
}

// Half kick v += h/2 M^-1 f of one body. M^-1 is cached (recomputing it per body and step costs
// a fifth of a step); the world-frame J^-1 = R J_body^-1 R^T of a rotating body is redone,
// with the operations of inverse_mass(), only when the orientation has changed since, i.e. once
// per step: the drift turns the body between the two half kicks of a step, not between steps.
void DemStepper::kick(int i, double half_step) {
  RigidBody& body = world_.bodies[i];
  if (!body.is_dynamic()) return;
  InverseMass& inverse = inverse_mass_[i];
  if (!turns_[i]) {  // no rotational block: the angular half of the kick is zero
    body.linear_velocity += half_step * inverse.linear.cwiseProduct(force_[i].head<3>());
    return;
  }
  if (rotating_[i] && std::memcmp(inverse_mass_orientation_[i].coeffs().data(),
                                  body.orientation.coeffs().data(), 4 * sizeof(double)) != 0) {
    const Mat3 rotation = body.orientation.toRotationMatrix();
    inverse.angular = rotation * inverse_inertia_body_[i] * rotation.transpose();
    inverse_mass_orientation_[i] = body.orientation;
  }
  const Vec6 change = half_step * inverse.apply(force_[i]);
  body.linear_velocity += change.head<3>();
  body.angular_velocity += change.tail<3>();
}

void DemStepper::rebuild_neighbours() {
  CollisionOptions collision;
  collision.margin = skin_;
  std::map<std::pair<int, int>, Vec3> old_springs;
  for (std::size_t p = 0; p < pairs_.size(); ++p)
    if (!exactly_zero(spring_[p])) old_springs[pairs_[p]] = spring_[p];
  pairs_ = broad_phase_pairs(world_, collision);
  laws_.resize(pairs_.size());
  spring_.assign(pairs_.size(), Vec3::Zero());
  pair_contact_.assign(pairs_.size(), PairContact{});
  pair_point_.assign(pairs_.size(), Vec3::Zero());
  pair_data_.resize(pairs_.size());
  for (std::size_t p = 0; p < pairs_.size(); ++p) {
    const auto [a, b] = pairs_[p];
    laws_[p] = pair_law(world_, a, b, options_.law);
    const auto it = old_springs.find(pairs_[p]);
    if (it != old_springs.end()) spring_[p] = it->second;
    PairData& data = pair_data_[p];
    const Shape& shape_a = world_.bodies[a].shape;
    const Shape& shape_b = world_.bodies[b].shape;
    const auto* sphere_a = std::get_if<Sphere>(&shape_a.geometry);
    const auto* sphere_b = std::get_if<Sphere>(&shape_b.geometry);
    const bool centred_a = sphere_a && shape_a.offset.isZero();
    const bool centred_b = sphere_b && shape_b.offset.isZero();
    data = PairData{};
    if (centred_a && centred_b) {
      data.kind = PairKind::sphere_sphere;
      data.radius_a = sphere_a->radius;
      data.radius_b = sphere_b->radius;
    } else if (centred_a && std::holds_alternative<HalfSpace>(shape_b.geometry)) {
      data.kind = PairKind::sphere_plane;
      data.radius_a = sphere_a->radius;
    } else if (centred_b && std::holds_alternative<HalfSpace>(shape_a.geometry)) {
      data.kind = PairKind::plane_sphere;
      data.radius_b = sphere_b->radius;
    }
    const PairLaw& law = laws_[p];
    data.hookean = law.law == NormalLaw::hookean;
    data.stiffness = law.stiffness;
    if (data.hookean) data.damping = law.damping(0.0);
    data.tangential_stiffness = law.tangential_stiffness;
    data.tangential_damping = law.tangential_damping;
    data.friction = law.friction;
  }
  const int body_count = static_cast<int>(world_.bodies.size());
  body_pair_start_.assign(body_count + 1, 0);
  for (const auto& [a, b] : pairs_) {
    ++body_pair_start_[a + 1];
    ++body_pair_start_[b + 1];
  }
  for (int b = 0; b < body_count; ++b) body_pair_start_[b + 1] += body_pair_start_[b];
  body_pair_index_.resize(body_pair_start_.back());
  std::vector<int> fill(body_pair_start_.begin(), body_pair_start_.end() - 1);
  for (std::size_t p = 0; p < pairs_.size(); ++p) {
    body_pair_index_[fill[pairs_[p].first]++] = static_cast<int>(2 * p);
    body_pair_index_[fill[pairs_[p].second]++] = static_cast<int>(2 * p + 1);
  }
  reference_position_.resize(world_.bodies.size());
  for (std::size_t i = 0; i < world_.bodies.size(); ++i)
    reference_position_[i] = world_.bodies[i].position;
  ++rebuilds_;
  // The run checks its time step against the current neighbours at every rebuild.
  stable_time_step_ = estimate_stable_time_step(world_, options_);
  if (options_.time_step > stable_time_step_)
    throw SimulationError("DEM: step " + std::to_string(step_count_) + ": time step " +
                          std::to_string(options_.time_step) +
                          " s exceeds the stability estimate " + std::to_string(stable_time_step_) +
                          " s of the current neighbours");
}

// Contact forces at the current positions, then per body its total force; with `kick`, each
// body's second half kick follows its gather in the same loop (the gather reads positions and
// contact forces only, so kicking body i there changes nothing another body reads). The pair
// loop reads the bodies' compact state_ (copied after the drift), not the RigidBody records.
void DemStepper::compute_forces(bool kick_bodies) {
  const double dt = options_.time_step;
  const int pair_count = static_cast<int>(pairs_.size());
  std::size_t touching = 0;
#pragma omp parallel if (pair_count > kParallelGrain)
  {
    std::vector<Contact> scratch;
#pragma omp for schedule(dynamic, 512) reduction(+ : touching)
    for (int p = 0; p < pair_count; ++p) {
      const auto [a, b] = pairs_[p];
      const PairData& data = pair_data_[p];
      const BodyState& sa = state_[a];
      const BodyState& sb = state_[b];
      PairContact& out = pair_contact_[p];
      Touch c;
      bool touches;
      switch (data.kind) {
        case PairKind::sphere_sphere:
          touches = sphere_sphere(sa.position, data.radius_a, sb.position, data.radius_b, c);
          break;
        case PairKind::sphere_plane:
          touches = sphere_plane(sa.position, data.radius_a, world_.bodies[b], false, c);
          break;
        case PairKind::plane_sphere:
          touches = sphere_plane(sb.position, data.radius_b, world_.bodies[a], true, c);
          break;
        default:
          touches = pair_geometry(world_, a, b, scratch, c);
      }
      if (!touches) {
        out.overlap = 0.0;
        out.normal_force = 0.0;
        out.force_on_b.setZero();
        spring_[p].setZero();  // contact lost: Cundall-Strack spring released
        continue;
      }
      ++touching;
      // Without spin the angular terms are zero: v_b - v_a (the same numbers, up to the sign
      // of a zero).
      Vec3 relative;
      if (sa.spins || sb.spins)
        relative = sb.velocity + angular_velocity_[b].cross(c.point - sb.position) - sa.velocity -
                   angular_velocity_[a].cross(c.point - sa.position);
      else
        relative = sb.velocity - sa.velocity;
      const double normal_speed = relative.dot(c.normal);  // > 0 separating
      const double overlap = -c.gap;
      const bool hookean = data.hookean;
      pair_point_[p] = c.point;
      out.normal = c.normal;
      out.overlap = overlap;
      const double elastic_force =
          hookean ? data.stiffness * overlap : laws_[p].elastic_force(overlap);
      // Silbert eq. 2-3, Olsen & Kamrin eq. 24: elastic plus viscous, without a cut-off of the
      // viscous pull while the grains still overlap; only then does gamma = 2 sqrt(k m*)
      // give e_n = 0 (a cut-off would let a critically damped contact rebound at e^-2 v).
      const double damping = hookean ? data.damping : laws_[p].damping(overlap);
      out.normal_force = elastic_force - damping * normal_speed;
      Vec3 tangential_force = Vec3::Zero();
      if (data.tangential_stiffness > 0.0) {
        const Vec3 tangential_velocity = relative - normal_speed * c.normal;
        Vec3& s = spring_[p];
        // Keep the spring in the current tangent plane (rotate with the contact frame).
        const double length = s.norm();
        s -= s.dot(c.normal) * c.normal;
        const double projected = s.norm();
        if (projected > 0.0) s *= length / projected;
        s += dt * tangential_velocity;
        const double tangential_damping = data.tangential_damping;
        tangential_force =
            -data.tangential_stiffness * s - tangential_damping * tangential_velocity;
        const double cap = data.friction * std::max(0.0, out.normal_force);
        const double magnitude = tangential_force.norm();
        if (magnitude > cap) {
          // Sliding: the force sits on the Coulomb cone and the spring matches it.
          tangential_force *= cap / magnitude;
          s = -(tangential_force + tangential_damping * tangential_velocity) /
              data.tangential_stiffness;
        }
      }
      out.force_on_b = out.normal_force * c.normal + tangential_force;
    }
    // Gather per body over its own pairs (each body written by one thread, fixed order); the
    // torque only for a body with a rotational block.
    const int body_count = static_cast<int>(world_.bodies.size());
#pragma omp for schedule(dynamic, 256)
    for (int i = 0; i < body_count; ++i) {
      const BodyState& state = state_[i];
      const Vec3& position = state.position;
      const bool turns = turns_[i];
      Vec3 force = state.mass * world_.gravity;
      Vec3 torque = Vec3::Zero();
      for (int k = body_pair_start_[i]; k < body_pair_start_[i + 1]; ++k) {
        const unsigned side = static_cast<unsigned>(body_pair_index_[k]);  // 2 pair + (b ? 1 : 0)
        const PairContact& c = pair_contact_[side >> 1];
        if (c.overlap <= 0.0) continue;
        const Vec3 f = (side & 1u) ? c.force_on_b : Vec3(-c.force_on_b);
        force += f;
        if (turns) torque += (pair_point_[side >> 1] - position).cross(f);
      }
      force_[i].head<3>() = force;
      force_[i].tail<3>() = torque;
      if (!kick_bodies) continue;
      if (turns) {
        kick(i, 0.5 * dt);
      } else if (state.dynamic) {  // kick()'s translation, inline
        Vec3& velocity = world_.bodies[i].linear_velocity;
        velocity += 0.5 * dt * inverse_mass_[i].linear.cwiseProduct(force);
      }
    }
  }
  touching_ = touching;
}

const StepReport& DemStepper::step() {
  const double dt = options_.time_step;
  const int body_count = static_cast<int>(world_.bodies.size());
  // Velocity Verlet: half kick and drift, forces at the new positions (with half-step
  // velocities in the damping), half kick. Rotations kick the world-frame angular velocity
  // with J^-1 torque (the gyroscopic term vanishes for spheres and disks). The first half kick,
  // the drift and the test for a stale neighbour list (a body moved more than half the skin
  // since the last rebuild) are one pass over the bodies, the second half kick is part of the
  // force gather: two parallel regions per step, and no serial pass over the bodies.
  const double limit = 0.25 * skin_ * skin_;
  bool stale = false;
#pragma omp parallel for schedule(static) reduction(|| : stale) if (body_count > kParallelGrain)
  for (int i = 0; i < body_count; ++i) {
    RigidBody& body = world_.bodies[i];
    if (turns_[i])
      kick(i, 0.5 * dt);
    else if (body.is_dynamic())  // kick()'s translation, inline
      body.linear_velocity += 0.5 * dt * inverse_mass_[i].linear.cwiseProduct(force_[i].head<3>());
    const Vec3& w = body.angular_velocity;
    if (w.x() == 0.0 && w.y() == 0.0 && w.z() == 0.0) {
      // integrate_position without its rotation, which turns by h |w| = 0
      if (body.motion != Motion::fixed) body.position += dt * body.linear_velocity;
    } else {
      integrate_position(body, dt);
    }
    copy_state(i);
    if (body.motion != Motion::fixed &&
        (body.position - reference_position_[i]).squaredNorm() > limit)
      stale = true;
  }
  if (stale) rebuild_neighbours();
  compute_forces(true);
  world_.time += dt;
  ++step_count_;
  // Checked every 1000 steps only: the check costs a pass over the bodies, a DEM step little more.
  if (step_count_ % 1000 == 0) world_.check_finite(step_count_);
  fill_report(report_);
  return report_;
}

void DemStepper::fill_report(StepReport& report) const {
  const double dt = options_.time_step;
  report.step = step_count_;
  report.time = world_.time;
  report.rows_per_contact = 3;
  report.active_contacts = static_cast<long>(touching_count());
  report.solver_stats = SolverStats{};
  report.solver_stats.termination = Termination::not_run;
  report.solver_stats.converged = true;
  report.set_details(DemStepDetails{rebuilds_, stable_time_step_, contacts_requested_});
  report.contacts.clear();
  report.impulses.resize(0);
  if (!contacts_requested_) return;
  const std::vector<DemContact> touching = contacts();
  report.impulses.resize(3 * static_cast<long>(touching.size()));
  for (std::size_t i = 0; i < touching.size(); ++i) {
    const DemContact& dem = touching[i];
    Contact contact;
    contact.body_a = dem.body_a;
    contact.body_b = dem.body_b;
    contact.point = dem.point;
    contact.normal = dem.normal;
    contact.gap = -dem.overlap;
    complete_frame(contact, world_.dimension);
    report.impulses.segment<3>(3 * static_cast<long>(i)) << dt * dem.normal_force,
        dt * dem.force_on_b.dot(contact.tangent1), dt * dem.force_on_b.dot(contact.tangent2);
    report.contacts.push_back(contact);
  }
}

std::vector<DemContact> DemStepper::contacts() const {
  std::vector<DemContact> touching;
  for (std::size_t p = 0; p < pair_contact_.size(); ++p) {
    const PairContact& c = pair_contact_[p];
    if (!(c.overlap > 0.0)) continue;
    DemContact& out = touching.emplace_back();
    out.body_a = pairs_[p].first;
    out.body_b = pairs_[p].second;
    out.point = pair_point_[p];
    out.normal = c.normal;
    out.overlap = c.overlap;
    out.normal_force = c.normal_force;
    out.elastic_force = laws_[p].elastic_force(c.overlap);
    out.force_on_b = c.force_on_b;
  }
  return touching;
}

std::size_t DemStepper::touching_count() const { return touching_; }

double DemStepper::kinetic_energy() const {
  double energy = 0.0;
  for (const RigidBody& b : world_.bodies) {
    if (!b.is_dynamic()) continue;
    energy += 0.5 * b.mass * b.linear_velocity.squaredNorm() +
              0.5 * b.angular_velocity.dot(b.inertia_world() * b.angular_velocity);
  }
  return energy;
}

double DemStepper::max_speed() const {
  double speed = 0.0;
  for (const RigidBody& b : world_.bodies)
    if (b.is_dynamic()) speed = std::max(speed, b.linear_velocity.norm());
  return speed;
}

const DemStepDetails& dem_details(const StepReport& report) {
  const auto* details = report.find_details<DemStepDetails>();
  if (!details) throw InputError("dem_details: the report is not of a DEM step");
  return *details;
}

}  // namespace moreau
