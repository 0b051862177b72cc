#pragma once
// Explicit penalty DEM, the reference the CD papers compare against (Olsen & Kamrin Sec. 8):
// velocity Verlet with the soft-sphere laws of contact_law.hpp, a Verlet neighbour list built
// by the engine's broad phase, and an OpenMP-parallel force loop with a deterministic
// per-body gather. Reads the same World (scene) as the CD time steppers.
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "moreau/collision/collision_detector.hpp"
#include "moreau/dem/contact_law.hpp"
#include "moreau/dem/dem_state.hpp"
#include "moreau/integrator/stepper.hpp"

namespace moreau {

// What only the DEM reports (no contact solver: StepReport::solver_stats is not_run).
struct DemStepDetails {
  long neighbour_rebuilds = 0;    // Verlet-list rebuilds so far
  double stable_time_step = 0.0;  // estimate at construction, s
  // StepReport::contacts and impulses are filled only for the steps where they were asked
  // for (Stepper::request_contacts): converting them costs more than a step on large packings.
  bool contacts_filled = false;
};
// The DEM part of a report of DemStepper; throws InputError for another scheme's report.
const DemStepDetails& dem_details(const StepReport& report);

struct DemOptions {
  // s; 0: half of estimate_stable_time_step for the initial neighbours (a margin for the
  // contacts that form later), resolved when the stepper is made.
  double time_step = 1e-6;
  DemMaterialLaw law;
  // Neighbour-list skin, m: pairs closer than this are kept; the list is rebuilt when a body
  // has moved more than half of it. 0 = a tenth of the smallest finite bounding radius.
  double skin = 0.0;
  // Force scale for the Hertzian tangent stiffness in the stability estimate, N; 0 = the total
  // weight of the dynamic bodies (no static contact carries more).
  double reference_force = 0.0;
  static const OptionTable<DemOptions>& fields();  // the keys of a scene's dem section
  void validate() const;
  // Also: every material a body uses has a Young's modulus (each contact stiffness needs one);
  // InputError naming the material and the body.
  void validate(const World& world) const;
};

struct DemContact {
  int body_a = -1;
  int body_b = -1;
  Vec3 point = Vec3::Zero();
  Vec3 normal = Vec3::UnitY();     // from a to b
  double overlap = 0.0;            // m
  double normal_force = 0.0;       // N, elastic + viscous (may pull while a contact opens)
  double elastic_force = 0.0;      // N, the elastic part alone
  Vec3 force_on_b = Vec3::Zero();  // total contact force on b (normal + tangential), N
};

// Largest stable time step of the scheme for the current neighbours: for velocity Verlet with
// viscous damping ratio zeta, a mode of frequency w is stable for dt w < 2 (sqrt(zeta^2 + 1)
// - zeta); the largest w^2 (eigenvalue of M^-1/2 K M^-1/2) is bounded by block Gershgorin
// over the neighbour pairs, with k_c the tangent stiffness at the reference force. Rotational
// modes are not included (exact for frictionless spheres, whose contact forces pass through
// the centres).
double estimate_stable_time_step(const World& world, const DemOptions& options);

// The DEM as a Stepper: its report has no solver (termination not_run), active_contacts the
// touching pairs, and DemStepDetails. Its contacts and impulses (dt times the force on b in
// the frame (n, t1, t2), the normal row being DemContact::normal_force) are filled only after
// request_contacts(true), which is off by default: converting them costs more than the step
// itself on a large packing.
class DemStepper final : public Stepper {
 public:
  // Throws InputError when the options or world are invalid and SimulationError when the time
  // step exceeds the stability estimate (naming both).
  DemStepper(World& world, DemOptions options);

