// 2D polygons and non-convex particles: mass properties against closed forms and numerical
// integration, narrow-phase gaps, normals and points against brute force on densely sampled
// outlines, several contacts per pair (a face on a wall or on a face), pair antisymmetry, the
// broad phase, the shape families, VTK output and bad input.
#define BOOST_TEST_MODULE polygon
#include "moreau/model/polygon.hpp"

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <limits>
#include <numbers>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "moreau/collision/collision_detector.hpp"
#include "moreau/core/error.hpp"
#include "moreau/io/vtk_writer.hpp"
#include "moreau/model/shape.hpp"
#include "moreau/model/shape_families.hpp"
#include "moreau/model/world.hpp"
#include "moreau/variational/shear_history.hpp"
#include "test_support.hpp"

namespace moreau {
namespace {

using std::numbers::pi;

// Closed forms and exact geometry agree up to a few roundings of O(1) numbers.
constexpr double kTol = 1e-12;

double cross(const Vec2& a, const Vec2& b) { return a.x() * b.y() - a.y() * b.x(); }

Polygon regular(int corners, double circumradius, double phase = 0.0) {
  std::vector<Vec2> outline;
  for (int k = 0; k < corners; ++k) {
    const double phi = phase + 2.0 * pi * k / corners;
    outline.emplace_back(circumradius * std::cos(phi), circumradius * std::sin(phi));
  }
  return make_polygon(outline);
}

// A U-shaped (non-convex) particle: two legs of width 1 and height 2 joined by a 3 x 1 base.
Polygon u_shape() {
  return make_polygon({Vec2(0, 0), Vec2(3, 0), Vec2(3, 3), Vec2(2, 3), Vec2(2, 1), Vec2(1, 1),
                       Vec2(1, 3), Vec2(0, 3)});
}

World planar_world() {
  World world;
  world.dimension = Dimension::two;
  world.gravity = Vec3(0.0, -9.81, 0.0);
  return world;
}

int add(World& world, const ShapeGeometry& geometry, const Vec2& position, double angle = 0.0,
        Motion motion = Motion::dynamic) {
  RigidBody body;
  body.name = "p";
  body.name += std::to_string(world.bodies.size());
  body.motion = motion;
  body.position = Vec3(position.x(), position.y(), 0.0);
  body.orientation = Quat(Eigen::AngleAxisd(angle, Vec3::UnitZ()));
  body.shape.geometry = geometry;
  return world.add_body(body);
}

int add_floor(World& world, double height = 0.0) {
  return add(world, HalfSpace{Vec3::UnitY()}, Vec2(0.0, height), 0.0, Motion::fixed);
}

std::vector<Contact> contacts_between(const World& world, int a, int b, double margin) {
  std::vector<Contact> out;
  narrow_phase(world, a, b, margin, out);
  return out;
}

// The outline of a polygon body in the world.
std::vector<Vec2> world_outline(const RigidBody& body) {
  std::vector<Vec2> out;
  const Mat3 r = body.orientation.toRotationMatrix();
  for (const Vec2& v : std::get<Polygon>(body.shape.geometry).outline) {
    const Vec3 w = body.position + r * Vec3(v.x(), v.y(), 0.0);
    out.emplace_back(w.x(), w.y());
  }
  return out;
}

// Points along the outline, at most `spacing` apart (every vertex included).
std::vector<Vec2> sample(const std::vector<Vec2>& outline, double spacing) {
  std::vector<Vec2> out;
  for (std::size_t k = 0; k < outline.size(); ++k) {
    const Vec2 a = outline[k], b = outline[(k + 1) % outline.size()];
    const int steps = std::max(1, static_cast<int>(std::ceil((b - a).norm() / spacing)));
    for (int s = 0; s < steps; ++s) out.push_back(a + (b - a) * (double(s) / steps));
  }
  return out;
}

double distance_to_outline(const std::vector<Vec2>& outline, const Vec2& x) {
  double best = std::numeric_limits<double>::infinity();
  for (std::size_t k = 0; k < outline.size(); ++k) {
    const Vec2 a = outline[k], d = outline[(k + 1) % outline.size()] - a;
    const double t = std::clamp(d.dot(x - a) / d.squaredNorm(), 0.0, 1.0);
    best = std::min(best, (a + t * d - x).norm());
  }
  return best;
}

// Crossing-number point-in-polygon test.
bool inside(const std::vector<Vec2>& outline, const Vec2& x) {
  bool in = false;
  for (std::size_t i = 0, j = outline.size() - 1; i < outline.size(); j = i++) {
    const Vec2 &a = outline[i], &b = outline[j];
    if ((a.y() > x.y()) != (b.y() > x.y()) &&
        x.x() < (b.x() - a.x()) * (x.y() - a.y()) / (b.y() - a.y()) + a.x())
      in = !in;
  }
  return in;
}

double perimeter(const std::vector<Vec2>& outline) {
  double sum = 0.0;
  for (std::size_t k = 0; k < outline.size(); ++k)
    sum += (outline[(k + 1) % outline.size()] - outline[k]).norm();
  return sum;
}

double support(const std::vector<Vec2>& outline, const Vec2& d) {
  double best = -std::numeric_limits<double>::infinity();
  for (const Vec2& v : outline) best = std::max(best, d.dot(v));
  return best;
}

// Overlap of two convex outlines along the unit direction d: h_A(d) + h_B(-d). Its minimum
// over d is the penetration depth; it is negative along a separating direction.
double overlap_along(const std::vector<Vec2>& a, const std::vector<Vec2>& b, const Vec2& d) {
  return support(a, d) + support(b, -d);
}

// Outward unit normals of the edges of an outline (counter-clockwise).
std::vector<Vec2> edge_normals(const std::vector<Vec2>& outline) {
  std::vector<Vec2> out;
  for (std::size_t k = 0; k < outline.size(); ++k) {
    const Vec2 e = outline[(k + 1) % outline.size()] - outline[k];
    out.push_back(Vec2(e.y(), -e.x()).normalized());
  }
  return out;
}

// Index of the outline vertex at x (to 1e-9), or -1.
int vertex_index(const std::vector<Vec2>& outline, const Vec2& x) {
  for (std::size_t k = 0; k < outline.size(); ++k)
    if ((outline[k] - x).norm() <= 1e-9) return static_cast<int>(k);
  return -1;
}

bool is_one_of(const Vec2& n, const std::vector<Vec2>& normals, double sign) {
  return std::any_of(normals.begin(), normals.end(),
                     [&](const Vec2& m) { return (n - sign * m).norm() <= 1e-9; });
}

Vec2 in_plane(const Vec3& v) { return Vec2(v.x(), v.y()); }

bool message_has(const InputError& e, const std::string& part) {
  const bool found = std::string(e.what()).find(part) != std::string::npos;
  if (!found) BOOST_TEST_MESSAGE("message was: " << e.what());
  return found;
}

void expect_outline_error(const std::vector<Vec2>& outline, const std::string& part) {
  BOOST_CHECK_EXCEPTION(make_polygon(outline), InputError,
                        [&](const InputError& e) { return message_has(e, part); });
}

}  // namespace

BOOST_AUTO_TEST_SUITE(mass_properties_of_polygons)

BOOST_AUTO_TEST_CASE(square_and_rectangle_match_closed_forms_and_the_box) {
  // Square of side a: m = rho a^2, I = m a^2 / 6 about the centre.
  const double a = 0.3, rho = 2500.0;
  const Polygon square =
      make_polygon({Vec2(1, 1), Vec2(1 + a, 1), Vec2(1 + a, 1 + a), Vec2(1, 1 + a)});
  const MassProperties m = mass_properties(square, rho, Dimension::two);
  BOOST_TEST(std::abs(m.mass - rho * a * a) <= kTol * m.mass);
  BOOST_TEST(std::abs(m.inertia(2, 2) - m.mass * a * a / 6.0) <= kTol * m.inertia(2, 2));
  // A 2 x 0.5 rectangle as a polygon and as a box.
  const Polygon rectangle =
      make_polygon({Vec2(-1, -0.25), Vec2(1, -0.25), Vec2(1, 0.25), Vec2(-1, 0.25)});
  const MassProperties p = mass_properties(rectangle, rho, Dimension::two);
  const MassProperties b = mass_properties(Box{Vec3(1.0, 0.25, 1.0)}, rho, Dimension::two);
  BOOST_TEST(std::abs(p.mass - b.mass) <= kTol * b.mass);
  BOOST_TEST(std::abs(p.inertia(2, 2) - b.inertia(2, 2)) <= kTol * b.inertia(2, 2));
}

BOOST_AUTO_TEST_CASE(right_triangle_centroid_and_polar_moment) {
  // Legs b along x and h along y: centroid (b/3, h/3), J_c = b h (b^2 + h^2) / 36.
  const double b = 0.6, h = 0.2;
  Vec2 centroid;
  const Polygon triangle = make_polygon({Vec2(0, 0), Vec2(b, 0), Vec2(0, h)}, &centroid);
  BOOST_TEST((centroid - Vec2(b / 3.0, h / 3.0)).norm() <= kTol);
  BOOST_TEST(std::abs(polygon_area(triangle.outline) - 0.5 * b * h) <= kTol);
  const double j = b * h * (b * b + h * h) / 36.0;
  BOOST_TEST(std::abs(polygon_polar_moment(triangle.outline) - j) <= kTol * j);
  const MassProperties m = mass_properties(triangle, 3.0, Dimension::two);
  BOOST_TEST(std::abs(m.inertia(2, 2) - 3.0 * j) <= kTol * j);
  BOOST_TEST(outline_centroid(triangle.outline).norm() <= kTol);
}

BOOST_AUTO_TEST_CASE(non_convex_shapes_against_numerical_integration) {
  // Midpoint rule on a grid of spacing h with a point-in-polygon test: only cells within h of
  // the outline can be misclassified, so the area error is below perimeter * h and the polar
  // moment error below R^2 perimeter * h (R the bounding radius).
  const ShapeFamilies families = make_shape_families();
  for (const std::size_t k : {0ul, 5ul, 11ul}) {
    for (const Polygon* polygon : {&families.non_convex[k], &families.angular[k]}) {
      const double r = polygon->radius;
      const int cells = 800;
      const double h = 2.0 * r / cells;
      double area = 0.0, moment = 0.0;
      Vec2 first = Vec2::Zero();
      for (int i = 0; i < cells; ++i)
        for (int j = 0; j < cells; ++j) {
          const Vec2 x(-r + (i + 0.5) * h, -r + (j + 0.5) * h);
          if (!inside(polygon->outline, x)) continue;
          area += h * h;
          moment += h * h * x.squaredNorm();
          first += h * h * x;
        }
      const double band = perimeter(polygon->outline) * h;
      BOOST_TEST(std::abs(area - polygon_area(polygon->outline)) <= band);
      BOOST_TEST(std::abs(moment - polygon_polar_moment(polygon->outline)) <= r * r * band);
      BOOST_TEST(first.norm() <= r * band,
                 "centroid at the origin, first moment " << first.transpose());
    }
  }
}

BOOST_AUTO_TEST_CASE(convex_pieces_tile_the_outline) {
  const ShapeFamilies families = make_shape_families();
  std::vector<Polygon> shapes = families.non_convex;
  shapes.push_back(u_shape());
  for (const Polygon& polygon : shapes) {
    BOOST_TEST(polygon.pieces.size() >= 2u);
    double area = 0.0;
    int external = 0;
    for (const ConvexPiece& piece : polygon.pieces) {
      const std::size_t n = piece.vertices.size();
      for (std::size_t k = 0; k < n; ++k) {
        const Vec2 u = piece.vertices[k] - piece.vertices[(k + n - 1) % n];
        const Vec2 v = piece.vertices[(k + 1) % n] - piece.vertices[k];
        BOOST_TEST(cross(u, v) > 0.0, "piece corner " << k << " is not strictly convex");
        external += piece.external[k];
        BOOST_TEST(piece.radius >= (piece.vertices[k] - piece.centre).norm());
        BOOST_REQUIRE(piece.outline_index.size() == n);
        BOOST_TEST((polygon.outline[piece.outline_index[k]] == piece.vertices[k]),
                   "piece corner " << k << " is not the outline vertex it names");
      }
      area += polygon_area(piece.vertices);
    }
    BOOST_TEST(std::abs(area - polygon_area(polygon.outline)) <= kTol * area);
    BOOST_TEST(external == static_cast<int>(polygon.outline.size()),
               "every outline edge belongs to exactly one piece");
  }
  BOOST_TEST(families.angular[3].pieces.size() == 1u);
  BOOST_TEST(is_convex(families.angular[3]));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(narrow_phase_against_brute_force)

// Random seeded placements of shape pairs drawn from `shapes`, apart or overlapping; the
// exact geometry is checked against outlines sampled every `spacing`.
struct PairCase {
  World world = planar_world();
  int a = 0, b = 0;
  std::vector<Vec2> outline_a, outline_b;
};

PairCase random_pair(const std::vector<Polygon>& shapes, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  PairCase c;
  const Polygon& pa = shapes[rng() % shapes.size()];
  const Polygon& pb = shapes[rng() % shapes.size()];
  const double reach = pa.radius + pb.radius;
  const double distance = reach * (0.4 + 0.8 * unit(rng));
  const double direction = 2.0 * pi * unit(rng);
  c.a = add(c.world, pa, Vec2(0.3, -0.2), 2.0 * pi * unit(rng));
  c.b =
      add(c.world, pb, Vec2(0.3, -0.2) + distance * Vec2(std::cos(direction), std::sin(direction)),
          2.0 * pi * unit(rng));
  c.outline_a = world_outline(c.world.bodies[c.a]);
  c.outline_b = world_outline(c.world.bodies[c.b]);
  return c;
}

// Sampled distance between two outlines that do not overlap: each sample of one outline to
// the other outline, both ways. Exceeds the distance by at most spacing / 2.
double sampled_distance(const std::vector<Vec2>& a, const std::vector<Vec2>& b, double spacing) {
  double best = std::numeric_limits<double>::infinity();
  for (const Vec2& x : sample(b, spacing)) best = std::min(best, distance_to_outline(a, x));
  for (const Vec2& x : sample(a, spacing)) best = std::min(best, distance_to_outline(b, x));
  return best;
}

bool overlapping(const std::vector<Vec2>& a, const std::vector<Vec2>& b, double spacing) {
  for (const Vec2& x : sample(b, spacing))
    if (inside(a, x)) return true;
  for (const Vec2& x : sample(a, spacing))
    if (inside(b, x)) return true;
  return false;
}

// Every contact: unit in-plane normal, its two points on the two outlines (to round-off).
void check_points_on_outlines(const PairCase& c, const std::vector<Contact>& contacts) {
  for (const Contact& k : contacts) {
    BOOST_TEST(std::abs(k.normal.norm() - 1.0) <= kTol);
    BOOST_TEST(k.normal.z() == 0.0);
    const Vec2 n = in_plane(k.normal);
    const Vec2 on_a = in_plane(k.point) - 0.5 * k.gap * n;
    const Vec2 on_b = in_plane(k.point) + 0.5 * k.gap * n;
    BOOST_TEST(distance_to_outline(c.outline_a, on_a) <= 1e-9, "point on a off its outline");
    BOOST_TEST(distance_to_outline(c.outline_b, on_b) <= 1e-9, "point on b off its outline");
  }
}

BOOST_AUTO_TEST_CASE(separated_pairs_convex_and_non_convex) {
  const ShapeFamilies families = make_shape_families();
  std::vector<Polygon> shapes = families.non_convex;
  shapes.insert(shapes.end(), families.angular.begin(), families.angular.end());
  std::mt19937_64 rng(13);
  const double spacing = 2e-4;  // shapes are about 1 wide
  int tested = 0;
  for (int trial = 0; trial < 400 && tested < 40; ++trial) {
    PairCase c = random_pair(shapes, rng);
    if (overlapping(c.outline_a, c.outline_b, spacing)) continue;
    const double distance = sampled_distance(c.outline_a, c.outline_b, spacing);
    if (distance > 0.4) continue;  // keep near pairs
    ++tested;
    const double margin = 0.5;
    const std::vector<Contact> contacts = contacts_between(c.world, c.a, c.b, margin);
    BOOST_TEST_REQUIRE(!contacts.empty());
    check_points_on_outlines(c, contacts);
    double least = std::numeric_limits<double>::infinity();
    for (const Contact& k : contacts) {
      least = std::min(least, k.gap);
      BOOST_TEST(k.gap >= distance - spacing, "no contact is closer than the outlines");
      BOOST_TEST(k.gap < margin);
    }
    BOOST_TEST(std::abs(least - distance) <= spacing,
               "least gap " << least << " vs sampled " << distance);
  }
  BOOST_TEST(tested >= 30);
}

BOOST_AUTO_TEST_CASE(overlapping_convex_pairs_give_the_penetration_depth) {
  const ShapeFamilies families = make_shape_families();
  std::mt19937_64 rng(29);
  const int directions = 200000;
  const double step = 2.0 * pi / directions;
  int tested = 0;
  for (int trial = 0; trial < 200 && tested < 25; ++trial) {
    PairCase c = random_pair(families.angular, rng);
    // Brute force: the least overlap over sampled directions. It exceeds the depth by at most
    // (R_a + R_b) * step (the overlap is Lipschitz in the angle with that constant).
    double depth = std::numeric_limits<double>::infinity();
    for (int k = 0; k < directions; ++k) {
      const Vec2 d(std::cos(k * step), std::sin(k * step));
      depth = std::min(depth, overlap_along(c.outline_a, c.outline_b, d));
    }
    if (depth <= 0.0) continue;  // apart
    ++tested;
    const std::vector<Contact> contacts = contacts_between(c.world, c.a, c.b, 0.0);
    BOOST_TEST_REQUIRE(!contacts.empty());
    const double tolerance = (families.angular[0].radius + families.angular[0].radius) * 2.0 * step;
    const Contact& deepest =
        *std::min_element(contacts.begin(), contacts.end(),
                          [](const Contact& x, const Contact& y) { return x.gap < y.gap; });
    BOOST_TEST(std::abs(deepest.gap + depth) <= tolerance,
               "gap " << deepest.gap << " depth " << depth);
    // Along the reported normal the shapes overlap by exactly -gap: it is the least-overlap axis.
    BOOST_TEST(std::abs(overlap_along(c.outline_a, c.outline_b, in_plane(deepest.normal)) +
                        deepest.gap) <= 1e-9);
    for (const Contact& k : contacts) BOOST_TEST(k.gap < 0.0);
  }
  BOOST_TEST(tested >= 15);
}

BOOST_AUTO_TEST_CASE(disk_against_polygon) {
  const ShapeFamilies families = make_shape_families();
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int trial = 0; trial < 60; ++trial) {
    World world = planar_world();
    const Polygon& shape = families.non_convex[trial % families.non_convex.size()];
    const double radius = 0.1 + 0.2 * unit(rng);
    const int disk =
        add(world, Sphere{radius}, Vec2(1.2 * (2 * unit(rng) - 1), 1.2 * (2 * unit(rng) - 1)));
    const int polygon = add(world, shape, Vec2::Zero(), 2 * pi * unit(rng));
    const std::vector<Vec2> outline = world_outline(world.bodies[polygon]);
    const Vec2 centre = in_plane(world.bodies[disk].position);
    const double to_outline = distance_to_outline(outline, centre);
    const bool centre_inside = inside(outline, centre);
    const std::vector<Contact> contacts = contacts_between(world, disk, polygon, 0.3);
    if (centre_inside) {
      // The depth is resolved per piece, always through the outline: the normal is minus the
      // outward normal of an outline edge, never across a diagonal between pieces.
      BOOST_TEST(!contacts.empty());
      for (const Contact& k : contacts)
        if (k.gap < -radius) BOOST_TEST(is_one_of(in_plane(k.normal), edge_normals(outline), -1.0));
      continue;
    }
    const double gap = to_outline - radius;
    if (gap >= 0.3) {
      BOOST_TEST(contacts.empty());
      continue;
    }
    BOOST_TEST_REQUIRE(!contacts.empty());
    double least = std::numeric_limits<double>::infinity();
    for (const Contact& k : contacts) {
      least = std::min(least, k.gap);
      const Vec2 on_polygon = in_plane(k.point) + 0.5 * k.gap * in_plane(k.normal);
      BOOST_TEST(distance_to_outline(outline, on_polygon) <= 1e-9);
      BOOST_TEST((in_plane(k.point) - 0.5 * k.gap * in_plane(k.normal) - centre).norm() - radius <=
                 1e-9);
    }
    BOOST_TEST(std::abs(least - gap) <= 1e-9);
  }
}

BOOST_AUTO_TEST_CASE(overlapping_non_convex_pairs_resolve_through_the_outlines) {
  // Overlaps of non-convex particles are resolved per pair of pieces, through the outlines:
  // each overlapping contact's normal is the outward normal of an outline edge of a or minus
  // one of b, or (a vertex inside the other particle whose nearest point on the outline is a
  // corner) it joins an outline vertex of a to one of b; never the normal of a diagonal.
  const ShapeFamilies families = make_shape_families();
  std::mt19937_64 rng(53);
  int overlaps = 0, corner_to_corner = 0;
  for (int trial = 0; trial < 80; ++trial) {
    PairCase c = random_pair(families.non_convex, rng);
    const std::vector<Vec2> normals_a = edge_normals(c.outline_a);
    const std::vector<Vec2> normals_b = edge_normals(c.outline_b);
    for (const Contact& k : contacts_between(c.world, c.a, c.b, 0.0)) {
      ++overlaps;
      const Vec2 n = in_plane(k.normal);
      if (is_one_of(n, normals_a, 1.0) || is_one_of(n, normals_b, -1.0)) continue;
      ++corner_to_corner;
      const Vec2 on_a = in_plane(k.point) - 0.5 * k.gap * n;
      const Vec2 on_b = in_plane(k.point) + 0.5 * k.gap * n;
      BOOST_TEST((vertex_index(c.outline_a, on_a) >= 0 && vertex_index(c.outline_b, on_b) >= 0),
                 "normal " << n.transpose() << " is no outline normal and joins no two corners");
    }
  }
  BOOST_TEST_MESSAGE(overlaps << " overlapping contacts, " << corner_to_corner
                              << " corner to corner");
  BOOST_TEST(overlaps > 20);
}

BOOST_AUTO_TEST_CASE(swapping_the_pair_flips_the_normal) {
  const ShapeFamilies families = make_shape_families();
  std::vector<Polygon> shapes = families.non_convex;
  shapes.insert(shapes.end(), families.angular.begin(), families.angular.end());
  std::mt19937_64 rng(41);
  int compared = 0;
  for (int trial = 0; trial < 60; ++trial) {
    PairCase c = random_pair(shapes, rng);
    const std::vector<Contact> ab = contacts_between(c.world, c.a, c.b, 0.2);
    const std::vector<Contact> ba = contacts_between(c.world, c.b, c.a, 0.2);
    BOOST_TEST_REQUIRE(ab.size() == ba.size());
    for (std::size_t k = 0; k < ab.size(); ++k) {
      BOOST_TEST((ab[k].normal + ba[k].normal).norm() <= kTol);
      BOOST_TEST(ab[k].gap == ba[k].gap);
      BOOST_TEST((ab[k].point - ba[k].point).norm() <= kTol);
      BOOST_TEST(ba[k].body_a == c.b);
      ++compared;
    }
    // The same placement with the bodies stored in the other order: the pair is evaluated
    // with the other polygon first, so this checks the geometry, not just the dispatcher.
    World swapped = planar_world();
    const int b = swapped.add_body(c.world.bodies[c.b]);
    const int a = swapped.add_body(c.world.bodies[c.a]);
    const std::vector<Contact> again = contacts_between(swapped, a, b, 0.2);
    BOOST_TEST(again.size() == ab.size());
    for (const Contact& k : ab) {
      const bool matched = std::any_of(again.begin(), again.end(), [&](const Contact& m) {
        return std::abs(m.gap - k.gap) <= 1e-12 && (m.normal - k.normal).norm() <= 1e-9 &&
               (m.point - k.point).norm() <= 1e-9;
      });
      BOOST_TEST(matched, "contact at " << k.point.transpose() << " gap " << k.gap
                                        << " not found with the bodies stored the other way");
    }
  }
  BOOST_TEST(compared > 20);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(several_contacts_per_pair)

BOOST_AUTO_TEST_CASE(square_resting_on_a_wall_has_two_contacts) {
  // A unit square whose bottom face is 1e-3 into the floor: two contacts at the bottom
  // corners, normal from the square into the floor, gap -1e-3.
  World world = planar_world();
  const int floor = add_floor(world);
  const int square = add(world, regular(4, std::sqrt(0.5), pi / 4), Vec2(2.0, 0.5 - 1e-3));
  const std::vector<Contact> contacts = contacts_between(world, square, floor, 0.0);
  BOOST_TEST_REQUIRE(contacts.size() == 2u);
  std::vector<double> xs;
  for (const Contact& c : contacts) {
    BOOST_TEST((c.normal - Vec3(0, -1, 0)).norm() <= kTol);
    BOOST_TEST(std::abs(c.gap + 1e-3) <= kTol);
    BOOST_TEST(std::abs(c.point.y() + 0.5e-3) <= kTol);
    xs.push_back(c.point.x());
  }
  std::sort(xs.begin(), xs.end());
  BOOST_TEST(std::abs(xs[0] - 1.5) <= kTol);
  BOOST_TEST(std::abs(xs[1] - 2.5) <= kTol);
  // The pair in the other order: the normal points out of the floor.
  for (const Contact& c : contacts_between(world, floor, square, 0.0))
    BOOST_TEST((c.normal - Vec3(0, 1, 0)).norm() <= kTol);
  // Lifted by 2e-3: no contact at margin 0, two at margin 5e-3 with gap 1e-3.
  world.bodies[square].position.y() = 0.5 + 1e-3;
  BOOST_TEST(contacts_between(world, square, floor, 0.0).empty());
  const std::vector<Contact> near = contacts_between(world, square, floor, 5e-3);
  BOOST_TEST_REQUIRE(near.size() == 2u);
  for (const Contact& c : near) BOOST_TEST(std::abs(c.gap - 1e-3) <= kTol);
}

BOOST_AUTO_TEST_CASE(tilted_square_on_a_wall_keeps_the_deepest_corner) {
  // Tilted by 0.01 rad: the low corner touches; the other bottom corner is sin(0.01) higher
  // and joins only when the margin exceeds its gap.
  World world = planar_world();
  const int floor = add_floor(world);
  const double tilt = 0.01;
  const double low = 0.5 * (std::cos(tilt) + std::sin(tilt));  // centre height over the low corner
  const int square = add(world, regular(4, std::sqrt(0.5), pi / 4), Vec2(0.0, low - 1e-4), tilt);
  const std::vector<Contact> touching = contacts_between(world, square, floor, 0.0);
  BOOST_TEST_REQUIRE(touching.size() == 1u);
  BOOST_TEST(std::abs(touching[0].gap + 1e-4) <= kTol);
  const std::vector<Contact> both = contacts_between(world, square, floor, 0.02);
  BOOST_TEST_REQUIRE(both.size() == 2u);
  const double far = std::max(both[0].gap, both[1].gap);
  BOOST_TEST(std::abs(far - (std::sin(tilt) - 1e-4)) <= 1e-12);
}

BOOST_AUTO_TEST_CASE(non_convex_particle_stands_on_both_legs) {
  // The U shape upside down stands on the tips of its two legs: every outline vertex below the
  // margin is a contact, so each leg tip gives its two corners, x = 0, 1, 2, 3 apart by 1.
  World world = planar_world();
  const int floor = add_floor(world);
  Vec2 centroid;
  const Polygon u = make_polygon(u_shape().outline, &centroid);
  const double tips = u.outline[2].y();  // (3, 3): the leg tips, highest before turning over
  const int body = add(world, u, Vec2(0.0, tips - 1e-3), pi);
  const std::vector<Contact> contacts = contacts_between(world, body, floor, 0.0);
  BOOST_TEST_REQUIRE(contacts.size() == 4u);
  std::vector<double> xs;
  for (const Contact& c : contacts) {
    BOOST_TEST(std::abs(c.gap + 1e-3) <= kTol);
    xs.push_back(c.point.x());
  }
  std::sort(xs.begin(), xs.end());
  for (int k = 0; k < 4; ++k) BOOST_TEST(std::abs(xs[k] - (xs[0] + k)) <= kTol);
}

BOOST_AUTO_TEST_CASE(face_on_face_gives_the_two_ends_of_the_overlap) {
  // A 1 x 1 square on a 4 x 1 plank (a polygon), sunk 1e-3, shifted so it overhangs nothing:
  // two contacts at the square's bottom corners. Shifted to overhang the plank's end by 0.3:
  // the ends of the overlap are the plank's corner and the square's inner corner.
  World world = planar_world();
  const int plank =
      add(world, make_polygon({Vec2(-2, -0.5), Vec2(2, -0.5), Vec2(2, 0.5), Vec2(-2, 0.5)}),
          Vec2::Zero(), 0.0, Motion::fixed);
  const int square = add(world, regular(4, std::sqrt(0.5), pi / 4), Vec2(0.7, 1.0 - 1e-3));
  for (const double shift : {0.7, 1.8}) {
    world.bodies[square].position.x() = shift;
    const std::vector<Contact> contacts = contacts_between(world, plank, square, 0.0);
    BOOST_TEST_REQUIRE(contacts.size() == 2u);
    std::vector<double> xs;
    for (const Contact& c : contacts) {
      BOOST_TEST((c.normal - Vec3::UnitY()).norm() <= kTol);
      BOOST_TEST(std::abs(c.gap + 1e-3) <= kTol);
      xs.push_back(c.point.x());
    }
    std::sort(xs.begin(), xs.end());
    BOOST_TEST(std::abs(xs[0] - (shift - 0.5)) <= kTol);
    BOOST_TEST(std::abs(xs[1] - std::min(shift + 0.5, 2.0)) <= kTol);
  }
  // Rocking by +-1e-3 rad (either end deeper): the two contacts keep their order (the order of
  // the square's vertices), so that contacts matched by their order within the pair stay the
  // same contacts.
  world.bodies[square].position.x() = 0.0;
  std::vector<double> first_x;
  for (const double tilt : {1e-3, -1e-3}) {
    world.bodies[square].orientation = Quat(Eigen::AngleAxisd(tilt, Vec3::UnitZ()));
    const std::vector<Contact> rocking = contacts_between(world, plank, square, 0.01);
    BOOST_TEST_REQUIRE(rocking.size() == 2u);
    first_x.push_back(rocking[0].point.x());
    const bool first_deeper = rocking[0].gap < rocking[1].gap;
    const bool left_deeper = (rocking[0].point.x() < rocking[1].point.x()) == first_deeper;
    BOOST_TEST(left_deeper == (tilt > 0.0), "the deeper end changes side");
  }
  BOOST_TEST(std::abs(first_x[0] - first_x[1]) <= 1e-2, "same corner first at either tilt");
  // A box body against a polygon goes through the same path.
  World mixed = planar_world();
  const int box = add(mixed, Box{Vec3(2.0, 0.5, 1.0)}, Vec2::Zero(), 0.0, Motion::fixed);
  const int on_box = add(mixed, regular(4, std::sqrt(0.5), pi / 4), Vec2(0.7, 1.0 - 1e-3));
  BOOST_TEST(contacts_between(mixed, box, on_box, 0.0).size() == 2u);
}

BOOST_AUTO_TEST_CASE(corner_to_corner_gives_one_contact_along_the_corners) {
  World world = planar_world();
  const int a = add(world, regular(4, 1.0), Vec2::Zero());    // corners on the axes
  const int b = add(world, regular(4, 1.0), Vec2(2.5, 0.0));  // corner at x = 1.5
  const std::vector<Contact> contacts = contacts_between(world, a, b, 1.0);
  BOOST_TEST_REQUIRE(contacts.size() == 1u);
  BOOST_TEST(std::abs(contacts[0].gap - 0.5) <= kTol);
  BOOST_TEST((contacts[0].normal - Vec3::UnitX()).norm() <= kTol);
  BOOST_TEST((contacts[0].point - Vec3(1.25, 0, 0)).norm() <= kTol);
}

BOOST_AUTO_TEST_SUITE_END()

// The vertex-within-margin rule (docs/polygons.md): every vertex of either particle whose
// signed distance to the other is below the margin is a contact, with its closest point on the
// other outline; checked against brute-force point-to-polygon distances.
BOOST_AUTO_TEST_SUITE(vertex_within_margin)

using narrow_phase_against_brute_force::check_points_on_outlines;
using narrow_phase_against_brute_force::overlapping;
using narrow_phase_against_brute_force::PairCase;
using narrow_phase_against_brute_force::random_pair;

// column_drop's collision margin, in mean diameters (the shapes are about 1 wide).
constexpr double kMargin = 0.18;

// Brute-force signed distance of x to a simple polygon: the distance to the nearest outline
// segment, negative inside.
double signed_distance(const std::vector<Vec2>& outline, const Vec2& x) {
  const double d = distance_to_outline(outline, x);
  return inside(outline, x) ? -d : d;
}

// A contact's two points, from its midpoint, normal and gap.
struct Points {
  Vec2 on_a, on_b, normal;
  double gap;
};

Points points_of(const Contact& k) {
  const Vec2 n = in_plane(k.normal);
  return {in_plane(k.point) - 0.5 * k.gap * n, in_plane(k.point) + 0.5 * k.gap * n, n, k.gap};
}

void check_no_duplicates(const std::vector<Contact>& contacts) {
  for (std::size_t i = 0; i < contacts.size(); ++i)
    for (std::size_t j = 0; j < i; ++j) {
      const Points p = points_of(contacts[i]), q = points_of(contacts[j]);
      BOOST_TEST(((p.on_a - q.on_a).norm() > 1e-9 || (p.on_b - q.on_b).norm() > 1e-9),
                 "contacts " << j << " and " << i << " coincide");
    }
}

// Contacts of the pair at outline vertex k of a (side 0) or of b (side 1).
std::vector<Points> at_vertex(const PairCase& c, const std::vector<Contact>& contacts, int side,
                              int k) {
  std::vector<Points> out;
  for (const Contact& contact : contacts) {
    const Points p = points_of(contact);
    if (side == 0 ? vertex_index(c.outline_a, p.on_a) == k : vertex_index(c.outline_b, p.on_b) == k)
      out.push_back(p);
  }
  return out;
}

// Moving b along the normal opens the contact of a vertex of a at the rate 1 (and moving a
// against it, that of a vertex of b): the normal points from a to b.
bool opens_along_the_normal(const PairCase& c, const Points& p, int side) {
  constexpr double shift = 1e-6;
  std::vector<Vec2> moved = side == 0 ? c.outline_b : c.outline_a;
  for (Vec2& v : moved) v += (side == 0 ? shift : -shift) * p.normal;
  const double opened = signed_distance(moved, side == 0 ? p.on_a : p.on_b);
  return std::abs(opened - (p.gap + shift)) <= 1e-9;
}

struct Tally {
  int vertices = 0, overlapping = 0, least_overlap = 0, merged = 0, coincident = 0;
};

void log_tally(const Tally& t) {
  BOOST_TEST_MESSAGE(t.vertices << " vertices within the margin, " << t.overlapping
                                << " inside the other particle, " << t.least_overlap
                                << " on the axis of least overlap instead, " << t.merged
                                << " merged with the corner inside them");
}

// polygon_contact.cpp's kMergeFraction: contacts of a pair whose points agree to this fraction
// of the margin, and normals to it, are one contact (the deeper).
constexpr double kMergeFraction = 0.05;

// Whether the contact of vertex k (gap s) was merged into a deeper one that coincides with it:
// a contact no shallower whose point on this side lies within the merge distance of the vertex
// (twice it: a group of coinciding contacts is connected pairwise).
bool merged_into_coinciding(const PairCase& c, const std::vector<Contact>& contacts, int side,
                            int k, double s) {
  const Vec2& vertex = side == 0 ? c.outline_a[k] : c.outline_b[k];
  return std::any_of(contacts.begin(), contacts.end(), [&](const Contact& contact) {
    const Points p = points_of(contact);
    return ((side == 0 ? p.on_a : p.on_b) - vertex).norm() <= 2.0 * kMergeFraction * kMargin &&
           p.gap <= s + 1e-9;
  });
}

// Every outline vertex of one side below the margin has a contact whose gap is the brute-force
// signed distance to the other outline (for two convex particles the pair's deepest contact, on
// the axis of least overlap, may stand in for it); other contacts of the vertex (with other
// pieces of a non-convex particle) are no deeper, and a vertex outside the other particle never
// reports an overlap.
void check_vertices_found(const PairCase& c, const std::vector<Contact>& contacts, int side,
                          bool convex, Tally& tally) {
  const std::vector<Vec2>& own = side == 0 ? c.outline_a : c.outline_b;
  const std::vector<Vec2>& other = side == 0 ? c.outline_b : c.outline_a;
  for (int k = 0; k < static_cast<int>(own.size()); ++k) {
    const double s = signed_distance(other, own[k]);
    // The contacts at the vertex, less those of a vertex of the other side whose closest
    // point it is (their gap is that vertex's distance). A vertex outside whose closest point
    // is a corner inside it shares that corner's two points: the deeper contact (the corner's,
    // gap -s) stands for both.
    std::vector<Points> found;
    bool merged = false;
    for (const Points& p : at_vertex(c, contacts, side, k)) {
      const int partner =
          vertex_index(side == 0 ? c.outline_b : c.outline_a, side == 0 ? p.on_b : p.on_a);
      const bool partners = partner >= 0 && std::abs(p.gap - s) > 1e-9 &&
                            std::abs(p.gap - signed_distance(own, other[partner])) <= 1e-9;
      merged = merged || (partners && s > 0.0 && std::abs(p.gap + s) <= 1e-9);
      if (!partners) found.push_back(p);
    }
    if (!(s < kMargin - 1e-9)) {
      for (const Points& p : found) BOOST_TEST(p.gap >= s - 1e-9, "gap below the distance");
      continue;
    }
    ++tally.vertices;
    if (found.empty() && merged) {
      ++tally.merged;
      continue;
    }
    if (found.empty() && merged_into_coinciding(c, contacts, side, k, s)) {
      ++tally.coincident;
      continue;
    }
    tally.overlapping += s < 0.0 ? 1 : 0;
    BOOST_TEST_REQUIRE(!found.empty(), "vertex " << k << " at distance " << s << " not found");
    const Points* least = &found[0];
    for (const Points& p : found) {
      if (p.gap < least->gap) least = &p;
      if (std::abs(p.gap - s) <= 1e-9)
        BOOST_TEST(opens_along_the_normal(c, p, side), "normal not from a to b");
      // Deeper than the vertex itself: only the pair's contact on the axis of least overlap of
      // two convex pieces (its deepest vertex along that axis, not necessarily inside).
      if (p.gap < s - 1e-9 && convex)
        BOOST_TEST(std::abs(overlap_along(c.outline_a, c.outline_b, p.normal) + p.gap) <= 1e-9,
                   "vertex at distance " << s << " reports " << p.gap);
      if (p.gap < s - 1e-9 && !convex)
        BOOST_TEST(s < 0.0, "a vertex outside the other particle reports " << p.gap);
    }
    if (convex && least->gap < s - 1e-9) {
      ++tally.least_overlap;
    } else {
      BOOST_TEST((std::abs(least->gap - s) <= 1e-9 ||
                  (least->gap > s && merged_into_coinciding(c, contacts, side, k, s))),
                 "least gap " << least->gap << " vs " << s);
    }
  }
}

// No two contacts of the pair coincide in the sense of the merge rule (points within
// kMergeFraction kMargin, normals within kMergeFraction), and no two share a feature.
void check_none_coincide(const std::vector<Contact>& contacts) {
  const double delta = kMergeFraction * kMargin;
  for (std::size_t i = 0; i < contacts.size(); ++i)
    for (std::size_t j = 0; j < i; ++j) {
      const Points p = points_of(contacts[i]), q = points_of(contacts[j]);
      BOOST_TEST(((p.on_a - q.on_a).norm() > delta || (p.on_b - q.on_b).norm() > delta ||
                  (p.normal - q.normal).norm() > kMergeFraction),
                 "contacts " << j << " and " << i << " coincide within the merge distance");
      BOOST_TEST(contacts[i].feature != contacts[j].feature);
    }
}

// Each contact: unit normal, its points on the outlines, at an outline vertex of a or b, below
// the margin, no two alike, and every vertex below the margin found.
void check_vertex_rule(const PairCase& c, const std::vector<Contact>& contacts, bool convex,
                       Tally& tally) {
  check_points_on_outlines(c, contacts);
  check_no_duplicates(contacts);
  check_none_coincide(contacts);
  for (const Contact& k : contacts) {
    const Points p = points_of(k);
    BOOST_TEST((vertex_index(c.outline_a, p.on_a) >= 0 || vertex_index(c.outline_b, p.on_b) >= 0),
               "contact at no vertex, gap " << p.gap);
    BOOST_TEST(k.gap < kMargin);
  }
  check_vertices_found(c, contacts, 0, convex, tally);
  check_vertices_found(c, contacts, 1, convex, tally);
}

BOOST_AUTO_TEST_CASE(convex_pairs_report_every_vertex_within_the_margin) {
  const ShapeFamilies families = make_shape_families();
  std::mt19937_64 rng(61);
  Tally tally;
  for (int trial = 0; trial < 200; ++trial) {
    PairCase c = random_pair(families.angular, rng);
    check_vertex_rule(c, contacts_between(c.world, c.a, c.b, kMargin), true, tally);
  }
  log_tally(tally);
  BOOST_TEST(tally.vertices > 300);
  BOOST_TEST(tally.overlapping > 50);
}

// b placed from a along a random direction at the centre distance where the outlines touch
// (bisection on the sampled overlap test) plus `offset`: the near contacts of a packing.
PairCase touching_pair(const std::vector<Polygon>& shapes, std::mt19937_64& rng, double offset) {
  PairCase c = random_pair(shapes, rng);
  const Vec2 from = in_plane(c.world.bodies[c.a].position);
  const Vec2 direction = (in_plane(c.world.bodies[c.b].position) - from).normalized();
  auto place = [&](double distance) {
    c.world.bodies[c.b].position.head<2>() = from + distance * direction;
    c.outline_b = world_outline(c.world.bodies[c.b]);
  };
  double lo = 0.0;
  double hi = std::get<Polygon>(c.world.bodies[c.a].shape.geometry).radius +
              std::get<Polygon>(c.world.bodies[c.b].shape.geometry).radius;
  for (int k = 0; k < 40; ++k) {
    place(0.5 * (lo + hi));
    (overlapping(c.outline_a, c.outline_b, 1e-3) ? lo : hi) = 0.5 * (lo + hi);
  }
  place(hi + offset);
  return c;
}

BOOST_AUTO_TEST_CASE(non_convex_pairs_report_every_vertex_within_the_margin) {
  const ShapeFamilies families = make_shape_families();
  std::vector<Polygon> shapes = families.non_convex;
  shapes.insert(shapes.end(), families.angular.begin(), families.angular.end());
  std::mt19937_64 rng(67);
  std::uniform_real_distribution<double> offset(-0.05, 0.1);
  Tally tally;
  for (int trial = 0; trial < 100; ++trial) {
    PairCase c = touching_pair(shapes, rng, offset(rng));
    check_vertex_rule(c, contacts_between(c.world, c.a, c.b, kMargin), false, tally);
  }
  // Deep overlaps too: a vertex inside the other particle is measured to its whole outline.
  for (int trial = 0; trial < 40; ++trial) {
    PairCase c = random_pair(families.non_convex, rng);
    check_vertex_rule(c, contacts_between(c.world, c.a, c.b, kMargin), false, tally);
  }
  log_tally(tally);
  BOOST_TEST(tally.vertices > 500);
  BOOST_TEST(tally.overlapping > 100);
}

BOOST_AUTO_TEST_CASE(disk_reports_every_polygon_corner_within_the_margin) {
  const ShapeFamilies families = make_shape_families();
  std::mt19937_64 rng(71);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  int corners = 0;
  for (int trial = 0; trial < 60; ++trial) {
    World world = planar_world();
    const double radius = 0.2 + 0.4 * unit(rng);
    const double angle = 2 * pi * unit(rng);
    const Vec2 centre = (0.5 + radius + 0.1 * unit(rng)) * Vec2(std::cos(angle), std::sin(angle));
    const int disk = add(world, Sphere{radius}, centre);
    const int polygon =
        add(world, families.non_convex[trial % 16], Vec2::Zero(), 2 * pi * unit(rng));
    const std::vector<Vec2> outline = world_outline(world.bodies[polygon]);
    const std::vector<Contact> contacts = contacts_between(world, disk, polygon, kMargin);
    check_no_duplicates(contacts);
    for (const Vec2& v : outline) {
      const double gap = (v - centre).norm() - radius;
      if (!(gap < kMargin - 1e-9)) continue;
      ++corners;
      const bool found = std::any_of(contacts.begin(), contacts.end(), [&](const Contact& k) {
        const Points p = points_of(k);
        return (p.on_b - v).norm() <= 1e-9 && std::abs(p.gap - gap) <= 1e-9 &&
               (p.normal - (v - centre).normalized()).norm() <= 1e-9;
      });
      BOOST_TEST(found, "corner at " << v.transpose() << ", gap " << gap << " not found");
    }
  }
  BOOST_TEST(corners > 60);
}

BOOST_AUTO_TEST_CASE(wall_reports_every_vertex_within_the_margin_in_vertex_order) {
  const ShapeFamilies families = make_shape_families();
  std::mt19937_64 rng(73);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  int vertices = 0;
  for (int trial = 0; trial < 40; ++trial) {
    World world = planar_world();
    const int floor = add_floor(world);
    const int body = add(world, families.non_convex[trial % 16], Vec2::Zero(), 2 * pi * unit(rng));
    double lowest = std::numeric_limits<double>::infinity();
    for (const Vec2& v : world_outline(world.bodies[body])) lowest = std::min(lowest, v.y());
    world.bodies[body].position.y() = -lowest - 0.05 + 0.15 * unit(rng);
    const std::vector<Vec2> outline = world_outline(world.bodies[body]);
    std::vector<int> expected;
    for (int k = 0; k < static_cast<int>(outline.size()); ++k)
      if (outline[k].y() < kMargin) expected.push_back(k);
    const std::vector<Contact> contacts = contacts_between(world, body, floor, kMargin);
    BOOST_TEST_REQUIRE(contacts.size() == expected.size());
    for (std::size_t i = 0; i < contacts.size(); ++i) {
      const Points p = points_of(contacts[i]);
      BOOST_TEST(vertex_index(outline, p.on_a) == expected[i]);
      BOOST_TEST(std::abs(p.gap - outline[expected[i]].y()) <= kTol);
      BOOST_TEST((p.normal - Vec2(0.0, -1.0)).norm() <= kTol);
    }
    vertices += static_cast<int>(expected.size());
  }
  BOOST_TEST(vertices > 80);
}

// A plank with its top face at y = 0, as a polygon (kind 0), a box (1) or a wall (2).
int add_plank(World& world, int kind) {
  const ShapeGeometry plank =
      kind == 0 ? ShapeGeometry(make_polygon({Vec2(-4, -1), Vec2(4, -1), Vec2(4, 0), Vec2(-4, 0)}))
      : kind == 1 ? ShapeGeometry(Box{Vec3(4.0, 0.5, 1.0)})
                  : ShapeGeometry(HalfSpace{Vec3::UnitY()});
  return add(world, plank, Vec2(0.0, kind == 2 ? 0.0 : -0.5), 0.0, Motion::fixed);
}

// A particle standing on its lowest corner (1e-4 above a plank) turned about that corner in
// steps of 1 deg, either way, until 40 deg: its corners come down through the margin to the
// face and cross it. Every corner below the margin is a contact, before and after it crosses,
// with the normal of the face and the gap its brute-force height. Shapes: a regular hexagon
// (its neighbour corners come down to the face at 30 deg), a regular 16-gon (circumradius 1:
// its face neighbours are 0.15 above the face, within the margin, and neither end of the
// face the particle rests on) and a non-convex particle of the families.
BOOST_AUTO_TEST_CASE(corner_approaching_a_face_is_a_contact_before_it_crosses) {
  const ShapeFamilies families = make_shape_families();
  const std::vector<Polygon> shapes{regular(6, 1.0, -pi / 2), regular(16, 1.0, -pi / 2),
                                    families.non_convex[3]};
  for (const Polygon& shape : shapes)
    for (const int kind : {0, 1, 2})
      for (const double way : {1.0, -1.0}) {
        World world = planar_world();
        const int base = add_plank(world, kind);
        const int body = add(world, shape, Vec2::Zero());
        const std::vector<Vec2> start = world_outline(world.bodies[body]);
        const Vec2 pivot = *std::min_element(
            start.begin(), start.end(), [](const Vec2& x, const Vec2& y) { return x.y() < y.y(); });
        int before = 0, after = 0;
        for (int step = 0; step <= 40; ++step) {
          const double turn = way * pi / 180.0 * step;
          world.bodies[body].orientation = Quat(Eigen::AngleAxisd(turn, Vec3::UnitZ()));
          world.bodies[body].position.head<2>() =
              Vec2(0.0, 1e-4) + Eigen::Rotation2Dd(turn) * (-pivot);
          const std::vector<Contact> contacts = contacts_between(world, base, body, kMargin);
          for (const Vec2& corner : world_outline(world.bodies[body])) {
            const bool found = std::any_of(contacts.begin(), contacts.end(), [&](const Contact& k) {
              const Points p = points_of(k);
              return (p.on_b - corner).norm() <= 1e-9 && std::abs(p.gap - corner.y()) <= 1e-9 &&
                     (p.normal - Vec2::UnitY()).norm() <= 1e-9;
            });
            BOOST_TEST(found == (corner.y() < kMargin),
                       "turn " << turn << ", corner height " << corner.y());
            if (found) (corner.y() > 1e-3 ? before : after) += 1;
          }
        }
        BOOST_TEST(before >= 10, "corners seen coming down through the margin");
        BOOST_TEST(after >= 5, "corners seen after crossing");
      }
}

// A regular 16-gon (circumradius 1) lying on the floor, tilted by 1 deg, spinning about its
// lower bottom corner towards its other bottom corner (0.007 above the floor) at 0.1 rad per
// step of the frictionless CD stepper (Olsen & Kamrin eq. 13-21): unstopped, that corner would
// end 0.03 below the floor. Its contact is in the problem, so what remains is the error of
// moving a corner on a straight line instead of an arc, at most R (omega dt)^2 / 2 = 0.005.
BOOST_AUTO_TEST_CASE(turning_corner_is_stopped_by_its_contact) {
  const Polygon shape = regular(16, 1.0, -pi / 2 - pi / 16);  // corners 0 and 1 at the bottom
  for (const int kind : {0, 2}) {
    World world = planar_world();
    world.gravity = Vec3::Zero();
    add_plank(world, kind);
    const double tilt = pi / 180.0, omega = 10.0, dt = 0.01;
    // Corner 0 (left) on the floor at the origin, corner 1 (right) above it.
    const Vec2 centre = -(Eigen::Rotation2Dd(tilt) * shape.outline[0]);
    const int body = add(world, shape, centre, tilt);
    const MassProperties mass = mass_properties(shape, 1.0, Dimension::two);
    world.bodies[body].mass = mass.mass;
    world.bodies[body].inertia_body = mass.inertia;
    // Turning clockwise about corner 0: v = omega x centre.
    world.bodies[body].angular_velocity = Vec3(0.0, 0.0, -omega);
    world.bodies[body].linear_velocity = Vec3(omega * centre.y(), -omega * centre.x(), 0.0);
    world.validate();
    const Vec2 right = world_outline(world.bodies[body])[1];
    const Vec2 unstopped = Eigen::Rotation2Dd(-omega * dt) * right;
    BOOST_TEST_MESSAGE("corner 1 at " << right.y() << ", unstopped " << unstopped.y());
    BOOST_TEST(unstopped.y() < -0.02);
    test::EulerSetup options;
    options.time_step = dt;
    options.frictional = false;
    options.collision.margin = kMargin;
    options.solver_options.tolerance = 1e-12;
    auto stepper = test::euler_stepper(world, options);
    stepper.step();
    double lowest = std::numeric_limits<double>::infinity();
    for (const Vec2& v : world_outline(world.bodies[body])) lowest = std::min(lowest, v.y());
    BOOST_TEST_MESSAGE("lowest corner after the step " << lowest);
    BOOST_TEST(lowest > -0.5 * std::pow(omega * dt, 2), "overlap " << -lowest);
  }
}

// Two corners meeting: a's top-right corner at the origin, b's bottom-left corner just above
// a's top face and to the left of the corner, b turned by 2 degrees. Each corner's contact
// lies next to the other corner (a's corner under b's bottom face, b's corner over a's top
// face): two nearly equal rows of the contact matrix, merged into the deeper one when they
// coincide to kMergeFraction of the margin, kept apart when they do not.
std::vector<Contact> corner_to_corner(double corner_x) {
  World world = planar_world();
  const double turn = 2.0 * pi / 180.0;
  const Polygon square = make_polygon({Vec2(0, 0), Vec2(1, 0), Vec2(1, 1), Vec2(0, 1)});
  const int a = add(world, square, Vec2(-0.5, -0.5));
  // b's bottom-left corner (local (-0.5, -0.5)) placed at (corner_x, 0.01).
  const Vec2 corner(corner_x, 0.01);
  const Vec2 local = Eigen::Rotation2Dd(turn) * Vec2(-0.5, -0.5);
  const int b = add(world, square, corner - local, turn);
  return contacts_between(world, a, b, kMargin);
}

BOOST_AUTO_TEST_CASE(coinciding_vertex_contacts_are_merged) {
  // 0.003 apart, normals 2 degrees apart: within kMergeFraction kMargin = 0.009 and
  // 0.009 / kMargin = 0.05 rad.
  const std::vector<Contact> close = corner_to_corner(-0.003);
  BOOST_TEST_REQUIRE(close.size() == 1u);
  BOOST_TEST(close[0].gap == 0.01, boost::test_tools::tolerance(1e-9));  // b's corner, deeper
  BOOST_TEST(close[0].normal.y() == 1.0, boost::test_tools::tolerance(1e-12));
  // 0.05 apart: two contacts, one per corner.
  const std::vector<Contact> apart = corner_to_corner(-0.05);
  BOOST_TEST(apart.size() == 2u);
}

// A hexagon lowered onto a floor: its corner 5 is within the margin first, then corner 4 enters
// (a lower outline index, so that it comes first in the pair's order). The contact of corner 5
// keeps its key, and with it its shear history (Krabbenhoft/NURBS chapter eq. 4.8); the new
// contact starts from zero.
BOOST_AUTO_TEST_CASE(contact_key_is_stable_when_a_vertex_contact_appears) {
  World world = planar_world();
  const int floor = add_floor(world);
  const int hexagon = add(world, regular(6, 0.5, -10.0 * pi / 180.0), Vec2(0.0, 0.52));
  constexpr double margin = 0.1;
  auto detect = [&](double height) {
    world.bodies[hexagon].position.y() = height;
    std::vector<Contact> out;
    narrow_phase(world, hexagon, floor, margin, out);
    return out;
  };
  const std::vector<Contact> before = detect(0.52);
  BOOST_TEST_REQUIRE(before.size() == 1u);
  const std::vector<variational::ContactKey> keys_before = variational::contact_keys(before);
  variational::ShearHistory history;
  history.store(keys_before, before, VecX::Constant(1, 7.0));

  const std::vector<Contact> after = detect(0.47);
  BOOST_TEST_REQUIRE(after.size() == 2u);
  const std::vector<variational::ContactKey> keys_after = variational::contact_keys(after);
  // The corner of `before` is the lower one of `after`.
  const int kept = after[0].point.y() < after[1].point.y() ? 0 : 1;
  BOOST_TEST(kept == 1);  // corner 4 came first: an order key would have moved the history
  BOOST_TEST((keys_after[kept] == keys_before[0]));
  BOOST_TEST(after[kept].feature == before[0].feature);
  const VecX q0 = history.lookup(keys_after, after);
  BOOST_TEST(q0(kept) == 7.0);
  BOOST_TEST(q0(1 - kept) == 0.0);
  BOOST_TEST(history.persistent(keys_after) == 1);
  // Lifted again: corner 4 leaves, corner 5 keeps its key.
  BOOST_TEST((variational::contact_keys(detect(0.52))[0] == keys_before[0]));
}

// A disk rolling around another turns the contact frame with the line of centres: the carried
// shear force is the vector q t of the step it was stored in, so after a turn by phi the new
// tangent sees q cos(phi), and after half a turn the same force as -q along the reversed
// tangent. The scalar q kept along whatever tangent the contact has would turn the force with
// the frame.
BOOST_AUTO_TEST_CASE(carried_shear_force_keeps_its_direction_when_the_frame_turns) {
  World world = planar_world();
  const int a = add(world, Sphere{0.5}, Vec2::Zero(), 0.0, Motion::fixed);
  const int b = add(world, Sphere{0.5}, Vec2(0.999, 0.0));
  const auto detect = [&](double phi) {
    world.bodies[b].position = 0.999 * Vec3(std::cos(phi), std::sin(phi), 0.0);
    return contacts_between(world, a, b, 0.01);
  };
  const std::vector<Contact> start = detect(0.0);
  BOOST_TEST_REQUIRE(start.size() == 1u);
  variational::ShearHistory history;
  history.store(variational::contact_keys(start), start, VecX::Constant(1, 7.0));
  BOOST_TEST(history.lookup(variational::contact_keys(start), start)(0) == 7.0);
  for (const double phi : {pi / 3.0, pi / 2.0, pi}) {
    const std::vector<Contact> turned = detect(phi);
    BOOST_TEST_REQUIRE(turned.size() == 1u);
    const double q0 = history.lookup(variational::contact_keys(turned), turned)(0);
    BOOST_TEST(std::abs(q0 - 7.0 * std::cos(phi)) <= 1e-12, "phi " << phi);
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(polygons_in_the_world)

// Resting on two contacts, a symmetric particle is statically determinate: the semi-implicit
// Euler CD (Olsen & Kamrin eq. 13-21, frictionless) gives each contact half the weight (the
// square). The U shape standing on its two legs has four contacts (both corners of each leg
// tip): indeterminate, the contacts carry the weight together and the particle stays at rest.
BOOST_AUTO_TEST_CASE(particle_at_rest_on_two_contacts_carries_half_the_weight_on_each) {
  Vec2 centroid;
  const Polygon u = make_polygon(u_shape().outline, &centroid);
  const Polygon square = regular(4, std::sqrt(0.5), pi / 4);
  for (const bool on_legs : {false, true}) {
    World world = planar_world();
    add_floor(world);
    const Polygon& shape = on_legs ? u : square;
    const double lowest = on_legs ? u.outline[2].y() : 0.5;  // below the centroid once placed
    const int body = add(world, shape, Vec2(0.0, lowest + 1e-4), on_legs ? pi : 0.0);
    const MassProperties mass = mass_properties(shape, 1.0, Dimension::two);
    world.bodies[body].mass = mass.mass;
    world.bodies[body].inertia_body = mass.inertia;
    world.validate();
    test::EulerSetup options;
    options.time_step = 1e-3;
    options.frictional = false;
    options.collision.margin = 1e-3;
    options.solver_options.tolerance = 1e-12;
    auto stepper = test::euler_stepper(world, options);
    for (int k = 0; k < 300; ++k) stepper.step();
    const StepReport& report = stepper.last_report();
    const std::size_t count = on_legs ? 4u : 2u;
    BOOST_TEST_REQUIRE(report.contacts.size() == count);
    const double weight = mass.mass * 9.81 * options.time_step;
    if (!on_legs)
      for (int c = 0; c < 2; ++c)
        BOOST_TEST(std::abs(report.impulses(c) - 0.5 * weight) <= 1e-6 * weight,
                   "impulse " << report.impulses(c) << ", half the weight " << 0.5 * weight);
    BOOST_TEST(std::abs(report.impulses.sum() - weight) <= 1e-6 * weight);
    BOOST_TEST(std::abs(world.bodies[body].angular_velocity.z()) <= 1e-9);
    BOOST_TEST(std::abs(world.bodies[body].position.x()) <= 1e-12);
  }
}

// Sixteen non-convex particles (one of each shape) dropped into a box settle under the
// frictional CD stepper (Olsen & Kamrin eq. 13-21, mu = 0.5): every state stays finite, the settled
// overlaps are far below the margin and the particles come to rest. The contacts of interlocking
// non-convex particles (several per pair, concave pockets) are what this exercises.
BOOST_AUTO_TEST_CASE(non_convex_particles_settle_in_a_box) {
  const ShapeFamilies families = make_shape_families();
  World world = planar_world();
  world.friction = FrictionTable(0.5);
  add_floor(world);
  add(world, HalfSpace{Vec3::UnitX()}, Vec2(-0.6, 0.0), 0.0, Motion::fixed);
  add(world, HalfSpace{-Vec3::UnitX()}, Vec2(4.2, 0.0), 0.0, Motion::fixed);
  for (int k = 0; k < 16; ++k) {
    const int body =
        add(world, families.non_convex[k], Vec2(1.2 * (k % 4), 0.7 + 1.25 * (k / 4)), 0.4 * k);
    const MassProperties mass = mass_properties(families.non_convex[k], 1.0, Dimension::two);
    world.bodies[body].mass = mass.mass;
    world.bodies[body].inertia_body = mass.inertia;
  }
  world.validate();
  test::EulerSetup options;
  options.time_step = 2e-3;
  options.collision.margin = 0.01;
  options.solver_options.max_iterations = 300;
  options.solver_options.record_history = false;
  auto stepper = test::euler_stepper(world, options);
  // Overlaps at impacts are up to (speed x time step - margin), a few cm after a fall of a
  // few m; the settled packing of the last steps must have lost them.
  double deepest = 0.0;
  for (int k = 0; k < 1500; ++k) {
    const StepReport& report = stepper.step();
    if (k < 1400) continue;
    for (const Contact& c : report.contacts) deepest = std::min(deepest, c.gap);
  }
  double fastest = 0.0;
  for (const RigidBody& b : world.bodies) fastest = std::max(fastest, b.linear_velocity.norm());
  BOOST_TEST_MESSAGE("settled: deepest overlap " << deepest << " m, fastest " << fastest
                                                 << " m/s, contacts "
                                                 << stepper.last_report().contacts.size());
  BOOST_TEST(deepest > -0.1 * options.collision.margin, "deepest overlap " << deepest);
  BOOST_TEST(fastest < 1e-2, "fastest particle at the end " << fastest << " m/s");
  BOOST_TEST(stepper.last_report().contacts.size() >= 16u);
}

BOOST_AUTO_TEST_CASE(broad_phase_on_bounding_circles_misses_no_pair) {
  const ShapeFamilies families = make_shape_families();
  World world = planar_world();
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int k = 0; k < 150; ++k) {
    const std::size_t s = rng() % families.non_convex.size();
    const Vec2 at(12.0 * unit(rng), 12.0 * unit(rng));
    if (k % 3 == 0)
      add(world, families.non_convex[s], at, 2 * pi * unit(rng));
    else if (k % 3 == 1)
      add(world, families.angular[s], at, 2 * pi * unit(rng));
    else
      add(world, Sphere{families.disk_radius[s]}, at);
  }
  add_floor(world, 0.5);
  world.validate();
  const CollisionOptions options{0.05, 0.0};
  const std::vector<Contact> found = detect_contacts(world, options);
  std::vector<Contact> brute;
  for (int i = 0; i < static_cast<int>(world.bodies.size()); ++i)
    for (int j = i + 1; j < static_cast<int>(world.bodies.size()); ++j)
      narrow_phase(world, i, j, options.margin, brute);
  BOOST_TEST(found.size() == brute.size());
  BOOST_TEST(found.size() > 20u);
}

BOOST_AUTO_TEST_CASE(shape_families_are_matched_and_reproducible) {
  const ShapeFamilies f = make_shape_families();
  BOOST_TEST(f.non_convex.size() == 16u);
  BOOST_TEST(f.angular.size() == 16u);
  BOOST_TEST(f.disk_radius.size() == 16u);
  for (std::size_t k = 0; k < 16; ++k) {
    BOOST_TEST(!is_convex(f.non_convex[k]));
    BOOST_TEST(is_convex(f.angular[k]));
    BOOST_TEST(f.angular[k].outline.size() >= 5u);
    BOOST_TEST(f.angular[k].outline.size() <= 8u);
    const double d = f.mean_diameter[k];
    BOOST_TEST(std::abs(mean_caliper_diameter(f.non_convex[k]) - d) <= kTol * d);
    BOOST_TEST(std::abs(mean_caliper_diameter(f.angular[k]) - d) <= kTol * d);
    BOOST_TEST(f.disk_radius[k] == 0.5 * d);
    BOOST_TEST(d >= 0.8 - kTol);
    BOOST_TEST(d <= 1.2 + kTol);
  }
  const ShapeFamilies again = make_shape_families();
  for (std::size_t k = 0; k < 16; ++k)
    BOOST_TEST(again.non_convex[k].outline == f.non_convex[k].outline);
  ShapeFamilyOptions other;
  other.seed = 5;
  BOOST_TEST(make_shape_families(other).non_convex[0].outline != f.non_convex[0].outline);
}

BOOST_AUTO_TEST_CASE(vtk_polygons_are_polygon_cells) {
  World world = planar_world();
  add_floor(world);
  add(world, u_shape(), Vec2(0.0, 3.0), 0.3);
  add(world, regular(5, 1.0), Vec2(4.0, 3.0));
  add(world, Sphere{0.5}, Vec2(8.0, 3.0));
  std::ostringstream out;
  write_polygons_vtp(out, world);
  const std::string text = out.str();
  BOOST_TEST(text.find("NumberOfPoints=\"13\"") != std::string::npos);
  BOOST_TEST(text.find("NumberOfPolys=\"2\"") != std::string::npos);
  BOOST_TEST(text.find("<Polys>") != std::string::npos);
  BOOST_TEST(text.find("          8\n          13\n") != std::string::npos, "offsets 8, 13");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(bad_input)

BOOST_AUTO_TEST_CASE(bad_outlines_are_named) {
  expect_outline_error({Vec2(0, 0), Vec2(1, 0)}, "at least 3 vertices");
  expect_outline_error({Vec2(0, 0), Vec2(1, 0), Vec2(1, 0), Vec2(0, 1)}, "coincide");
  expect_outline_error({Vec2(0, 0), Vec2(1, 0), Vec2(2, 0), Vec2(0, 1)}, "collinear");
  expect_outline_error({Vec2(0, 0), Vec2(2, 0), Vec2(1, 0), Vec2(0, 1)}, "folds");
  expect_outline_error({Vec2(0, 0), Vec2(1, 1), Vec2(1, 0), Vec2(0, 1)}, "self-intersecting");
  expect_outline_error({Vec2(0, 0), Vec2(0, 1), Vec2(1, 1), Vec2(1, 0)}, "clockwise");
  expect_outline_error({Vec2(0, 0), Vec2(1, 0), Vec2(std::nan(""), 1)}, "vertex 2 is not finite");
  // A vertex touching a non-adjacent edge is a self-intersection too.
  expect_outline_error({Vec2(0, 0), Vec2(2, 0), Vec2(2, 2), Vec2(1, 0), Vec2(0, 2)},
                       "self-intersecting");
}

BOOST_AUTO_TEST_CASE(polygons_are_two_dimensional) {
  BOOST_CHECK_EXCEPTION(mass_properties(regular(3, 1.0), 1.0, Dimension::three), InputError,
                        [](const InputError& e) { return message_has(e, "2D shape"); });
  World world;
  world.dimension = Dimension::three;
  add(world, regular(3, 1.0), Vec2::Zero());
  BOOST_CHECK_EXCEPTION(world.validate(), InputError, [](const InputError& e) {
    return message_has(e, "body 0 ('p0'): a polygon");
  });
  World empty = planar_world();
  add(empty, Polygon{}, Vec2::Zero());
  BOOST_CHECK_EXCEPTION(empty.validate(), InputError,
                        [](const InputError& e) { return message_has(e, "make_polygon"); });
  BOOST_CHECK_EXCEPTION(mass_properties(regular(3, 1.0), std::nan(""), Dimension::two), InputError,
                        [](const InputError& e) { return message_has(e, "density"); });
}

BOOST_AUTO_TEST_CASE(polygon_built_without_make_polygon_is_refused_by_name) {
  World world = planar_world();
  Polygon bare = regular(4, 1.0);
  for (ConvexPiece& piece : bare.pieces) piece.outline_index.clear();
  const int a = add(world, bare, Vec2::Zero());
  const int b = add(world, regular(4, 1.0), Vec2(1.9, 0.0));
  std::vector<Contact> out;
  BOOST_CHECK_EXCEPTION(narrow_phase(world, a, b, 0.2, out), InputError,
                        [](const InputError& e) { return message_has(e, "make_polygon"); });
}

BOOST_AUTO_TEST_CASE(unsupported_pairs_are_refused_by_name) {
  World world = planar_world();
  const int rod = add(world, Capsule{0.5, 0.1}, Vec2::Zero());
  const int polygon = add(world, regular(4, 1.0), Vec2(0.5, 0.0));
  std::vector<Contact> out;
  BOOST_CHECK_EXCEPTION(
      narrow_phase(world, rod, polygon, 0.0, out), InputError,
      [](const InputError& e) { return message_has(e, "capsule") && message_has(e, "polygon"); });
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace moreau
