#include "moreau/nlgs/local_solver.hpp"

#include <Eigen/LU>
#include <cmath>

#include "moreau/core/error.hpp"

namespace moreau {
namespace {

const Vec3 kNormal = Vec3::UnitX();

// Identity on the leading `rows` entries (the contact's own space).
Mat3 identity(int rows) {
  Mat3 m = Mat3::Zero();
  m.topLeftCorner(rows, rows).setIdentity();
  return m;
}

// Orthogonal projector onto the tangent plane (t1, t2) of the contact's space.
Mat3 tangent_projector(int rows) {
  Mat3 m = identity(rows);
  m(0, 0) = 0.0;
  return m;
}

Vec3 leading(const Vec3& x, int rows) {
  Vec3 out = Vec3::Zero();
  out.head(rows) = x.head(rows);
  return out;
}

Vec3 tangential_part(const Vec3& x, int rows) {
  Vec3 out = leading(x, rows);
  out[0] = 0.0;
  return out;
}

// A projection P(tau) with its derivative G = dP/dtau and the contact state it reveals.
struct Projection {
  Vec3 p = Vec3::Zero();
  Mat3 g = Mat3::Zero();
  ContactStatus status = ContactStatus::no_contact;
};

// Projection onto the Coulomb cone K_mu (eq. 9) and its derivative, the three cases of Dumont
// Sec. 3.3. The interior test asks tau_n >= 0, so that for mu = 0 a purely normal negative tau
// goes to the apex 0 (K is then the ray R+ n).
Projection coulomb_cone_projection(const Vec3& tau_in, double mu, int rows) {
  Projection out;
  const Vec3 tau = leading(tau_in, rows);
  const Vec3 tau_t = tangential_part(tau, rows);
  const double tau_n = tau[0];
  const double tn = tau_t.norm();
  if (tau_n >= 0.0 && tn <= mu * tau_n) {
    // Sticking: tau already in K, P = tau.
    out.status = ContactStatus::sticking;
    out.p = tau;
    out.g = identity(rows);
    return out;
  }
  if (mu * tn <= -tau_n) {
    // No contact: tau in the polar cone -K*, P = 0.
    out.status = ContactStatus::no_contact;
    return out;
  }
  // Sliding: P = tau - s d with s = (|tau_t| - mu tau_n) / (1 + mu^2), d = tau_t / |tau_t| - mu n
  // (Dumont Sec. 3.3, first case). Here |tau_t| > 0: tau_t = 0 falls in one of the two cases
  // above. dP/dtau = I - d ds/dtau - s dd/dtau with ds/dtau = d / (1 + mu^2) and
  // dd/dtau = (P_t - tau^ tau^^T) / |tau_t| (derivative of the unit tangent tau^).
  out.status = ContactStatus::sliding;
  const Vec3 unit = tau_t / tn;
  const Vec3 d = unit - mu * kNormal;
  const double k = 1.0 + mu * mu;
  const double s = (tn - mu * tau_n) / k;
  out.p = tau - s * d;
  out.g = identity(rows) - d * d.transpose() / k -
          (s / tn) * (tangent_projector(rows) - unit * unit.transpose());
  return out;
}

// Projection onto C = R+ x B(0, mu (tau_n)+) of eq. 35-36 and its derivative (Dumont
// Sec. 3.5, three cases).
Projection cylinder_projection(const Vec3& tau_in, double mu, int rows) {
  Projection out;
  const Vec3 tau = leading(tau_in, rows);
  const Vec3 tau_t = tangential_part(tau, rows);
  const double tau_n = tau[0];
  const double tn = tau_t.norm();
  if (tau_n <= 0.0) {
    out.status = ContactStatus::no_contact;
    return out;
  }
  if (tn <= mu * tau_n) {
    out.status = ContactStatus::sticking;
    out.p = tau;
    out.g = identity(rows);
    return out;
  }
  // Sliding: P = tau_n n + mu tau_n tau^, so dP/dtau = n n^T + mu tau^ n^T
  // + mu tau_n (P_t - tau^ tau^^T) / |tau_t|.
  out.status = ContactStatus::sliding;
  const Vec3 unit = tau_t / tn;
  out.p = tau_n * kNormal + mu * tau_n * unit;
  out.g = kNormal * kNormal.transpose() + mu * unit * kNormal.transpose() +
          (mu * tau_n / tn) * (tangent_projector(rows) - unit * unit.transpose());
  return out;
}

Vec3 local_velocity(const LocalProblem& problem, const Vec3& r) {
  return leading(problem.w * r + problem.b, problem.rows);
}

// SBP, eq. 21-22: one Uzawa step on the bi-potential, projected onto K_mu.
class StandardBipotential final : public LocalSolver {
 public:
  LocalMethod method() const override { return LocalMethod::sbp; }
  double default_rho_factor() const override { return 0.6; }
  bool velocity_is_unknown() const override { return false; }
  LocalResult solve(const LocalProblem& problem, const Vec3& r_start,
                    const LocalOptions&) const override {
    const int rows = problem.rows;
    const Vec3 r = leading(r_start, rows);
    const Vec3 u = local_velocity(problem, r);
    // eq. 21: tau = r - rho [u_t + (u_n + mu |u_t|) n]
    const Vec3 tau = r - problem.rho * (u + problem.mu * tangential_part(u, rows).norm() * kNormal);
    const Projection projection = coulomb_cone_projection(tau, problem.mu, rows);  // eq. 22
    LocalResult result;
    result.r = projection.p;
    result.v = local_velocity(problem, result.r);
    result.status = projection.status;
    return result;
  }
};

// SAL, eq. 35: one projected-gradient step on the augmented Lagrangian.
class StandardAugmentedLagrangian final : public LocalSolver {
 public:
  LocalMethod method() const override { return LocalMethod::sal; }
  double default_rho_factor() const override { return 0.6; }
  bool velocity_is_unknown() const override { return false; }
  LocalResult solve(const LocalProblem& problem, const Vec3& r_start,
                    const LocalOptions&) const override {
    const int rows = problem.rows;
    const Vec3 r = leading(r_start, rows);
    const Vec3 tau = r - problem.rho * local_velocity(problem, r);
    const Projection projection = cylinder_projection(tau, problem.mu, rows);
    LocalResult result;
    result.r = projection.p;
    result.v = local_velocity(problem, result.r);
    result.status = projection.status;
    return result;
  }
};

// EBP and EAL: Newton on f_c(chi) = (v - b - W r, Z(r, v)) = 0 from chi_0 = (r, W r + b)
// (Dumont eq. 27), with the tangent matrix [[-W, I], [A, B]] (eq. 29) condensed to
// (A + B W) dr = -Z + B f, dv = -f + W dr (eq. 31-32).
//
// Stopping (eq. 28): Dumont prints eps_Newt = |v - b - W r| + |r - proj(r, K)|, but says the
// criterion "measures f_c(chi)", whose second block is Z (eq. 26); the printed second term is
// zero for every r in K (r = 0 included) and would stop the loop before the contact law holds,
// so Z is used. At least one Newton step is always taken: with a loose absolute tolerance a
// check before the first step would leave r unchanged and the NLGS could not progress.
//
// Globalisation (LocalOptions::line_search, not in Dumont, which gives none): the full
// Newton step of this piecewise-smooth Z can cycle between two contact states (a sphere hitting
// a plane obliquely with enough friction to stick alternates between "sliding" at r = 0 and
// "no contact" at the overshoot, validation/unit/nlgs_test.cpp); the step is halved until
// eps_Newt decreases by the Armijo factor (1 - 1e-4 t), at most kMaxHalvings times.
class NewtonLocalSolver : public LocalSolver {
 public:
  bool velocity_is_unknown() const override { return true; }
  double default_rho_factor() const override { return 1.0; }
  LocalResult solve(const LocalProblem& problem, const Vec3& r_start,
                    const LocalOptions& options) const override {
    constexpr int kMaxHalvings = 20;
    constexpr double kArmijo = 1e-4;
    const int rows = problem.rows;
    const Mat3 w = identity(rows) * problem.w * identity(rows);
    const Vec3 b = leading(problem.b, rows);
    const auto residual = [&](const Vec3& r, const Vec3& v, const LocalTangent& t) {
      return (v - b - w * r).norm() + options.force_scale * t.z.norm();  // eps_Newt, eq. 28
    };
    Vec3 r = leading(r_start, rows);
    Vec3 v = local_velocity(problem, r);
    LocalTangent t = tangent(r, v, problem.mu, problem.rho, rows);
    double eps_newt = residual(r, v, t);
    LocalResult result;
    result.newton_converged = false;
    for (int l = 1; l <= options.newton_max_iterations; ++l) {
      const Vec3 f = v - b - w * r;
      // eq. 32 on the leading rows x rows block; the identity on unused rows keeps the 3x3
      // system regular and their increments zero.
      Mat3 system = t.a + t.b * w;
      system.bottomRightCorner(3 - rows, 3 - rows).setIdentity();
      const Eigen::FullPivLU<Mat3> lu(system);
      if (lu.rank() < 3) break;  // singular tangent: keep the last iterate
      const Vec3 dr = leading(lu.solve(Vec3(-t.z + t.b * f)), rows);
      const Vec3 dv = -f + w * dr;
      double step = 1.0;
      for (int halving = 0;; ++halving) {
        const Vec3 r_try = r + step * dr, v_try = v + step * dv;
        const LocalTangent t_try = tangent(r_try, v_try, problem.mu, problem.rho, rows);
        const double eps_try = residual(r_try, v_try, t_try);
        if (!options.line_search || eps_try <= (1.0 - kArmijo * step) * eps_newt ||
            halving == kMaxHalvings) {
          r = r_try;
          v = v_try;
          t = t_try;
          eps_newt = eps_try;
          break;
        }
        step *= 0.5;
      }
      result.newton_iterations = l;
      if (eps_newt <= options.newton_tolerance) {
        result.newton_converged = true;
        break;
      }
    }
    result.r = r;
    result.v = v;
    result.status = t.status;
    return result;
  }

