// Narrow phase: closest points of convex shape pairs. Each pair type is written once for a
// canonical order (sphere < capsule < box < polygon < half-space, then the lower body index);
// the dispatcher swaps the bodies into that order and flips the normal back, so the output
// normal always points from the caller's body_a to its body_b. Contacts with gap < margin are
// kept (strictly below, so touching shapes at margin 0 make no contact). The 2D polygon pairs
// are in polygon_contact.cpp.
#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <type_traits>

#include "moreau/collision/collision_detector.hpp"
#include "moreau/core/error.hpp"
#include "polygon_contact.hpp"

namespace moreau {
namespace {

// Squared distance below which two closest points are treated as coincident and the normal
// comes from the shapes' geometry instead of their difference.
constexpr double kCoincident = 1e-24;
// |u x v|^2 below which two capsule axes count as parallel (angle below 1e-6 rad). Resting
// parallel rods then get two contacts at the ends of their overlap; the gap error this makes
// for rods crossing at a smaller angle is below overlap length x 1e-6.
constexpr double kParallelSine2 = 1e-12;
// Overlaps of parallel capsules shorter than this fraction of their lengths give one contact.
constexpr double kOverlapFraction = 1e-9;

// Placement of one shape in the world.
struct Pose {
  Vec3 centre;
  Mat3 rotation;
};

Pose shape_pose(const RigidBody& body) {
  Pose p;
  p.rotation = body.orientation.toRotationMatrix();
  p.centre = body.position + p.rotation * body.shape.offset;
  return p;
}

// Canonical rank of a shape type; pairs are evaluated with the lower rank as side a.
int rank(const ShapeGeometry& g) {
  if (std::holds_alternative<Sphere>(g)) return 0;
  if (std::holds_alternative<Capsule>(g)) return 1;
  if (std::holds_alternative<Box>(g)) return 2;
  if (std::holds_alternative<Polygon>(g)) return 3;
  return 4;
}

// Collects the contacts of one canonical pair; `normal` points from the canonical side a to b.
class Emitter {
 public:
  Emitter(std::vector<Contact>& out, int body_a, int body_b, bool swapped, double margin,
          Dimension dimension)
      : out_(out),
        body_a_(body_a),
        body_b_(body_b),
        swapped_(swapped),
        margin_(margin),
        dimension_(dimension) {}

  double margin() const { return margin_; }
  bool planar() const { return dimension_ == Dimension::two; }

  // Closest points on the two surfaces and the signed gap between them.
  void emit(const Vec3& normal, const Vec3& point_a, const Vec3& point_b, double gap,
            int feature = -1) {
    if (!(gap < margin_)) return;
    Contact c;
    c.feature = feature;
    c.body_a = body_a_;
    c.body_b = body_b_;
    c.normal = swapped_ ? Vec3(-normal) : normal;
    c.point = 0.5 * (point_a + point_b);
    c.gap = gap;
    complete_frame(c, dimension_);
    out_.push_back(c);
  }

  // Two balls (centres p_a, p_b, radii r_a, r_b); `fallback` is the normal used when the centres
  // coincide.
  void balls(const Vec3& p_a, double r_a, const Vec3& p_b, double r_b, const Vec3& fallback) {
    const Vec3 d = p_b - p_a;
    const double d2 = d.squaredNorm();
    const double distance = std::sqrt(d2);
    const Vec3 n = d2 > kCoincident ? Vec3(d / distance) : fallback;
    emit(n, p_a + r_a * n, p_b - r_b * n, distance - r_a - r_b);
  }

