#pragma once
// Contact geometry attached to a rigid body. All shapes but the polygon are convex; their axes
// are the body's axes and their centre sits at `offset` in the body frame.
#include <string>
#include <variant>

#include "moreau/core/types.hpp"
#include "moreau/model/polygon.hpp"

namespace moreau {

// Sphere in 3D, disk in a 2D world. Radius 0 is a contact point (e.g. a point mass).
struct Sphere {
  double radius = 0.0;  // m
};

// The solid {x : normal . (x - c) <= 0} where c is the shape centre; `normal` (body frame,
// unit) points out of the solid. Meant for fixed or prescribed bodies (floors, walls).
struct HalfSpace {
  Vec3 normal = Vec3::UnitY();
};

// Solid rectangular box (rectangle in 2D) with the given half extents along the body axes.
struct Box {
  Vec3 half_extents = Vec3::Ones();  // m
};

// Segment of length 2 half_length along the body x axis, swept by a sphere of `radius`
// (a rod; radius 0 is a bare segment whose tips make contact).
struct Capsule {
  double half_length = 0.5;  // m
  double radius = 0.0;       // m
};

// Polygon (2D worlds only): a convex polygon or a non-convex particle made of convex pieces,
// see moreau/model/polygon.hpp; its centre is its area centroid.
using ShapeGeometry = std::variant<Sphere, HalfSpace, Box, Capsule, Polygon>;

struct Shape {
  ShapeGeometry geometry = Sphere{};
  Vec3 offset = Vec3::Zero();  // shape centre in the body frame, m
};

std::string shape_name(const ShapeGeometry& geometry);

// Radius of the smallest ball about the shape centre that holds the shape; infinite for a
// half-space. Used by the broad phase.
double bounding_radius(const ShapeGeometry& geometry);

// Mass properties of a homogeneous solid of the given density: mass and principal inertia
// about the shape centre (body axes). A 2D world treats disks and boxes as prisms of unit
// thickness, and so polygons, whose mass and polar moment come exactly from their outline.
// Throws InputError for shapes without a volume (half-space, zero radius) and for a polygon
// in a 3D world.
struct MassProperties {
  double mass = 0.0;
  Mat3 inertia = Mat3::Zero();
};
MassProperties mass_properties(const ShapeGeometry& geometry, double density, Dimension dimension);

}  // namespace moreau