 protected:
  virtual LocalTangent tangent(const Vec3& r, const Vec3& v, double mu, double rho,
                               int rows) const = 0;
};

class EnhancedBipotential final : public NewtonLocalSolver {
 public:
  LocalMethod method() const override { return LocalMethod::ebp; }

 protected:
  LocalTangent tangent(const Vec3& r, const Vec3& v, double mu, double rho,
                       int rows) const override {
    return bipotential_tangent(r, v, mu, rho, rows);
  }
};

class EnhancedAugmentedLagrangian final : public NewtonLocalSolver {
 public:
  LocalMethod method() const override { return LocalMethod::eal; }

 protected:
  LocalTangent tangent(const Vec3& r, const Vec3& v, double mu, double rho,
                       int rows) const override {
    return augmented_lagrangian_tangent(r, v, mu, rho, rows);
  }
};

}  // namespace

std::string to_string(ContactStatus status) {
  switch (status) {
    case ContactStatus::no_contact:
      return "no_contact";
    case ContactStatus::sticking:
      return "sticking";
    case ContactStatus::sliding:
      return "sliding";
  }
  return "unknown";
}

std::string to_string(LocalMethod method) {
  switch (method) {
    case LocalMethod::sbp:
      return "sbp";
    case LocalMethod::ebp:
      return "ebp";
    case LocalMethod::sal:
      return "sal";
    case LocalMethod::eal:
      return "eal";
  }
  return "unknown";
}

LocalMethod local_method_from_string(const std::string& name) {
  for (const LocalMethod method :
       {LocalMethod::sbp, LocalMethod::ebp, LocalMethod::sal, LocalMethod::eal}) {
    if (to_string(method) == name) return method;
  }
  throw InputError("unknown local solver '" + name + "'; known: sbp, ebp, sal, eal");
}

std::unique_ptr<LocalSolver> make_local_solver(LocalMethod method) {
  switch (method) {
    case LocalMethod::sbp:
      return std::make_unique<StandardBipotential>();
    case LocalMethod::ebp:
      return std::make_unique<EnhancedBipotential>();
    case LocalMethod::sal:
      return std::make_unique<StandardAugmentedLagrangian>();
    case LocalMethod::eal:
      return std::make_unique<EnhancedAugmentedLagrangian>();
  }
  throw InputError("make_local_solver: unknown method");
}

// In 2D Dumont Sec. 3.3 prints dZ/dv_t = rho mu / (1 + mu^2) ((th_v + th_r) n
// + mu (1 - th_r th_v) t); differentiating gives mu (1 + th_r th_v) in the t entry, which the
// finite-difference test in validation/unit/nlgs_test.cpp confirms (the other printed entries
// agree with B = rho G (I + mu n e^T) below).
LocalTangent bipotential_tangent(const Vec3& r, const Vec3& v_in, double mu, double rho, int rows) {
  const Vec3 v = leading(v_in, rows);
  const Vec3 v_t = tangential_part(v, rows);
  const double slip = v_t.norm();
  // d(v + mu |v_t| n)/dv = I + mu n e^T, e = v_t / |v_t|; at v_t = 0 the norm has no derivative
  // and e = 0 is taken (the element of its subdifferential that sticking drives v_t to).
  const Vec3 e = slip > 0.0 ? Vec3(v_t / slip) : Vec3::Zero();
  const Vec3 tau = leading(r, rows) - rho * (v + mu * slip * kNormal);
  const Projection projection = coulomb_cone_projection(tau, mu, rows);
  LocalTangent out;
  out.status = projection.status;
  out.z = leading(r, rows) - projection.p;                                       // eq. 26
  out.a = identity(rows) - projection.g;                                         // dZ/dr = I - G
  out.b = rho * projection.g * (identity(rows) + mu * kNormal * e.transpose());  // dZ/dv
  return out;
}

// In the sliding case Dumont Sec. 3.5 prints dZ~/dv_t with a minus sign and the 2D B without
// the factor rho; differentiating Z~ = r - P_C(r - rho v) gives B = rho G with G = dP_C/dtau,
// which the finite-difference test in validation/unit/nlgs_test.cpp confirms.
LocalTangent augmented_lagrangian_tangent(const Vec3& r, const Vec3& v, double mu, double rho,
                                          int rows) {
  const Vec3 tau = leading(r, rows) - rho * leading(v, rows);
  const Projection projection = cylinder_projection(tau, mu, rows);
  LocalTangent out;
  out.status = projection.status;
  out.z = leading(r, rows) - projection.p;  // eq. 36
  out.a = identity(rows) - projection.g;
  out.b = rho * projection.g;
  return out;
}

Vec3 project_onto_cylinder(const Vec3& tau, double mu, int rows) {
  return cylinder_projection(tau, mu, rows).p;
}

Vec3 project_onto_coulomb_cone(const Vec3& x, double mu, int rows) {
  return coulomb_cone_projection(x, mu, rows).p;
}

}  // namespace moreau