 private:
  std::vector<Contact>& out_;
  int body_a_;
  int body_b_;
  bool swapped_;
  double margin_;
  Dimension dimension_;
};

// A unit vector perpendicular to u, in the xy plane in a 2D world.
Vec3 perpendicular(const Vec3& u, bool planar) {
  if (planar) return Vec3(-u.y(), u.x(), 0.0).normalized();
  Contact frame;
  frame.normal = u;
  complete_frame(frame, Dimension::three);
  return frame.tangent1;
}

// Ball about point c (radius r) against the solid half-space {x : m.(x - h) <= 0}.
void ball_halfspace(Emitter& e, const Vec3& c, double r, const Vec3& h, const Vec3& m) {
  const double height = m.dot(c - h);
  e.emit(-m, c - r * m, c - height * m, height - r);
}

void sphere_sphere(Emitter& e, const Pose& a, const Sphere& sa, const Pose& b, const Sphere& sb) {
  e.balls(a.centre, sa.radius, b.centre, sb.radius, Vec3::UnitX());
}

void sphere_halfspace(Emitter& e, const Pose& a, const Sphere& s, const Pose& b,
                      const HalfSpace& h) {
  ball_halfspace(e, a.centre, s.radius, b.centre, b.rotation * h.normal);
}

void sphere_box(Emitter& e, const Pose& a, const Sphere& s, const Pose& b, const Box& box) {
  const Vec3 q = b.rotation.transpose() * (a.centre - b.centre);  // sphere centre, box frame
  const Vec3 clamped = q.cwiseMax(-box.half_extents).cwiseMin(box.half_extents);
  if (clamped != q) {
    e.balls(a.centre, s.radius, b.centre + b.rotation * clamped, 0.0, Vec3::UnitX());
    return;
  }
  // Centre inside: leave through the nearest face (lowest axis on ties). A 2D box is a
  // rectangle, so its z faces are not candidates.
  const int axes = e.planar() ? 2 : 3;
  int axis = 0;
  double depth = box.half_extents(0) - std::abs(q(0));
  for (int k = 1; k < axes; ++k) {
    const double dk = box.half_extents(k) - std::abs(q(k));
    if (dk < depth) {
      depth = dk;
      axis = k;
    }
  }
  const double side = q(axis) < 0.0 ? -1.0 : 1.0;
  Vec3 face = q;
  face(axis) = side * box.half_extents(axis);
  const Vec3 outward = side * b.rotation.col(axis);  // box towards the sphere
  e.emit(-outward, a.centre + s.radius * outward, b.centre + b.rotation * face, -depth - s.radius);
}

struct Segment {
  Vec3 centre;
  Vec3 axis;  // unit
  double half_length;
  Vec3 at(double t) const { return centre + t * axis; }
  // Parameter of the point of the segment closest to p.
  double closest(const Vec3& p) const {
    return std::clamp(axis.dot(p - centre), -half_length, half_length);
  }
};

Segment capsule_segment(const Pose& p, const Capsule& c) {
  return Segment{p.centre, p.rotation.col(0), c.half_length};
}

void sphere_capsule(Emitter& e, const Pose& a, const Sphere& s, const Pose& b, const Capsule& c) {
  const Segment seg = capsule_segment(b, c);
  e.balls(a.centre, s.radius, seg.at(seg.closest(a.centre)), c.radius,
          perpendicular(seg.axis, e.planar()));
}

void capsule_halfspace(Emitter& e, const Pose& a, const Capsule& c, const Pose& b,
                       const HalfSpace& h) {
  const Segment seg = capsule_segment(a, c);
  const Vec3 m = b.rotation * h.normal;
  ball_halfspace(e, seg.at(-seg.half_length), c.radius, b.centre, m);
  if (seg.half_length > 0.0) ball_halfspace(e, seg.at(seg.half_length), c.radius, b.centre, m);
}

// Segment-segment closest points (Ericson, Real-Time Collision Detection, Sec. 5.1.9, for unit
// directions). Parallel segments whose projections overlap get two contacts, at the two ends of
// the overlap, so that a rod lying along another is supported against rolling over.
void capsule_capsule(Emitter& e, const Pose& a, const Capsule& ca, const Pose& b,
                     const Capsule& cb) {
  const Segment sa = capsule_segment(a, ca);
  const Segment sb = capsule_segment(b, cb);
  const Vec3 r = sa.centre - sb.centre;
  const double cos_ab = sa.axis.dot(sb.axis);
  const double c = sa.axis.dot(r);
  const double f = sb.axis.dot(r);
  const double sine2 = sa.axis.cross(sb.axis).squaredNorm();

  // Fallback normal for intersecting axes: across both axes in 3D, across a's axis in 2D;
  // oriented from a to b where the centres differ.
  Vec3 across = e.planar() || sine2 <= kParallelSine2 ? perpendicular(sa.axis, e.planar())
                                                      : sa.axis.cross(sb.axis).normalized();
  if (across.dot(sb.centre - sa.centre) < 0.0) across = -across;

  if (sine2 <= kParallelSine2) {
    // b's extent projected on a's axis, relative to a's centre.
    const double lo = std::max(-sa.half_length, -c - sb.half_length);
    const double hi = std::min(sa.half_length, -c + sb.half_length);
    if (hi - lo > kOverlapFraction * (sa.half_length + sb.half_length)) {
      for (const double s : {lo, hi}) {
        const Vec3 p = sa.at(s);
        e.balls(p, ca.radius, sb.at(sb.closest(p)), cb.radius, across);
      }
      return;
    }
    // Disjoint projections: the closest points are at facing ends.
    const double s = std::clamp(0.5 * (lo + hi), -sa.half_length, sa.half_length);
    const Vec3 p = sa.at(s);
    e.balls(p, ca.radius, sb.at(sb.closest(p)), cb.radius, across);
    return;
  }
  // Unconstrained minimiser of |r + s u - t v|^2, then clamp t and re-solve s.
  double s = std::clamp((cos_ab * f - c) / sine2, -sa.half_length, sa.half_length);
  double t = cos_ab * s + f;
  if (t < -sb.half_length || t > sb.half_length) {
    t = std::clamp(t, -sb.half_length, sb.half_length);
    s = std::clamp(cos_ab * t - c, -sa.half_length, sa.half_length);
  }
  e.balls(sa.at(s), ca.radius, sb.at(t), cb.radius, across);
}

// Corners of the box below the margin, deepest first kept: at most 4 in 3D (a face), 2 in 2D
// (an edge), reported in corner order.
void box_halfspace(Emitter& e, const Pose& a, const Box& box, const Pose& b, const HalfSpace& h) {
  const Vec3 m = b.rotation * h.normal;
  const int corners = e.planar() ? 4 : 8;
  const std::size_t keep = e.planar() ? 2 : 4;
  std::array<Vec3, 8> position;
  std::array<double, 8> height;
  std::array<int, 8> below;
  std::size_t count = 0;
  for (int k = 0; k < corners; ++k) {
    const Vec3 local((k & 1 ? 1.0 : -1.0) * box.half_extents.x(),
                     (k & 2 ? 1.0 : -1.0) * box.half_extents.y(),
                     e.planar() ? 0.0 : (k & 4 ? 1.0 : -1.0) * box.half_extents.z());
    position[k] = a.centre + a.rotation * local;
    height[k] = m.dot(position[k] - b.centre);
    if (height[k] < e.margin()) below[count++] = k;
  }
  if (count > keep) {
    std::stable_sort(below.begin(), below.begin() + count,
                     [&](int i, int j) { return height[i] < height[j]; });
    count = keep;
    std::sort(below.begin(), below.begin() + count);
  }
  for (std::size_t i = 0; i < count; ++i) {
    const int k = below[i];
    e.emit(-m, position[k], position[k] - height[k] * m, height[k]);
  }
}

// 2D polygon pairs (polygon_contact.cpp), placed by the in-plane part of the poses.
polygon_contact::Placement placement(const Pose& p) {
  return {p.rotation.topLeftCorner<2, 2>(), p.centre.head<2>()};
}

void emit_pairs(Emitter& e, const std::vector<polygon_contact::PointPair>& pairs) {
  auto lift = [](const Vec2& v) { return Vec3(v.x(), v.y(), 0.0); };
  for (const auto& p : pairs)
    e.emit(lift(p.normal), lift(p.point_a), lift(p.point_b), p.gap, p.feature);
}

void sphere_polygon(Emitter& e, const Pose& a, const Sphere& s, const Pose& b, const Polygon& p) {
  std::vector<polygon_contact::PointPair> pairs;
  polygon_contact::disk_polygon(a.centre.head<2>(), s.radius, p, placement(b), e.margin(), pairs);
  emit_pairs(e, pairs);
}

void polygon_polygon(Emitter& e, const Pose& a, const Polygon& pa, const Pose& b,
                     const Polygon& pb) {
  std::vector<polygon_contact::PointPair> pairs;
  polygon_contact::polygon_polygon(pa, placement(a), pb, placement(b), e.margin(), pairs);
  emit_pairs(e, pairs);
}

void polygon_halfspace(Emitter& e, const Pose& a, const Polygon& p, const Pose& b,
                       const HalfSpace& h) {
  std::vector<polygon_contact::PointPair> pairs;
  const Vec3 m = b.rotation * h.normal;
  polygon_contact::polygon_halfspace(p, placement(a), b.centre.head<2>(),
                                     Vec2(m.x(), m.y()).normalized(), e.margin(), pairs);
  emit_pairs(e, pairs);
}

std::string body_label(const World& world, int index) {
  std::string label = "body " + std::to_string(index);
  if (!world.bodies[index].name.empty()) label += " ('" + world.bodies[index].name + "')";
  return label;
}

}  // namespace

void sphere_sphere_contact(int body_a, const Vec3& centre_a, double radius_a, int body_b,
                           const Vec3& centre_b, double radius_b, double margin,
                           Dimension dimension, std::vector<Contact>& out) {
  // The lower body index goes first, as narrow_phase orders two shapes of one type.
  const bool swapped = body_a > body_b;
  Emitter emitter(out, body_a, body_b, swapped, margin, dimension);
  if (swapped) {
    emitter.balls(centre_b, radius_b, centre_a, radius_a, Vec3::UnitX());
  } else {
    emitter.balls(centre_a, radius_a, centre_b, radius_b, Vec3::UnitX());
  }
}

void narrow_phase(const World& world, int body_a, int body_b, double margin,
                  std::vector<Contact>& out) {
  const RigidBody* first = &world.bodies[body_a];
  const RigidBody* second = &world.bodies[body_b];
  // Shapes of one type go lower body index first, so that (a, b) and (b, a) give the same
  // contacts in the same order, only with flipped normals.
  const int rank_a = rank(first->shape.geometry), rank_b = rank(second->shape.geometry);
  const bool swapped = rank_a > rank_b || (rank_a == rank_b && body_a > body_b);
  if (swapped) std::swap(first, second);
  Emitter emitter(out, body_a, body_b, swapped, margin, world.dimension);
  const Pose pa = shape_pose(*first);
  const Pose pb = shape_pose(*second);

  const bool handled = std::visit(
      [&](const auto& ga, const auto& gb) -> bool {
        using A = std::decay_t<decltype(ga)>;
        using B = std::decay_t<decltype(gb)>;
        if constexpr (std::is_same_v<A, Sphere> && std::is_same_v<B, Sphere>) {
          sphere_sphere(emitter, pa, ga, pb, gb);
        } else if constexpr (std::is_same_v<A, Sphere> && std::is_same_v<B, HalfSpace>) {
          sphere_halfspace(emitter, pa, ga, pb, gb);
        } else if constexpr (std::is_same_v<A, Sphere> && std::is_same_v<B, Box>) {
          sphere_box(emitter, pa, ga, pb, gb);
        } else if constexpr (std::is_same_v<A, Sphere> && std::is_same_v<B, Capsule>) {
          sphere_capsule(emitter, pa, ga, pb, gb);
        } else if constexpr (std::is_same_v<A, Capsule> && std::is_same_v<B, HalfSpace>) {
          capsule_halfspace(emitter, pa, ga, pb, gb);
        } else if constexpr (std::is_same_v<A, Capsule> && std::is_same_v<B, Capsule>) {
          capsule_capsule(emitter, pa, ga, pb, gb);
        } else if constexpr (std::is_same_v<A, Box> && std::is_same_v<B, HalfSpace>) {
          box_halfspace(emitter, pa, ga, pb, gb);
        } else if constexpr (std::is_same_v<A, Sphere> && std::is_same_v<B, Polygon>) {
          if (!emitter.planar()) return false;  // polygons are 2D shapes
          sphere_polygon(emitter, pa, ga, pb, gb);
        } else if constexpr (std::is_same_v<A, Box> && std::is_same_v<B, Polygon>) {
          if (!emitter.planar()) return false;
          const Vec2 half(ga.half_extents.x(), ga.half_extents.y());
          polygon_polygon(emitter, pa, polygon_contact::box_polygon(half), pb, gb);
        } else if constexpr (std::is_same_v<A, Polygon> && std::is_same_v<B, Polygon>) {
          if (!emitter.planar()) return false;
          polygon_polygon(emitter, pa, ga, pb, gb);
        } else if constexpr (std::is_same_v<A, Polygon> && std::is_same_v<B, HalfSpace>) {
          if (!emitter.planar()) return false;
          polygon_halfspace(emitter, pa, ga, pb, gb);
        } else {
          return false;
        }
        return true;
      },
      first->shape.geometry, second->shape.geometry);
  if (!handled)
    throw InputError("narrow phase: no contact model for the pair " +
                     shape_name(world.bodies[body_a].shape.geometry) + " (" +
                     body_label(world, body_a) + ") and " +
                     shape_name(world.bodies[body_b].shape.geometry) + " (" +
                     body_label(world, body_b) + ")");
}

}  // namespace moreau
