#pragma once
// Local (one-contact) solvers of the non-linear Gauss-Seidel loop of Dumont (Dumont,
// "enhanced descent algorithms", Sec. 3.2-3.5). Inside an NLGS sweep the impulses of all other
// contacts are frozen, so the velocity of contact c is affine in its own impulse,
// u = W_cc r + b (Dumont eq. 24 with the other contacts' sum in b), and the local solver
// returns a new r (and, for the Newton methods, the velocity v that goes with it):
//
//   SBP  one Uzawa step on the bi-potential, tau = r - rho (u + mu |u_t| n), r <- P_K(tau)
//        (eq. 21-22);
//   SAL  one Uzawa step on the augmented Lagrangian (Alart-Curnier), tau = r - rho u,
//        r <- P_C(tau) with C = R+ x B(0, mu (tau_n)+) (eq. 35);
//   EBP  Newton on f(r, v) = (v - b - W r, Z(r, v)) = 0 with Z = r - P_K(tau) (eq. 24-27),
//        condensed to (A + B W) dr = -Z + B f (eq. 31-32);
//   EAL  the same Newton method on Z~ = r - P_C(tau), tau = r - rho v (eq. 36).
//
// Units: r is an impulse (N s), u and v velocities (m/s), rho an impulse per velocity (kg).
// Dumont writes r as a force with rho_bar = m_i m_j / (m_i + m_j) / dt; r dt and rho dt give
// the same iteration, see nlgs_solver.hpp. Vectors are (normal, t1, t2); only the leading
// `rows` entries are used (1 frictionless, 2 for 2D, 3 for 3D), the others are kept at 0.
#include <memory>
#include <string>

#include "moreau/core/types.hpp"

namespace moreau {

// The three contact states of Dumont Sec. 3.3 and 3.5, read from the augmented reaction tau.
enum class ContactStatus { no_contact, sticking, sliding };
std::string to_string(ContactStatus status);

enum class LocalMethod { sbp, ebp, sal, eal };
std::string to_string(LocalMethod method);  // "sbp", "ebp", "sal", "eal"
// Throws InputError for a name other than those four.
LocalMethod local_method_from_string(const std::string& name);

struct LocalProblem {
  Mat3 w = Mat3::Identity();  // W_cc, the contact's diagonal Delassus block, s/kg
  Vec3 b = Vec3::Zero();      // u = W_cc r + b, m/s
  double mu = 0.0;            // Coulomb coefficient, >= 0
  double rho = 1.0;           // descent parameter, kg (impulse per velocity), > 0
  int rows = 3;               // 1, 2 or 3
};

struct LocalOptions {
  // Local Newton stop (EBP, EAL): eps_Newt <= newton_tolerance or newton_max_iterations steps
  // (Dumont Sec. 4: 1e-5 and 100). eps_Newt = |v - b - W r| + force_scale |Z| (eq. 28,
  // see local_solver.cpp for the second term), in m/s plus force_scale * N s.
  double newton_tolerance = 1e-5;
  int newton_max_iterations = 100;
  // 1 / dt measures Z as a force (N) as Dumont does; 1 keeps impulses (N s).
  double force_scale = 1.0;
  // Backtracking on eps_Newt (local_solver.cpp); false is the plain Newton step of Dumont.
  bool line_search = true;
};

struct LocalResult {
  Vec3 r = Vec3::Zero();  // new impulse
  Vec3 v = Vec3::Zero();  // velocity that goes with it: W r + b (SBP, SAL), the Newton unknown
  ContactStatus status = ContactStatus::no_contact;  // state of the last tau
  int newton_iterations = 0;                         // 0 for SBP and SAL
  bool newton_converged = true;  // false when the Newton loop stopped at its limit
};

class LocalSolver {
 public:
  virtual ~LocalSolver() = default;
  virtual LocalMethod method() const = 0;
  std::string name() const { return to_string(method()); }
  // alpha of rho = alpha rho_bar chosen in Dumont Sec. 4: 0.6 for SBP and SAL, 1 for EBP and
  // EAL.
  virtual double default_rho_factor() const = 0;
  // The Newton methods carry the local velocity as an unknown (chi = (r, v), eq. 25): the
  // motion term of eps_glob (eq. 37) compares it with W r + q after the sweep. SBP and SAL have
  // no such unknown and that term vanishes for them.
  virtual bool velocity_is_unknown() const = 0;
  // One local solve from the impulse r_start.
  virtual LocalResult solve(const LocalProblem& problem, const Vec3& r_start,
                            const LocalOptions& options) const = 0;
};

std::unique_ptr<LocalSolver> make_local_solver(LocalMethod method);

// Z(r, v) = r - P(tau(r, v)) and its partial derivatives A = dZ/dr, B = dZ/dv (Dumont
// eq. 26, 29-30 and 36), zero outside the leading rows x rows block.
struct LocalTangent {
  Vec3 z = Vec3::Zero();
  Mat3 a = Mat3::Zero();
  Mat3 b = Mat3::Zero();
  ContactStatus status = ContactStatus::no_contact;
};

// Bi-potential: tau = r - rho (v + mu |v_t| n), P = P_K (Coulomb cone), eq. 26.
LocalTangent bipotential_tangent(const Vec3& r, const Vec3& v, double mu, double rho, int rows);
// Augmented Lagrangian: tau = r - rho v, P = P_C with C = R+ x B(0, mu (tau_n)+), eq. 36.
LocalTangent augmented_lagrangian_tangent(const Vec3& r, const Vec3& v, double mu, double rho,
                                          int rows);

// Projection of eq. 35: (max(0, tau_n), the nearest point of the disc of radius
// mu max(0, tau_n) to tau_t). Entries past `rows` are returned as 0.
Vec3 project_onto_cylinder(const Vec3& tau, double mu, int rows);

// Projection onto the Coulomb cone K_mu (eq. 9), as project_onto_cone of cone.hpp except that
// for mu = 0 a purely normal x with x_n < 0 goes to the apex 0 (K is then the ray R+ n).
Vec3 project_onto_coulomb_cone(const Vec3& x, double mu, int rows);

}  // namespace moreau
