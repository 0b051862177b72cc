#pragma once
// Polygonal particles of a 2D world: convex polygons and non-convex particles.
//
// Choice of representation (Krabbenhoft/NURBS chapter Sec. 4.1-4.3 describes particles by
// NURBS boundaries with "knot-to-surface" contacts, eq. 4.1-4.2): here a particle is a simple
// polygon given by its outline, and a non-convex one is the union of convex pieces that tile it
// (an ear-clipping triangulation merged into convex pieces, Hertel & Mehlhorn). Effect on
// contact detection:
//   - every pair of convex pieces is an exact convex problem: the signed gap is the Euclidean
//     distance when apart and minus the penetration depth (separating axis) when overlapping,
//     with no Newton iteration on a curved boundary and no missed or spurious roots;
//   - corners are sharp where the NURBS outline is smooth, so a corner touching a face has one
//     contact and its normal is the face normal (or, corner to corner, the direction between the
//     two corners);
//   - every vertex of either particle within the collision margin of the other is a contact
//     (the vertex-within-margin rule, docs/polygons.md), as every knot of the paper's slave
//     surface within reach of the master surface is: a face resting on a face gives the corners
//     of both faces that lie over the other, a concave pocket one contact per piece it touches;
//   - edges between two pieces (diagonals of the decomposition) lie inside the particle; they
//     are never used as the reference face of an overlap, so an overlap is always resolved
//     through the particle's outline.
#include <string>
#include <vector>

#include "moreau/core/types.hpp"

namespace moreau {

using Vec2 = Eigen::Vector2d;

// One convex piece of a polygon, in the polygon frame.
struct ConvexPiece {
  std::vector<Vec2> vertices;  // counter-clockwise, strictly convex
  // external[k] != 0 when edge k (vertices k -> k + 1) lies on the particle's outline; 0 for a
  // diagonal shared with another piece.
  std::vector<char> external;
  // outline_index[k]: the index of vertex k in the polygon's outline (every corner of a piece
  // is an outline vertex), the identity of its contacts from step to step.
  std::vector<int> outline_index;
  Vec2 centre = Vec2::Zero();  // mean of the vertices
  double radius = 0.0;         // bounding circle about `centre`
};

// A simple polygon (convex or not), stored about its area centroid, so that a body whose shape
// is a polygon with zero offset has its centre of mass at the body position. Build it with
// make_polygon, which validates the outline and computes the pieces.
struct Polygon {
  std::vector<Vec2> outline;  // counter-clockwise, about the area centroid
  std::vector<ConvexPiece> pieces;
  double radius = 0.0;  // bounding radius about the centroid (broad phase)
};

// Validates an outline and throws InputError naming the problem: fewer than 3 vertices, a
// vertex that is NaN or infinite, two consecutive vertices that coincide, a vertex collinear
// with its neighbours (zero turn or a fold back), edges that cross or touch
// (self-intersection), a clockwise outline. `what` prefixes the message.
void check_outline(const std::vector<Vec2>& outline, const std::string& what = "polygon");

// Area centroid of a valid counter-clockwise outline (Green's theorem).
Vec2 outline_centroid(const std::vector<Vec2>& outline);

// Validates `outline` (any frame), moves it to its area centroid and splits it into convex
// pieces. `centroid`, when given, receives the centroid in the input frame (where to put the
// body to reproduce the input placement).
Polygon make_polygon(const std::vector<Vec2>& outline, Vec2* centroid = nullptr);

// True when the outline has no reflex vertex (one convex piece).
bool is_convex(const Polygon& polygon);

// Area, and polar moment of area about the centroid (integral of |x|^2 over the solid), exact
// for the outline by Green's theorem.
double polygon_area(const std::vector<Vec2>& outline);
double polygon_polar_moment(const std::vector<Vec2>& outline);

// Convex hull of a point set, counter-clockwise (Andrew's monotone chain), without collinear
// points.
std::vector<Vec2> convex_hull(std::vector<Vec2> points);

// Mean caliper (Feret) diameter: the width averaged over all directions, equal by Cauchy's
// formula to the perimeter of the convex hull over pi (the diameter for a disk).
double mean_caliper_diameter(const Polygon& polygon);

}  // namespace moreau
