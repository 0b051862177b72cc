#pragma once
// The rattler test of the quasi-static driver: whether a rigid particle of the plane can move
// away from all its contacts, each strictly opening inside its friction cone of the associated
// flow rule of the Krabbenhoft/NURBS chapter eq. 4.16 (the gap grows by more than mu |slip|),
// by a generalized displacement (u_x, u_y, omega) with its neighbours held. Such a particle
// carries no force without a load (any force in the cones does work along that motion), and
// eq. 4.16 does not bound its displacement (the multipliers of its equilibrium rows).
//
// Each contact gives two rows g in (u_x, u_y, L omega), L the particle's reach (the longest
// lever of its contacts): g = a +- mu b, a the gap rate (opening direction o, moment r x o / L),
// b the slip rate (tangent t, r x t / L), each row normalized. A motion v with g . v > 0 for
// every row exists iff the origin lies outside the convex hull of the rows (Gordan's theorem of
// the alternative), and max over |v| = 1 of min_g g . v is the distance from the origin to the
// hull. That distance is computed exactly (up to rounding) by Wolfe's minimum-norm point
// algorithm; a particle has at most a few dozen rows.
#include <vector>

#include "moreau/core/types.hpp"

namespace moreau::variational {

struct EscapeContact {
  Vec3 lever = Vec3::Zero();     // contact point minus the particle's centre, m (xy)
  Vec3 opening = Vec3::UnitX();  // unit normal along which the particle's motion opens it
  double friction = 0.0;         // mu of the contact
};

struct Escape {
  // min over the rows of g . motion: > 0 when `motion` opens every contact strictly; 0 when no
  // motion does (the origin in the hull), up to rounding.
  double margin = 0.0;
  Vec3 motion = Vec3::Zero();  // (u_x, u_y, reach omega), unit; zero when margin is 0
  double reach = 1.0;          // L, m
};

// A margin above this counts as an escape: a motion opening every contact by less than this
// fraction of its speed is the boundary case of a frictionless particle pressed between two
// parallel walls (it slides along them and carries their force), blurred by rounding.
inline constexpr double kEscapeMargin = 1e-6;

// No contact: an escape with margin 1. Throws InputError for a non-finite or non-unit opening
// or a negative friction coefficient.
Escape rigid_escape(const std::vector<EscapeContact>& contacts);

inline bool is_rattler(const std::vector<EscapeContact>& contacts) {
  return rigid_escape(contacts).margin > kEscapeMargin;
}

}  // namespace moreau::variational
