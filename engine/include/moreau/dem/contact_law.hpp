#pragma once
// Penalty (soft-sphere) contact laws of the DEM reference.
//
// Normal force on overlap delta = -gap > 0 with normal speed v_n (> 0 separating), after
// Silbert et al. (2001, PRE 64 051302, eq. 2-3), damping written as a coefficient in N s/m:
//   Hookean:  F_n = k_n delta                  - gamma_n v_n
//   Hertzian: F_n = k_n delta sqrt(delta / d)  - gamma_n(delta) v_n
// Stiffness from Young's modulus: Hertz's law F = 4/3 E* sqrt(R*) delta^(3/2), which is the
// Hertz-Mindlin law of Zhang & Makse (2005, PRE 72 011301) written with the full overlap, fixes
// k_n = 4/3 E* sqrt(R* d) for Silbert's Hertzian form; the Hookean law takes the same k_n.
// 1/E* = (1 - nu_a^2)/E_a + (1 - nu_b^2)/E_b, R* = R_a R_b / (R_a + R_b), d the mean diameter
// of the pair (the sphere's diameter against a wall). Damping gamma_n = 2 zeta sqrt(k_n m*), with
// zeta = 1 (critical, e_n = 0) as in Olsen & Kamrin Sec. 8.2. Tangential (Cundall & Strack 1979;
// Silbert eq. 4): a spring on the accumulated tangential displacement, F_t = -k_t s_t - gamma_t
// v_t, capped at mu max(F_n, 0) (the spring is reset to the cap when sliding).
#include "moreau/core/option_table.hpp"
#include "moreau/model/world.hpp"

namespace moreau {

enum class NormalLaw { hookean, hertzian };

struct DemMaterialLaw {
  NormalLaw law = NormalLaw::hookean;
  double damping_ratio = 1.0;                     // zeta; 1 = critical (e_n = 0)
  double tangential_stiffness_ratio = 2.0 / 7.0;  // k_t / k_n (Silbert et al. 2001)
  // zeta_t of the tangential spring: gamma_t = 2 zeta_t sqrt(k_t m_t) with m_t = 2/7 m*, the
  // tangential inertia of a rolling solid sphere; 0 = undamped (Silbert et al. 2001).
  double tangential_damping_ratio = 0.0;
  bool tangential = true;                              // Cundall-Strack spring with Coulomb cap
  static const OptionTable<DemMaterialLaw>& fields();  // the keys of a scene's dem section
};

struct PairLaw {
  double stiffness = 0.0;       // k_n, N/m
  double damping_ratio = 1.0;   // zeta
  double effective_mass = 0.0;  // m*, kg
  double tangential_stiffness = 0.0;
  double tangential_damping = 0.0;  // gamma_t, N s/m
  double diameter = 0.0;            // d of the Hertzian factor sqrt(delta / d), m
  double friction = 0.0;            // mu
  NormalLaw law = NormalLaw::hookean;
  // Elastic normal force and its tangent stiffness dF/d delta at overlap delta >= 0.
  double elastic_force(double overlap) const;
  double tangent_stiffness(double overlap) const;
  double damping(double overlap) const;  // gamma_n at overlap delta, N s/m
};

// Radius of curvature of a shape at a contact: sphere radius, capsule radius; infinite for
// flat shapes (half-space, box faces).
double curvature_radius(const ShapeGeometry& geometry);

// Law of the pair (a, b); effective mass m* = m_a m_b / (m_a + m_b), or the dynamic body's
// mass against a fixed or prescribed one. Throws InputError when a material has no Young's
// modulus or both curvature radii are infinite.
PairLaw pair_law(const World& world, int body_a, int body_b, const DemMaterialLaw& law);

}  // namespace moreau
