// Polygon outlines: validation, exact area moments (Green's theorem) and the split of a simple
// polygon into convex pieces (ear clipping, then Hertel & Mehlhorn's merge of triangles across
// diagonals while the union stays convex; at most four times the minimum number of pieces).
#include "moreau/model/polygon.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <sstream>

#include "moreau/core/error.hpp"

namespace moreau {
namespace {

// |a x b| <= kCollinear |a| |b|: a turn of less than 1e-12 rad counts as none. Such a vertex
// would give two edges of one piece the same normal, and its ear a zero area.
constexpr double kCollinear = 1e-12;

double cross(const Vec2& a, const Vec2& b) { return a.x() * b.y() - a.y() * b.x(); }

std::string text(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

std::string point_text(const Vec2& p) {
  std::ostringstream out;
  out << '(' << p.x() << ", " << p.y() << ')';
  return out.str();
}

int sign(double value) { return (value > 0.0) - (value < 0.0); }

// Closed segments [p1, p2] and [q1, q2] share at least one point.
bool segments_meet(const Vec2& p1, const Vec2& p2, const Vec2& q1, const Vec2& q2) {
  const int o1 = sign(cross(p2 - p1, q1 - p1));
  const int o2 = sign(cross(p2 - p1, q2 - p1));
  const int o3 = sign(cross(q2 - q1, p1 - q1));
  const int o4 = sign(cross(q2 - q1, p2 - q1));
  if (o1 == 0 && o2 == 0) {  // on one line: overlap of the projections
    const Vec2 d = p2 - p1;
    const double a = d.dot(q1 - p1), b = d.dot(q2 - p1);
    return std::max(a, b) >= 0.0 && std::min(a, b) <= d.squaredNorm();
  }
  return o1 * o2 <= 0 && o3 * o4 <= 0;
}

// Twice the signed area, sum of p_k x p_k+1 (shoelace).
double twice_signed_area(const std::vector<Vec2>& p) {
  double sum = 0.0;
  for (std::size_t k = 0; k < p.size(); ++k) sum += cross(p[k], p[(k + 1) % p.size()]);
  return sum;
}

bool strictly_convex_turn(const Vec2& a, const Vec2& b, const Vec2& c) {
  const Vec2 u = b - a, v = c - b;
  return cross(u, v) > kCollinear * u.norm() * v.norm();
}

// Point p inside or on the triangle (a, b, c), counter-clockwise.
bool in_triangle(const Vec2& p, const Vec2& a, const Vec2& b, const Vec2& c) {
  return cross(b - a, p - a) >= 0.0 && cross(c - b, p - b) >= 0.0 && cross(a - c, p - c) >= 0.0;
}

using Cycle = std::vector<int>;  // outline indices, counter-clockwise

std::vector<Cycle> ear_clip(const std::vector<Vec2>& p) {
  Cycle ring(p.size());
  for (std::size_t k = 0; k < p.size(); ++k) ring[k] = static_cast<int>(k);
  std::vector<Cycle> triangles;
  while (ring.size() > 3) {
    // Of the ears, clip the one with the shortest diagonal: small ears go first along the
    // outline and no fan of slivers forms, so that the merge below ends with fewer, rounder
    // pieces (tighter bounding circles for the narrow phase).
    const std::size_t m = ring.size();
    std::size_t best = m;
    double shortest = std::numeric_limits<double>::infinity();
    for (std::size_t k = 0; k < m; ++k) {
      const int a = ring[(k + m - 1) % m], b = ring[k], c = ring[(k + 1) % m];
      if (!strictly_convex_turn(p[a], p[b], p[c])) continue;
      bool empty = true;
      for (const int q : ring)
        if (q != a && q != b && q != c && in_triangle(p[q], p[a], p[b], p[c])) {
          empty = false;
          break;
        }
      if (empty && (p[c] - p[a]).squaredNorm() < shortest)
        shortest = (p[c] - p[a]).squaredNorm(), best = k;
    }
    const bool clipped = best < m;
    if (clipped) {
      triangles.push_back({ring[(best + m - 1) % m], ring[best], ring[(best + 1) % m]});
      ring.erase(ring.begin() + static_cast<long>(best));
    }
    // A simple polygon always has an ear (Meisters' two-ears theorem); only round-off on a
    // nearly degenerate outline can get here.
    if (!clipped)
      throw InputError(
          "polygon: the outline could not be split into convex pieces (nearly "
          "degenerate: vertices almost collinear or almost touching edges)");
  }
  triangles.push_back(ring);
  return triangles;
}

bool convex_cycle(const std::vector<Vec2>& p, const Cycle& cycle) {
  const std::size_t m = cycle.size();
  for (std::size_t k = 0; k < m; ++k)
    if (!strictly_convex_turn(p[cycle[(k + m - 1) % m]], p[cycle[k]], p[cycle[(k + 1) % m]]))
      return false;
  return true;
}

// Union of two pieces across their shared edge (u -> v in `first`, v -> u in `second`), or an
// empty cycle when they share no edge.
Cycle merge_across_diagonal(const Cycle& first, const Cycle& second) {
  const std::size_t m = first.size(), n = second.size();
  for (std::size_t i = 0; i < m; ++i) {
    const int u = first[i], v = first[(i + 1) % m];
    for (std::size_t j = 0; j < n; ++j) {
      if (second[j] != v || second[(j + 1) % n] != u) continue;
      Cycle merged;
      for (std::size_t k = 0; k < m; ++k) merged.push_back(first[(i + 1 + k) % m]);  // v .. u
      for (std::size_t k = 2; k < n; ++k) merged.push_back(second[(j + k) % n]);     // after u
      return merged;
    }
  }
  return {};
}

std::vector<Cycle> convex_pieces(const std::vector<Vec2>& p) {
  std::vector<Cycle> pieces = ear_clip(p);
  bool merged_any = true;
  while (merged_any) {
    merged_any = false;
    for (std::size_t a = 0; a < pieces.size() && !merged_any; ++a)
      for (std::size_t b = a + 1; b < pieces.size() && !merged_any; ++b) {
        Cycle merged = merge_across_diagonal(pieces[a], pieces[b]);
        if (merged.empty() || !convex_cycle(p, merged)) continue;
        pieces[a] = std::move(merged);
        pieces.erase(pieces.begin() + static_cast<long>(b));
        merged_any = true;
      }
  }
  return pieces;
}

ConvexPiece make_piece(const std::vector<Vec2>& p, const Cycle& cycle) {
  const int n = static_cast<int>(p.size());
  ConvexPiece piece;
  for (std::size_t k = 0; k < cycle.size(); ++k) {
    piece.vertices.push_back(p[cycle[k]]);
    piece.outline_index.push_back(cycle[k]);
    piece.external.push_back(cycle[(k + 1) % cycle.size()] == (cycle[k] + 1) % n);
    piece.centre += p[cycle[k]];
  }
  piece.centre /= static_cast<double>(cycle.size());
  for (const Vec2& v : piece.vertices)
    piece.radius = std::max(piece.radius, (v - piece.centre).norm());
  return piece;
}

}  // namespace

void check_outline(const std::vector<Vec2>& p, const std::string& what) {
  const std::size_t n = p.size();
  if (n < 3)
    throw InputError(what + ": an outline needs at least 3 vertices, got " + std::to_string(n));
  for (std::size_t k = 0; k < n; ++k)
    if (!p[k].allFinite())
      throw InputError(what + ": vertex " + std::to_string(k) + " is not finite (NaN or inf)");
  for (std::size_t k = 0; k < n; ++k) {
    const Vec2& prev = p[(k + n - 1) % n];
    const Vec2& next = p[(k + 1) % n];
    if (p[k] == next)
      throw InputError(what + ": vertices " + std::to_string(k) + " and " +
                       std::to_string((k + 1) % n) + " coincide at " + point_text(p[k]) +
                       " (degenerate edge)");
    const Vec2 u = p[k] - prev, v = next - p[k];
    if (std::abs(cross(u, v)) <= kCollinear * u.norm() * v.norm())
      throw InputError(what + ": vertex " + std::to_string(k) + " at " + point_text(p[k]) +
                       (u.dot(v) > 0.0 ? " is collinear with its neighbours (drop it)"
                                       : " folds the outline back onto itself (degenerate)"));
  }
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 2; j < n; ++j) {
      if (i == 0 && j == n - 1) continue;  // adjacent through the closing edge
      if (segments_meet(p[i], p[(i + 1) % n], p[j], p[(j + 1) % n]))
        throw InputError(what + ": the outline is self-intersecting (edge " + std::to_string(i) +
                         " from " + point_text(p[i]) + " meets edge " + std::to_string(j) +
                         " from " + point_text(p[j]) + ")");
    }
  const double area2 = twice_signed_area(p);
  if (!(area2 > 0.0))
    throw InputError(what + ": the outline is clockwise (signed area " + text(0.5 * area2) +
                     "); give the vertices counter-clockwise");
}

double polygon_area(const std::vector<Vec2>& outline) { return 0.5 * twice_signed_area(outline); }

Vec2 outline_centroid(const std::vector<Vec2>& p) {
  // C = sum (p_k + p_k+1)(p_k x p_k+1) / (6 A), taken relative to the first vertex so that an
  // outline far from the origin loses no digits.
  const Vec2 origin = p[0];
  Vec2 sum = Vec2::Zero();
  double area2 = 0.0;
  for (std::size_t k = 0; k < p.size(); ++k) {
    const Vec2 a = p[k] - origin, b = p[(k + 1) % p.size()] - origin;
    const double c = cross(a, b);
    sum += (a + b) * c;
    area2 += c;
  }
  return origin + sum / (3.0 * area2);
}

double polygon_polar_moment(const std::vector<Vec2>& p) {
  // J_o = sum (p_k x p_k+1)(p_k.p_k + p_k.p_k+1 + p_k+1.p_k+1) / 12 about the centroid.
  const Vec2 c = outline_centroid(p);
  double sum = 0.0;
  for (std::size_t k = 0; k < p.size(); ++k) {
    const Vec2 a = p[k] - c, b = p[(k + 1) % p.size()] - c;
    sum += cross(a, b) * (a.dot(a) + a.dot(b) + b.dot(b));
  }
  return sum / 12.0;
}

Polygon make_polygon(const std::vector<Vec2>& outline, Vec2* centroid) {
  check_outline(outline);
  const Vec2 c = outline_centroid(outline);
  if (centroid) *centroid = c;
  Polygon polygon;
  for (const Vec2& v : outline) {
    polygon.outline.push_back(v - c);
    polygon.radius = std::max(polygon.radius, polygon.outline.back().norm());
  }
  bool convex = true;
  for (std::size_t k = 0; k < outline.size(); ++k) {
    const std::size_t n = outline.size();
    convex = convex && strictly_convex_turn(polygon.outline[(k + n - 1) % n], polygon.outline[k],
                                            polygon.outline[(k + 1) % n]);
  }
  Cycle whole(outline.size());
  for (std::size_t k = 0; k < whole.size(); ++k) whole[k] = static_cast<int>(k);
  const std::vector<Cycle> cycles =
      convex ? std::vector<Cycle>{whole} : convex_pieces(polygon.outline);
  for (const Cycle& cycle : cycles) polygon.pieces.push_back(make_piece(polygon.outline, cycle));
  return polygon;
}

bool is_convex(const Polygon& polygon) { return polygon.pieces.size() == 1; }

std::vector<Vec2> convex_hull(std::vector<Vec2> points) {
  std::sort(points.begin(), points.end(), [](const Vec2& a, const Vec2& b) {
    return a.x() < b.x() || (a.x() == b.x() && a.y() < b.y());
  });
  std::vector<Vec2> hull(2 * points.size());
  std::size_t k = 0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    while (k >= 2 && cross(hull[k - 1] - hull[k - 2], points[i] - hull[k - 2]) <= 0.0) --k;
    hull[k++] = points[i];
  }
  for (std::size_t i = points.size() - 1, lower = k + 1; i-- > 0;) {
    while (k >= lower && cross(hull[k - 1] - hull[k - 2], points[i] - hull[k - 2]) <= 0.0) --k;
    hull[k++] = points[i];
  }
  hull.resize(k - 1);
  return hull;
}

double mean_caliper_diameter(const Polygon& polygon) {
  const std::vector<Vec2> hull = convex_hull(polygon.outline);
  double perimeter = 0.0;
  for (std::size_t k = 0; k < hull.size(); ++k)
    perimeter += (hull[(k + 1) % hull.size()] - hull[k]).norm();
  return perimeter / std::numbers::pi;
}

}  // namespace moreau
