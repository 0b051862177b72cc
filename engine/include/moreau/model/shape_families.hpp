#pragma once
// The three particle families of the Krabbenhoft/NURBS chapter Sec. 4.4 (biaxial compression
// and column drop): 16 non-convex shapes, angular convex particles and disks, the latter two
// "obtained by matching average particle diameters of the 16 non-convex shapes" (Sec. 4.4.1).
// The paper shows the shapes (Fig. 4.3) but publishes no outlines; they are generated here by a
// seeded procedure (make_shape_families), the same on every machine.
#include <cstdint>
#include <vector>

#include "moreau/model/polygon.hpp"

namespace moreau {

struct ShapeFamilyOptions {
  std::uint64_t seed = 4;  // Sec. 4.4 of the chapter
  int count = 16;          // shapes per family (Sec. 4.4.1: 16 non-convex shapes)
  // Mean caliper diameter of the family (m) and the relative half-width of the uniform spread
  // of the per-shape diameters around it (a polydisperse set, as in Fig. 4.3).
  double mean_diameter = 1.0;
  double size_spread = 0.2;
  int outline_vertices = 24;  // vertices of each non-convex outline
};

// Shape k of each family has the same mean caliper diameter (mean_caliper_diameter in
// polygon.hpp; the disk diameter for a disk). Procedure, for k = 0 .. count-1:
//  1. non-convex: a star-shaped outline r(phi) = 1 + sum_{j=2..5} a_j cos(j phi + phi_j) at
//     outline_vertices equally spaced angles, amplitudes a_j uniform in [0, A_j) with
//     A = (0.35, 0.25, 0.15, 0.10) (so r >= 0.15 > 0: a simple, counter-clockwise outline) and
//     phases phi_j uniform in [0, 2 pi); drawn again until the outline fills at most 90% of its
//     convex hull (solidity <= 0.9: concavities deep enough to interlock). Scaled to diameter
//     d_k, drawn uniformly in mean_diameter (1 +- size_spread).
//  2. angular: the convex hull of shape 1, reduced to c_k corners (c_k uniform in 5..8) by
//     removing, one at a time, the corner whose triangle with its neighbours has the least area
//     (Visvalingam & Whyatt), rescaled to diameter d_k. Same elongation, sharp corners.
//  3. disk: radius d_k / 2.
// Random numbers come from splitmix64 seeded with `seed`, so that the shapes do not depend on
// the standard library's distributions.
struct ShapeFamilies {
  std::vector<Polygon> non_convex;
  std::vector<Polygon> angular;
  std::vector<double> disk_radius;
  std::vector<double> mean_diameter;  // d_k
};

// Throws InputError for count < 1, a diameter that is not finite and positive, a spread
// outside [0, 1) or fewer than 8 outline vertices.
ShapeFamilies make_shape_families(const ShapeFamilyOptions& options = {});

}  // namespace moreau
