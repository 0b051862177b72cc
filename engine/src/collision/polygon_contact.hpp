#pragma once
// Narrow phase of the 2D polygonal shapes (engine-internal): convex pieces against convex
// pieces, disks and half-spaces (walls). Each function appends the point pairs whose gap is
// below the margin; narrow_phase.cpp turns them into Contacts.
//
// Each pair of convex pieces is the contact problem of Krabbenhoft/NURBS chapter eq. 4.1-4.2
// with the polygon outline in place of the NURBS boundary: a contact point on one particle, its
// closest point on the other, the normal n and the signed gap g = (x - y).n. For two pieces, one
// reported pair realises their exact signed distance (Euclidean distance when apart, minus the
// penetration depth along the separating axis of least overlap when overlapping). Where the
// two faces that meet are nearly parallel, the far end of their overlap is reported as well
// (its gap measured along the same normal, kept when below the margin), so that a face resting
// on a face carries two contacts and is statically determinate, as the several knot-to-surface
// contacts of the paper along a face are; the two ends come in the order of their position
// along the face, whichever is deeper.
#include <vector>

#include "moreau/model/polygon.hpp"

namespace moreau::polygon_contact {

struct PointPair {
  Vec2 normal;   // unit, from side a to side b
  Vec2 point_a;  // on side a's outline
  Vec2 point_b;  // on side b's outline
  double gap;    // (point_b - point_a).normal, m
};

// Rigid placement x_world = rotation x_local + translation.
struct Placement {
  Eigen::Matrix2d rotation = Eigen::Matrix2d::Identity();
  Vec2 translation = Vec2::Zero();
};

void polygon_polygon(const Polygon& a, const Placement& pa, const Polygon& b, const Placement& pb,
                     double margin, std::vector<PointPair>& out);

// Disk (side a, centre and radius in the world) against a polygon (side b).
void disk_polygon(const Vec2& centre, double radius, const Polygon& b, const Placement& pb,
                  double margin, std::vector<PointPair>& out);

// Polygon (side a) against the solid half-plane {x : normal.(x - point) <= 0} (side b).
void polygon_halfspace(const Polygon& a, const Placement& pa, const Vec2& point, const Vec2& normal,
                       double margin, std::vector<PointPair>& out);

// A 2D box (rectangle of the given half extents) as a polygon, for box-polygon pairs.
Polygon box_polygon(const Vec2& half_extents);

}  // namespace moreau::polygon_contact
