#pragma once
// The problems of Preclik et al. Sec. 4.1-4.2 (README.md): the academic six-mass single-contact
// problem and the Painleve rod, as worlds and as single-contact problems through the engine's
// Delassus blocks, with the rod's closed forms (mu*, Lambda0).
#include <cmath>
#include <numbers>

#include "moreau/impact/single_contact.hpp"
#include "moreau/model/world.hpp"

namespace painleve_rod {

using moreau::Mat3;
using moreau::SingleContactProblem;
using moreau::Vec3;
using moreau::World;

constexpr double kPi = std::numbers::pi;

// ---- Academic problem, Preclik et al. Sec. 4.1 (all values from the paper) ----
constexpr double kDx = 10.0, kDy = 1.0, kDz = 1.0;
constexpr double kMx = 0.03, kMy = 65.0, kMz = 50.0;
constexpr double kAcademicMu = 3.7;
inline const Vec3 kPlaneNormal(0.25, 0.36, -0.9);      // n^, normalized before use
inline const Vec3 kAcademicVelocity(0.06, 0.7, 0.23);  // b = Q^T (0.06, 0.7, 0.23)

// ---- Painleve rod, Preclik et al. Sec. 4.2 (README.md: unit mass, length and sliding speed) ----
constexpr double kRodMass = 1.0;         // m, kg
constexpr double kRodLength = 1.0;       // l, m
constexpr double kSlidingSpeed = 1.0;    // v0, m/s
constexpr double kGravity = 9.81;        // g0, m/s^2
constexpr double kContactMargin = 1e-9;  // the tip touches with gap 0, which must count
inline const double kCriticalAngle = 0.5 * std::acos(-0.6);  // where mu* is smallest, 4/3
constexpr double kTimeStep = 1e-3;                           // s
constexpr int kSteps = 250;              // 0.25 s: the rod pivots well away from theta0
constexpr double kErrorReduction = 0.5;  // epsilon of Preclik et al. Sec. 3.1 (README.md)

// The Delassus block of the contact at `point` of a body with the given mass and body-frame
// inertia at the origin, through the engine, in the world frame.
Mat3 world_delassus(double mass, const Mat3& inertia, const Vec3& point, const Vec3& normal);

struct Academic {
  SingleContactProblem problem;
  Mat3 frame;            // Q = [n t o]
  double inertia_error;  // engine's point-mass inertia against Preclik et al.'s closed form
};

// Preclik et al. Sec. 4.1: A = Q^T (M^-1 E - dx^2 e_x^x I^-1 e_x^x) Q. The frame is t = n x e_x,
// o = n x t, normalized or (as published) not.
Academic academic_problem(bool normalized_frame);

// Preclik et al. Sec. 4.2: the rod (body 1) touches the half-space (body 0, normal e_y) with its
// lower tip at angle theta0, centre at l/2 (cos, sin, 0), sliding with -v0 e_x, no spin.
World rod_world(double theta, double mu);

struct RodImpact {
  SingleContactProblem problem;  // mu set by the caller
  Mat3 frame;                    // contact frame [n t1 t2] (n = e_y)
};

// The impact problem at t0 (Preclik et al. eq. 3): A = W of the tip contact, b = -u^- (pre-impact
// relative velocity; no gravity impulse at an instant).
RodImpact rod_impact(double theta);

double mu_star(double theta);

Vec3 lambda0(double theta);

// mu*(theta) from the engine's W: the ellipse/parabola switch A_nn = mu |(A_nt, A_no)| (P2).
double engine_mu_star(double theta);

}  // namespace painleve_rod