  const StepReport& step() override;  // one velocity-Verlet step
  std::string scheme() const override { return "dem"; }
  double time_step() const override { return options_.time_step; }
  std::vector<DemContact> contacts() const;  // touching pairs after the last step
  std::size_t touching_count() const;        // their number, without copying them
  double kinetic_energy() const;
  double max_speed() const;
  long neighbour_rebuilds() const { return rebuilds_; }
  double stable_time_step() const { return stable_time_step_; }
  // The stepper keeps each body's M^-1 (body.hpp) from its construction on: call this after
  // changing a body's mass, inertia, motion or rotation lock. The rotational block of a freely
  // rotating 3D body follows its orientation by itself.
  void update_mass_properties();
  // M^-1 of a body as the last half kick applied it (equal to inverse_mass(body) for the
  // orientation it had then).
  const InverseMass& inverse_mass(int body) const { return inverse_mass_[body]; }
  // The springs of the touching pairs (those not zero, in the neighbour list's order) and the
  // bodies' forces of the last step: what a checkpoint carries beside the bodies
  // (moreau/io/checkpoint.hpp, dem_state.hpp).
  DemState state() const;
  // Continues a run from a checkpoint whose bodies' states the world now holds, with the springs
  // given (the others zero) and the forces given, or, where `state` has none, made anew at the
  // restored state. The neighbour list is built anew; its pairs are in (a, b) order whenever
  // it is built, so the per-body sums add the touching pairs in the same order, and a run
  // resumed with its forces repeats the uninterrupted one bit for bit. Throws InputError naming
  // the pair or the count where a spring's bodies are out of the world or out of each other's
  // reach, or the forces are not one finite row per body (a checkpoint of another state).
  void resume(const DemState& state);

 private:
  DemOptions options_;
  double skin_ = 0.0;
  double stable_time_step_ = 0.0;
  long rebuilds_ = 0;
  std::vector<std::pair<int, int>> pairs_;
  std::vector<Vec3> reference_position_;  // positions at the last rebuild
  std::vector<PairLaw> laws_;             // per neighbour pair
  std::vector<Vec3> spring_;              // Cundall-Strack tangential displacement per pair
  std::vector<int> body_pair_start_, body_pair_index_;  // body -> (pair, side) CSR
  std::vector<Vec6> force_;                             // per body: force, torque
  std::size_t touching_ = 0;                            // pairs in contact after the last step
  std::vector<InverseMass> inverse_mass_;               // per body, see update_mass_properties
  std::vector<Mat3> inverse_inertia_body_;      // J_body^-1 of the rotating bodies (else unused)
  std::vector<Quat> inverse_mass_orientation_;  // orientation inverse_mass_[i].angular is for
  std::vector<char> rotating_;                  // dynamic, 3D and not rotation-locked
  std::vector<char> turns_;  // M^-1 has a rotational block: the body's torque is used

  // How a neighbour pair's contact is found, set at each rebuild from the shapes: two centred
  // spheres and a centred sphere against a half-space inline (the hot paths of granular
  // scenes; the same arithmetic as the narrow phase), anything else through the narrow phase.
  enum class PairKind : char { sphere_sphere, sphere_plane, plane_sphere, general };
  // With the constants of the pair's law the loop reads (laws_ holds the rest), so that a
  // pair's data fill one cache line.
  struct alignas(64) PairData {
    PairKind kind = PairKind::general;
    bool hookean = true;
    double radius_a = 0.0;  // sphere radii (the sphere's alone against a half-space)
    double radius_b = 0.0;
    double stiffness = 0.0;  // k_n
    double damping = 0.0;    // gamma_n of a Hookean law, which does not depend on the overlap
    double tangential_stiffness = 0.0;
    double tangential_damping = 0.0;
    double friction = 0.0;
  };
  std::vector<PairData> pair_data_;  // per neighbour pair
  // The contact of each pair after the last step, in one cache line (the gather reads its first
  // half); contacts() completes it to DemContact with the bodies, the point and the elastic
  // force (a function of the overlap). overlap <= 0 when apart.
  struct alignas(64) PairContact {
    Vec3 force_on_b = Vec3::Zero();
    double overlap = 0.0;
    Vec3 normal = Vec3::UnitY();
    double normal_force = 0.0;
  };
  std::vector<PairContact> pair_contact_;
  std::vector<Vec3> pair_point_;  // contact point per pair
  // Per body, what the pair loop reads, copied after each drift: a compact array instead of
  // the RigidBody records, whose names, shapes and inertias the loop does not need.
  struct alignas(64) BodyState {
    Vec3 position = Vec3::Zero();
    Vec3 velocity = Vec3::Zero();
    double mass = 0.0;
    bool spins = false;  // angular velocity not exactly zero
    bool dynamic = false;
  };
  std::vector<BodyState> state_;
  std::vector<Vec3> angular_velocity_;  // per body, read where spins

  void rebuild_neighbours();
  void copy_state(int body);
  void compute_forces(bool kick);
  void kick(int body, double half_step);
  void fill_report(StepReport& report) const;
};

}  // namespace moreau
