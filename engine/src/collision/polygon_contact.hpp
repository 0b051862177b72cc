#pragma once
// Narrow phase of the 2D polygonal shapes (engine-internal): convex pieces against convex
// pieces, disks and half-spaces (walls). Each function appends the point pairs whose gap is
// below the margin; narrow_phase.cpp turns them into Contacts.
//
// Each pair of convex pieces is the contact problem of Krabbenhoft/NURBS chapter eq. 4.1-4.2
// with the polygon outline in place of the NURBS boundary: a contact point on one particle, its
// closest point on the other, the normal n and the signed gap g = (x - y).n. The chapter's
// knot-to-surface contacts put a contact at every knot within reach of the other surface; here
// every vertex of either piece whose signed distance to the other piece is below the margin is
// a contact (the vertex-within-margin rule, docs/polygons.md), at its closest point on the
// other piece's part of the outline, so that no corner near a face can pass through it within
// a step unconstrained. One contact of each pair realises the pair's exact signed distance
// (minus the penetration depth along the axis of least overlap when overlapping). Each contact
// carries the outline vertex that produced it (PointPair::feature), its identity from step to
// step; contacts of a pair that coincide (kMergeFraction of the margin) are one.
#include <vector>

#include "moreau/model/polygon.hpp"

namespace moreau::polygon_contact {

struct PointPair {
  Vec2 normal;   // unit, from side a to side b
  Vec2 point_a;  // on side a's outline
  Vec2 point_b;  // on side b's outline
  double gap;    // (point_b - point_a).normal, m
  // What produced it (Contact::feature): outline vertex k of side a is k, of side b
  // (side a's vertex count) + k; a pair's exact contact away from every vertex, and a disk's
  // closest point on a piece, the vertex count of both sides + the piece pair's index.
  int feature = -1;
};

// Rigid placement x_world = rotation x_local + translation.
struct Placement {
  Eigen::Matrix2d rotation = Eigen::Matrix2d::Identity();
  Vec2 translation = Vec2::Zero();
};

void polygon_polygon(const Polygon& a, const Placement& pa, const Polygon& b, const Placement& pb,
                     double margin, std::vector<PointPair>& out);

// Disk (side a, centre and radius in the world) against a polygon (side b): per piece the
// closest point, then every corner within the margin of the circle.
void disk_polygon(const Vec2& centre, double radius, const Polygon& b, const Placement& pb,
                  double margin, std::vector<PointPair>& out);

// Polygon (side a) against the solid half-plane {x : normal.(x - point) <= 0} (side b): every
// outline vertex below the margin, in vertex order.
void polygon_halfspace(const Polygon& a, const Placement& pa, const Vec2& point, const Vec2& normal,
                       double margin, std::vector<PointPair>& out);

// A 2D box (rectangle of the given half extents) as a polygon, for box-polygon pairs.
Polygon box_polygon(const Vec2& half_extents);

}  // namespace moreau::polygon_contact
