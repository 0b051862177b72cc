#include "moreau/integrator/theta_stepper.hpp"

#include <cmath>
#include <string>
#include <utility>

#include "moreau/contact/contact_system.hpp"
#include "moreau/core/error.hpp"
#include "moreau/integrator/scheme_registry.hpp"

namespace moreau {
namespace {

// W~ = S W with S = diag(s_c) per contact (theta_stepper.hpp): the velocity u~ of eq. 20 seen
// through the Delassus operator of the real velocities. The sweep state is the base's (W r);
// only what is read from it is scaled.
class ImpactScaledDelassus final : public DelassusOperator {
 public:
  ImpactScaledDelassus(const DelassusOperator& base, std::vector<Vec3> scale)
      : base_(base), scale_(std::move(scale)) {}
  int contact_count() const override { return base_.contact_count(); }
  int rows_per_contact() const override { return base_.rows_per_contact(); }
  void apply(const VecX& x, VecX& y) const override {
    base_.apply(x, y);
    const int m = rows_per_contact();
    for (int c = 0; c < contact_count(); ++c) {
      y.segment(c * m, m) = y.segment(c * m, m).cwiseProduct(scale_[c].head(m));
    }
  }
  Mat3 diagonal_block(int contact) const override {
    return scale_[contact].asDiagonal() * base_.diagonal_block(contact);
  }
  void begin_sweep(const VecX& r, VecX& work) const override { base_.begin_sweep(r, work); }
  Vec3 local_velocity(int contact, const VecX& work) const override {
    return scale_[contact].cwiseProduct(base_.local_velocity(contact, work));
  }
  void update_sweep(int contact, const Vec3& dr, VecX& work) const override {
    base_.update_sweep(contact, dr, work);
  }
  SparseMatrix assemble() const override {
    const int m = rows_per_contact();
    VecX diagonal(m * contact_count());
    for (int c = 0; c < contact_count(); ++c) diagonal.segment(c * m, m) = scale_[c].head(m);
    return SparseMatrix(diagonal.asDiagonal() * base_.assemble());
  }

 private:
  const DelassusOperator& base_;
  std::vector<Vec3> scale_;
};

// Velocity of b relative to a at the contact in the frame (n, t1, t2) for body velocities
// `velocity` (6 per body): P*(q, c) q_dot of eq. 4.
Vec3 relative_velocity(const World& world, const Contact& c, const VecX& velocity) {
  const JacobianBlock ja = -point_jacobian(c, world.bodies[c.body_a].position);
  const JacobianBlock jb = point_jacobian(c, world.bodies[c.body_b].position);
  return ja * velocity.segment<6>(kBodyDofs * c.body_a) +
         jb * velocity.segment<6>(kBodyDofs * c.body_b);
}

}  // namespace

const SchemeRegistrar<ThetaStepper, ThetaOptions> kRegistration{
    "theta", "theta-method with Newton's impact law (Dumont Sec. 2.1 and 3.2)"};

const OptionTable<ThetaOptions>& ThetaOptions::fields() {
  static const OptionTable<ThetaOptions> table{
      // Dumont Sec. 2.1: theta in [1/2, 1].
      number_option("theta", &ThetaOptions::theta, Bounds::closed(0.5, 1.0))
          .described("theta of Dumont eq. 2 and 18 (1/2 is the paper's algorithm)"),
      number_option("tangential_restitution", &ThetaOptions::tangential_restitution,
                    Bounds::closed(0.0, 1.0))
          .described("e_t of Dumont eq. 20"),
  };
  return table;
}

void ThetaOptions::validate() const {
  StepSettings::validate();
  validate_fields(fields(), *this, "ThetaOptions");
}

ThetaStepper::ThetaStepper(World& world, ThetaOptions options,
                           std::unique_ptr<ContactSolver> solver)
    : ContactDynamicsStepper(world, std::move(solver), detail::validated(options), "theta"),
      options_(std::move(options)) {}

// eq. 18: the mid-step configuration, where contacts and the mapping P are evaluated. The free
// velocity of the pipeline is eq. 2-3 with gravity, constant, so theta F_{k+1} + (1 - theta) F_k
// = F.
void ThetaStepper::before_detection(StepState& state) {
  integrate_positions(world_, (1.0 - options_.theta) * state.dt);
}

void ThetaStepper::build_problem(StepState& state, std::vector<Contact> candidates,
                                 StepReport& report) {
  const double theta = options_.theta;
  const int rows = state.rows;
  report.set_details(ThetaStepDetails{static_cast<long>(candidates.size())});
  std::vector<Vec3> u_free, u_minus;
  for (const Contact& c : candidates) {
    const Vec3 free = relative_velocity(world_, c, state.velocity_free);
    if (c.gap + theta * state.dt * free[0] > 0.0) continue;  // stays open under free motion
    report.contacts.push_back(c);
    u_free.push_back(free);
    u_minus.push_back(relative_velocity(world_, c, state.velocity_start));  // eq. 19
  }
  const int contact_count = static_cast<int>(report.contacts.size());
  state.system = std::make_unique<ContactSystem>(world_, report.contacts, rows);

  // eq. 20: u~ = S (u+ + E u-) with S = (1 + E)^-1, so q~ = S (u_free + E u-) and W~ = S W.
  ConeProblem& problem = state.problem;
  problem.friction_model = FrictionModel::coulomb;
  problem.q.resize(rows * contact_count);
  problem.mu.resize(contact_count);
  std::vector<Vec3> scale(contact_count);
  bool scaled = false;
  for (int i = 0; i < contact_count; ++i) {
    const Contact& c = report.contacts[i];
    const int ma = world_.bodies[c.body_a].material, mb = world_.bodies[c.body_b].material;
    const double e_n = pair_restitution(world_.materials[ma], world_.materials[mb]);
    const Vec3 e(e_n, options_.tangential_restitution, options_.tangential_restitution);
    scale[i] = (Vec3::Ones() + e).cwiseInverse();
    scaled = scaled || e.head(rows).any();
    problem.q.segment(rows * i, rows) =
        scale[i].cwiseProduct(u_free[i] + e.cwiseProduct(u_minus[i])).head(rows);
    problem.mu(i) = world_.friction.get(ma, mb);
  }
  problem.delassus = state.system.get();
  if (scaled) {
    state.delassus = std::make_unique<ImpactScaledDelassus>(*state.system, std::move(scale));
    problem.delassus = state.delassus.get();
  }
}

// eq. 2, second line: q_{k+1} = q_m + theta dt v_{k+1}.
void ThetaStepper::update_positions(StepState& state) {
  integrate_positions(world_, options_.theta * state.dt);
}

const ThetaStepDetails& theta_details(const StepReport& report) {
  const auto* details = report.find_details<ThetaStepDetails>();
  if (!details) throw InputError("theta_details: the report is not of a theta step");
  return *details;
}

}  // namespace moreau
