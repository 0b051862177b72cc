// Narrow phase of 2D polygons: see polygon_contact.hpp for what is computed and why.
#include "polygon_contact.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>

#include "moreau/core/error.hpp"

namespace moreau::polygon_contact {
namespace {

// Squared distance below which two closest points count as coincident; the normal then comes
// from the separating face instead of their difference.
constexpr double kCoincident = 1e-24;
// Overlap ends closer than this fraction of the two face lengths count as one point, and an
// overlap shorter than that gives no second contact.
constexpr double kOverlapFraction = 1e-9;
// Point pairs of one body pair whose points agree to this fraction of the particle size are
// one contact (two pieces sharing an outline vertex both find it).
constexpr double kDuplicateFraction = 1e-9;
// Two contacts of one body pair coincide, and are one contact, when their linearised gaps
// g + n.(u_b - u_a) differ by less than kMergeFraction of the margin for every relative
// translation within the margin (the motion a step's problem is built for): their points agree
// to delta = kMergeFraction margin and their normals to delta / margin. Such pairs arise where
// two corners meet (each corner's contact lies at or next to the other corner) and make
// nearly equal columns of the contact matrix; the deeper is kept (docs/polygons.md).
constexpr double kMergeFraction = 0.05;
// A vertex whose distance to a piece's edge lines exceeds the margin by this factor is no
// contact of that piece: far above rounding, so that the test never drops a vertex whose
// computed distance lies below the margin.
constexpr double kBeyondMargin = 1.0 + 1e-9;

// A particle's outline placed in the world, computed when first needed (only a vertex inside
// the other particle needs it).
class PlacedOutline {
 public:
  void reset(const Polygon& polygon, const Placement& placement) {
    polygon_ = &polygon;
    placement_ = placement;
    ready_ = false;
  }
  const std::vector<Vec2>& points() {
    if (!ready_) {
      points_.clear();
      for (const Vec2& v : polygon_->outline)
        points_.push_back(placement_.rotation * v + placement_.translation);
      ready_ = true;
    }
    return points_;
  }

 private:
  const Polygon* polygon_ = nullptr;
  Placement placement_;
  std::vector<Vec2> points_;
  bool ready_ = false;
};

// A convex piece placed in the world, with its edges k -> k + 1 and their outward unit normals.
// Its arrays are reused from pair to pair (a thread's Workspace, below), so that placing a piece
// allocates nothing.
struct Piece {
  std::vector<Vec2> vertex;
  std::vector<Vec2> edge;     // vertex[k + 1] - vertex[k]
  std::vector<double> edge2;  // |edge[k]|^2
  std::vector<Vec2> normal;
  const ConvexPiece* source = nullptr;
  int feature_offset = 0;  // the side's feature offset (PointPair::feature)
  int index = 0;           // of the piece in its particle
  Vec2 centre = Vec2::Zero();
  double radius = 0.0;
  PlacedOutline* outline = nullptr;  // the particle's outline, placed
  bool whole = false;                // the piece is the whole (convex) particle
  bool placed = false;
  int size() const { return static_cast<int>(vertex.size()); }
  const Vec2& next(int k) const { return vertex[k + 1 == size() ? 0 : k + 1]; }
  // The vertex's outline index + the side's feature offset.
  int feature(int k) const { return feature_offset + source->outline_index[k]; }
  bool external(int k) const { return source->external[k] != 0; }
};

void place(Piece& out, const Polygon& polygon, int index, const Placement& p,
           PlacedOutline& outline, int offset) {
  const ConvexPiece& piece = polygon.pieces[index];
  if (piece.outline_index.size() != piece.vertices.size())
    throw InputError(
        "polygon narrow phase: a convex piece without its outline indices (build "
        "polygons with make_polygon)");
  out.source = &piece;
  out.feature_offset = offset;
  out.index = index;
  out.centre = p.rotation * piece.centre + p.translation;
  out.radius = piece.radius;
  out.outline = &outline;
  out.whole = polygon.pieces.size() == 1;
  out.vertex.clear();
  for (const Vec2& v : piece.vertices) out.vertex.push_back(p.rotation * v + p.translation);
  out.edge.clear();
  out.edge2.clear();
  out.normal.clear();
  for (int k = 0; k < out.size(); ++k) {
    const Vec2 edge = out.next(k) - out.vertex[k];
    out.edge.push_back(edge);
    out.edge2.push_back(edge.squaredNorm());
    out.normal.push_back(Vec2(edge.y(), -edge.x()).normalized());  // outward for CCW
  }
  out.placed = true;
}

struct Face {
  double separation = -std::numeric_limits<double>::infinity();
  int edge = -1;
};

// Separating axis test over the edges of p: the largest, over edges k, of the smallest
// n_k.(w - p_k) over the vertices w of q. Positive: the pieces are apart by at least that much.
Face best_face(const Piece& p, const Piece& q) {
  Face best;
  for (int k = 0; k < p.size(); ++k) {
    double lowest = std::numeric_limits<double>::infinity();
    for (const Vec2& w : q.vertex) lowest = std::min(lowest, p.normal[k].dot(w - p.vertex[k]));
    if (lowest > best.separation) best = Face{lowest, k};
  }
  return best;
}

// Vertex of p farthest along d (lowest index on ties).
int support_vertex(const Piece& p, const Vec2& d) {
  int best = 0;
  for (int k = 1; k < p.size(); ++k)
    if (d.dot(p.vertex[k]) > d.dot(p.vertex[best])) best = k;
  return best;
}

// Edge of p whose outward normal is closest to d.
int facing_edge(const Piece& p, const Vec2& d) {
  int best = 0;
  for (int k = 1; k < p.size(); ++k)
    if (d.dot(p.normal[k]) > d.dot(p.normal[best])) best = k;
  return best;
}

// Closest point to x of the segment [p, q]; t receives its unclamped parameter.
Vec2 on_segment(const Vec2& p, const Vec2& q, const Vec2& x, double& t) {
  const Vec2 d = q - p;
  t = d.dot(x - p) / d.squaredNorm();
  return p + std::clamp(t, 0.0, 1.0) * d;
}

// Closest point to x of the edges of a piece; `inside_particle` when it lies inside a diagonal
// of the decomposition (not on the particle's outline: every piece corner is an outline vertex,
// so only the open diagonal is inside), `on_edge` when it lies strictly inside edge `edge`.
struct Nearest {
  Vec2 point;
  double distance2 = std::numeric_limits<double>::infinity();
  int edge = -1;
  bool on_edge = false;
  bool inside_particle = false;
};

Nearest closest_on_outline(const Piece& p, const Vec2& x) {
  Nearest best;
  for (int k = 0; k < p.size(); ++k) {
    // on_segment with the piece's stored edge
    const double t = p.edge[k].dot(x - p.vertex[k]) / p.edge2[k];
    const Vec2 q = p.vertex[k] + std::clamp(t, 0.0, 1.0) * p.edge[k];
    const double d2 = (q - x).squaredNorm();
    const bool interior = t > 0.0 && t < 1.0;
    if (d2 < best.distance2) best = Nearest{q, d2, k, interior, !p.external(k) && interior};
  }
  return best;
}

// The largest n_k.(x - p_k) over the edges of the convex piece p: x lies outside p when it is
// positive, and is then at least that far from p.
double edge_line_distance(const Piece& p, const Vec2& x) {
  double outside = -std::numeric_limits<double>::infinity();
  for (int k = 0; k < p.size(); ++k) outside = std::max(outside, p.normal[k].dot(x - p.vertex[k]));
  return outside;
}

bool outside_piece(const Piece& p, const Vec2& x) { return edge_line_distance(p, x) > 0.0; }

// Closest point to x of a particle's outline (counter-clockwise), with the outward normal of
// its edge when it lies strictly inside one (`on_edge`).
struct OutlinePoint {
  Vec2 point;
  double distance2 = std::numeric_limits<double>::infinity();
  Vec2 outward = Vec2::Zero();
  bool on_edge = false;
};

OutlinePoint nearest_on_outline(const std::vector<Vec2>& outline, const Vec2& x) {
  OutlinePoint best;
  const std::size_t n = outline.size();
  for (std::size_t k = 0; k < n; ++k) {
    const Vec2 &p = outline[k], &q = outline[(k + 1) % n];
    double t = 0.0;
    const Vec2 y = on_segment(p, q, x, t);
    const double d2 = (y - x).squaredNorm();
    if (d2 < best.distance2)
      best =
          OutlinePoint{y, d2, Vec2(q.y() - p.y(), p.x() - q.x()).normalized(), t > 0.0 && t < 1.0};
  }
  return best;
}

// The contact of a point x inside a particle with the particle's outline (eq. 4.1: the closest
// point on the whole outline, not on the piece x lies in, whose diagonals are inside): the
// normal from x towards the particle, i.e. minus the outward normal where the closest point
// lies inside an edge, else along x - y; the gap minus the distance.
PointPair inside_particle(const std::vector<Vec2>& outline, const Vec2& x) {
  const OutlinePoint y = nearest_on_outline(outline, x);
  const double distance = std::sqrt(y.distance2);
  const Vec2 n =
      !y.on_edge && y.distance2 > kCoincident ? Vec2((x - y.point) / distance) : Vec2(-y.outward);
  return PointPair{n, x, y.point, -distance};
}

// Closest points of two disjoint convex pieces: for convex polygons the minimum is reached
// between a vertex of one and an edge of the other. False when they lie inside a diagonal of
// a non-convex particle: the pair is then not a contact of the particles' outlines (the piece
// across that diagonal is nearer and reports the contact).
// `near_a` and `near_b`: the closest points on a of b's vertices and on b of a's, where the
// vertex contacts computed them (distance2 infinite where not).
bool closest_points(const Piece& a, const Piece& b, const std::vector<Nearest>& near_a,
                    const std::vector<Nearest>& near_b, Vec2& on_a, Vec2& on_b) {
  auto nearest = [](const Piece& p, const Vec2& w, const Nearest& known) {
    return std::isinf(known.distance2) ? closest_on_outline(p, w) : known;
  };
  Nearest best;
  for (int k = 0; k < b.size(); ++k) {
    const Vec2& w = b.vertex[k];
    const Nearest q = nearest(a, w, near_a[k]);
    if (q.distance2 < best.distance2) best = q, on_a = q.point, on_b = w;
  }
  for (int k = 0; k < a.size(); ++k) {
    const Vec2& w = a.vertex[k];
    const Nearest q = nearest(b, w, near_b[k]);
    if (q.distance2 < best.distance2) best = q, on_a = w, on_b = q.point;
  }
  return !best.inside_particle;
}

// The knot-to-surface contact of a vertex x of the other particle with piece p (Krabbenhoft/NURBS
// chapter eq. 4.1-4.2 with the vertex as the knot): its closest point y, the unit normal n from x
// towards p's particle and the signed gap (y - x).n. Outside p: y is p's closest point and the
// gap the Euclidean distance, none when y lies inside a diagonal (the piece across it is nearer
// and reports x). Inside p: y is the closest point of the particle's outline and the gap minus
// the distance, so that the overlap is resolved through the outline, never through a diagonal.
// Where y lies inside an edge, n is minus that edge's outward normal; at a corner, n points from
// x to the corner.
// `y` receives the closest point where x lies outside p within the margin.
std::optional<PointPair> vertex_on_piece(const Piece& p, const Vec2& x, double margin, Nearest& y) {
  const double outside = edge_line_distance(p, x);
  if (!(outside > 0.0)) return inside_particle(p.outline->points(), x);
  // Its distance to p is at least `outside`: beyond the margin it is no contact (the slack
  // keeps rounding in the distance from deciding).
  if (outside > kBeyondMargin * margin) return std::nullopt;
  y = closest_on_outline(p, x);
  if (y.inside_particle) return std::nullopt;
  const double distance = std::sqrt(y.distance2);
  const Vec2 n = !y.on_edge && y.distance2 > kCoincident ? Vec2((y.point - x) / distance)
                                                         : Vec2(-p.normal[y.edge]);
  return PointPair{n, x, y.point, distance};
}

// Point of the segment [p0, p1] whose tangential coordinate t.x is s.
Vec2 at_tangential(const Vec2& p0, const Vec2& p1, const Vec2& t, double s) {
  return p0 + (s - t.dot(p0)) / t.dot(p1 - p0) * (p1 - p0);
}

// The two ends of the overlap of face e of a and face f of b, seen along n (from a to b), as
// point pairs with their gaps along n. Fewer when the overlap is shorter than the tolerance.
int overlap_ends(const Piece& a, int e, const Piece& b, int f, const Vec2& n,
                 std::array<PointPair, 2>& ends) {
  const Vec2 t(-n.y(), n.x());
  const Vec2 &a0 = a.vertex[e], &a1 = a.next(e), &b0 = b.vertex[f], &b1 = b.next(f);
  const double lo = std::max(std::min(t.dot(a0), t.dot(a1)), std::min(t.dot(b0), t.dot(b1)));
  const double hi = std::min(std::max(t.dot(a0), t.dot(a1)), std::max(t.dot(b0), t.dot(b1)));
  if (!(hi - lo > kOverlapFraction * ((a1 - a0).norm() + (b1 - b0).norm()))) return 0;
  int count = 0;
  for (const double s : {lo, hi}) {
    const Vec2 pa = at_tangential(a0, a1, t, s);
    const Vec2 pb = at_tangential(b0, b1, t, s);
    ends[count++] = PointPair{n, pa, pb, n.dot(pb - pa)};
  }
  return count;
}

// The deepest point of an overlap whose least-overlap axis is the normal of face e of a (n from
// a to b): the corner of b deepest along -n when it lies over face e (the exact depth), else the
// deeper end of the overlap of face e with b's facing face (a corner of b beyond the end of e,
// inside a at an obtuse corner; the depth there is measured at the end of e).
PointPair deepest_over_face(const Piece& a, int e, const Piece& b, const Vec2& n,
                            double separation) {
  const Vec2 pb = b.vertex[support_vertex(b, -n)];
  const Vec2 t(-n.y(), n.x());
  const double lo = std::min(t.dot(a.vertex[e]), t.dot(a.next(e)));
  const double hi = std::max(t.dot(a.vertex[e]), t.dot(a.next(e)));
  const double slack = kOverlapFraction * (hi - lo);
  PointPair deepest{n, pb - separation * n, pb, separation};
  if (t.dot(pb) >= lo - slack && t.dot(pb) <= hi + slack) return deepest;
  std::array<PointPair, 2> ends;
  const int count = overlap_ends(a, e, b, facing_edge(b, -n), n, ends);
  if (count == 0) return deepest;
  return ends[0].gap <= ends[1].gap ? ends[0] : ends[1];
}

PointPair flipped(const PointPair& p) {
  return PointPair{-p.normal, p.point_b, p.point_a, p.gap, p.feature};
}

// The pair's exact signed distance (Euclidean distance when apart, minus the penetration depth
// along the separating axis of least overlap when overlapping) as one point pair; none when
// the closest points lie inside a diagonal of a non-convex particle.
std::optional<PointPair> exact_pair(const Piece& a, const Piece& b, const Face& face_a,
                                    const Face& face_b, const std::vector<Nearest>& near_a,
                                    const std::vector<Nearest>& near_b) {
  if (std::max(face_a.separation, face_b.separation) > 0.0) {
    Vec2 on_a = a.vertex[0], on_b = b.vertex[0];
    if (!closest_points(a, b, near_a, near_b, on_a, on_b)) return std::nullopt;
    const double d2 = (on_b - on_a).squaredNorm();
    const double distance = std::sqrt(d2);
    const Vec2 n = d2 > kCoincident                         ? Vec2((on_b - on_a) / distance)
                   : face_a.separation >= face_b.separation ? a.normal[face_a.edge]
                                                            : Vec2(-b.normal[face_b.edge]);
    return PointPair{n, on_a, on_b, distance};
  }
  // Overlap of two convex particles: the axis of least overlap. A piece of a non-convex
  // particle has diagonals, across which its own axes measure no overlap of the particles (a
  // corner just across a diagonal would read as deep as the piece is wide): its vertices'
  // contacts, measured to the whole outline, stand for the overlap.
  if (!a.whole || !b.whole) return std::nullopt;
  if (face_a.separation >= face_b.separation)
    return deepest_over_face(a, face_a.edge, b, a.normal[face_a.edge], face_a.separation);
  return flipped(deepest_over_face(b, face_b.edge, a, b.normal[face_b.edge], face_b.separation));
}

// Index into the vertex contacts of a pair (vertices of a, then of b) of the vertex at which
// `pair` sits, or -1.
int vertex_slot(const Piece& a, const Piece& b, const PointPair& pair, double tolerance2) {
  for (int k = 0; k < a.size(); ++k)
    if ((a.vertex[k] - pair.point_a).squaredNorm() <= tolerance2) return k;
  for (int k = 0; k < b.size(); ++k)
    if ((b.vertex[k] - pair.point_b).squaredNorm() <= tolerance2) return a.size() + k;
  return -1;
}

// The arrays of one pair of pieces, kept by a thread's Workspace.
struct PairArrays {
  std::vector<std::optional<PointPair>> slot;
  std::vector<Nearest> near_a, near_b;  // see closest_points
};

// The vertex-within-margin rule (docs/polygons.md): one contact for every vertex of either
// piece whose signed distance to the other piece is below the margin, in the order of the
// vertices (a's, then b's), so that the order within a pair does not change while the set of
// vertices within the margin does not. The pair's exact signed distance takes the place of the
// contact of its vertex (it is never shallower: a vertex inside the other piece is at most the
// penetration depth from its outside), or is appended when no vertex contact sits there.
void convex_pair(const Piece& a, const Piece& b, double margin, int stride, int exact_feature,
                 PairArrays& arrays, std::vector<PointPair>& out) {
  // Every vertex is at least the separation away from the other piece.
  const Face face_a = best_face(a, b);
  if (!(face_a.separation < margin)) return;
  const Face face_b = best_face(b, a);
  if (!(face_b.separation < margin)) return;
  std::vector<std::optional<PointPair>>& slot = arrays.slot;
  slot.assign(a.size() + b.size(), std::nullopt);
  arrays.near_a.assign(b.size(), Nearest{});
  arrays.near_b.assign(a.size(), Nearest{});
  for (int k = 0; k < a.size(); ++k)
    if (const auto pair = vertex_on_piece(b, a.vertex[k], margin, arrays.near_b[k]);
        pair && pair->gap < margin)
      slot[k] = pair, slot[k]->feature = a.feature(k) * stride + b.index;
  for (int k = 0; k < b.size(); ++k)
    if (const auto pair = vertex_on_piece(a, b.vertex[k], margin, arrays.near_a[k]);
        pair && pair->gap < margin)
      slot[a.size() + k] = flipped(*pair),
                      slot[a.size() + k]->feature = b.feature(k) * stride + a.index;
  std::optional<PointPair> exact = exact_pair(a, b, face_a, face_b, arrays.near_a, arrays.near_b);
  const bool has_exact = exact && exact->gap < margin;
  int exact_slot = -1;
  if (has_exact) {
    const double size = a.radius + b.radius;
    exact_slot = vertex_slot(a, b, *exact, std::pow(kDuplicateFraction * size, 2));
    exact->feature = exact_slot < 0          ? exact_feature
                     : exact_slot < a.size() ? a.feature(exact_slot) * stride + b.index
                                             : b.feature(exact_slot - a.size()) * stride + a.index;
    if (exact_slot >= 0 && (!slot[exact_slot] || exact->gap < slot[exact_slot]->gap))
      slot[exact_slot] = exact;
  }
  for (const auto& s : slot)
    if (s) out.push_back(*s);
  if (has_exact && exact_slot < 0) out.push_back(*exact);
}

// The disk's closest point on the piece (Euclidean distance when the centre is outside, minus
// the depth through the nearest outline face when inside); none when it lies inside a diagonal.
std::optional<PointPair> disk_closest(const Vec2& c, double r, const Piece& p) {
  if (outside_piece(p, c)) {
    const Nearest nearest = closest_on_outline(p, c);
    if (nearest.inside_particle) return std::nullopt;  // the piece across the diagonal reports it
    const Vec2 q = nearest.point;
    const double distance = std::sqrt(nearest.distance2);
    const Vec2 n = (q - c) / distance;  // > 0: the centre is outside
    return PointPair{n, c + r * n, q, distance - r};
  }
  // The centre inside the particle: through the whole outline (as a vertex inside, above).
  const PointPair centre = inside_particle(p.outline->points(), c);
  return PointPair{centre.normal, c + r * centre.normal, centre.point_b, centre.gap - r};
}

// The disk's closest point, then every corner of the piece within the margin of the circle (its
// gap |v - c| - r along the radius through it), in vertex order; a corner that is the closest
// point is reported once.
void disk_piece(const Vec2& c, double r, const Piece& p, double margin, int closest_feature,
                std::vector<PointPair>& out) {
  if (auto closest = disk_closest(c, r, p); closest && closest->gap < margin) {
    closest->feature = closest_feature;
    out.push_back(*closest);
  }
  for (int k = 0; k < p.size(); ++k) {
    const Vec2& v = p.vertex[k];
    const double distance = (v - c).norm();
    if (!(distance - r < margin) || !(distance * distance > kCoincident)) continue;
    const Vec2 n = (v - c) / distance;
    out.push_back(PointPair{n, c + r * n, v, distance - r, p.feature(k)});
  }
}

// Appends the pairs of `found` whose feature no earlier pair of out[first..] has: two pieces
// sharing an outline vertex both find its contact with a piece of the other particle (the
// same two points); the deeper is kept.
void append_unique(std::vector<PointPair>& out, std::size_t first,
                   const std::vector<PointPair>& found) {
  for (const PointPair& q : found) {
    std::size_t k = first;
    while (k < out.size() && out[k].feature != q.feature) ++k;
    if (k == out.size())
      out.push_back(q);
    else if (q.gap < out[k].gap)
      out[k] = q;
  }
}

// Whether two contacts of one body pair coincide: the same two points (to kDuplicateFraction
// of the particle size: a vertex inside the other particle whose closest outline point is a
// corner, and that corner outside the vertex's piece, found with opposite normals and gaps), or
// points within delta and normals within delta / margin of each other (kMergeFraction).
bool coincide(const PointPair& p, const PointPair& q, double same, double delta, double margin) {
  const double a2 = (p.point_a - q.point_a).squaredNorm(),
               b2 = (p.point_b - q.point_b).squaredNorm();
  if (a2 <= same * same && b2 <= same * same) return true;
  return a2 <= delta * delta && b2 <= delta * delta &&
         (margin * (p.normal - q.normal)).squaredNorm() <= delta * delta;
}

// Replaces each group of coinciding contacts of out[first..] (connected by `coincide`, so the
// result does not depend on the order in which they were found) by its deepest, which is the
// one that constrains the overlap (e.g. a corner inside the other particle whose closest
// outline point is a corner, and that corner's contact, with the opposite normal and gap). It
// takes the group's lowest feature, so that the contact keeps its identity while the other
// corner enters and leaves the margin.
void merge_coinciding(std::vector<PointPair>& out, std::size_t first, double scale, double margin) {
  const double same = kDuplicateFraction * scale;
  const double delta = std::max(kMergeFraction * margin, same);
  const std::size_t n = out.size() - first;
  std::vector<std::size_t> group(n);
  for (std::size_t i = 0; i < n; ++i) group[i] = i;
  auto root = [&](std::size_t i) {
    while (group[i] != i) i = group[i] = group[group[i]];
    return i;
  };
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (coincide(out[first + i], out[first + j], same, delta, margin)) group[root(i)] = root(j);
  std::vector<std::size_t> deepest(n, n);
  std::vector<int> feature(n, std::numeric_limits<int>::max());
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t g = root(i);
    if (deepest[g] == n || out[first + i].gap < out[first + deepest[g]].gap) deepest[g] = i;
    feature[g] = std::min(feature[g], out[first + i].feature);
  }
  std::vector<PointPair> kept;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t g = root(i);
    if (deepest[g] != i) continue;
    kept.push_back(out[first + i]);
    kept.back().feature = feature[g];
  }
  out.resize(first);
  out.insert(out.end(), kept.begin(), kept.end());
}

// What one thread's narrow phase of polygons reuses from pair to pair.
struct Workspace {
  PlacedOutline outline_a, outline_b;
  Piece piece_a;
  std::vector<Piece> placed_b;
  std::vector<Vec2> centres_b;
  std::vector<PointPair> found;
  PairArrays arrays;
};

Workspace& workspace() {
  thread_local Workspace w;
  return w;
}

}  // namespace

void polygon_polygon(const Polygon& a, const Placement& pa, const Polygon& b, const Placement& pb,
                     double margin, std::vector<PointPair>& out) {
  const std::size_t first = out.size();
  const int vertices_a = static_cast<int>(a.outline.size());
  const int vertices = vertices_a + static_cast<int>(b.outline.size());
  // A vertex's contact with each piece of the other particle is its own (a corner in a concave
  // pocket touches two pieces): feature = vertex * stride + piece.
  const int stride = static_cast<int>(std::max(a.pieces.size(), b.pieces.size()));
  // Pieces are placed only when their bounding circles come within the margin of a piece of
  // the other particle; most pairs of pieces of two touching particles are culled so.
  auto centre = [](const ConvexPiece& piece, const Placement& p) {
    return Vec2(p.rotation * piece.centre + p.translation);
  };
  Workspace& w = workspace();
  w.outline_a.reset(a, pa);
  w.outline_b.reset(b, pb);
  w.centres_b.clear();
  for (const ConvexPiece& piece : b.pieces) w.centres_b.push_back(centre(piece, pb));
  if (w.placed_b.size() < b.pieces.size()) w.placed_b.resize(b.pieces.size());
  for (std::size_t j = 0; j < b.pieces.size(); ++j) w.placed_b[j].placed = false;
  for (std::size_t i = 0; i < a.pieces.size(); ++i) {
    const ConvexPiece& piece = a.pieces[i];
    const Vec2 centre_a = centre(piece, pa);
    w.piece_a.placed = false;
    for (std::size_t j = 0; j < b.pieces.size(); ++j) {
      const double reach = piece.radius + b.pieces[j].radius + margin;
      if ((centre_a - w.centres_b[j]).squaredNorm() > reach * reach) continue;
      if (!w.piece_a.placed) place(w.piece_a, a, static_cast<int>(i), pa, w.outline_a, 0);
      if (!w.placed_b[j].placed)
        place(w.placed_b[j], b, static_cast<int>(j), pb, w.outline_b, vertices_a);
      w.found.clear();
      const int exact_feature = vertices * stride + static_cast<int>(i * b.pieces.size() + j);
      convex_pair(w.piece_a, w.placed_b[j], margin, stride, exact_feature, w.arrays, w.found);
      append_unique(out, first, w.found);
    }
  }
  merge_coinciding(out, first, a.radius + b.radius, margin);
}

void disk_polygon(const Vec2& centre, double radius, const Polygon& b, const Placement& pb,
                  double margin, std::vector<PointPair>& out) {
  const std::size_t first = out.size();
  Workspace& w = workspace();
  w.outline_b.reset(b, pb);
  const int vertices = static_cast<int>(b.outline.size());
  for (std::size_t j = 0; j < b.pieces.size(); ++j) {
    const ConvexPiece& piece = b.pieces[j];
    const double reach = piece.radius + radius + margin;
    if ((Vec2(pb.rotation * piece.centre + pb.translation) - centre).squaredNorm() > reach * reach)
      continue;
    Piece& p = w.piece_a;
    place(p, b, static_cast<int>(j), pb, w.outline_b, 0);
    w.found.clear();
    disk_piece(centre, radius, p, margin, vertices + static_cast<int>(j), w.found);
    append_unique(out, first, w.found);
  }
  merge_coinciding(out, first, b.radius + radius, margin);
}

// Every outline vertex below the margin, in vertex order (the vertex-within-margin rule of
// docs/polygons.md against a wall: the knots of the chapter's slave surface within reach of a
// flat master surface, Krabbenhoft/NURBS chapter eq. 4.1-4.2).
void polygon_halfspace(const Polygon& a, const Placement& pa, const Vec2& point, const Vec2& normal,
                       double margin, std::vector<PointPair>& out) {
  for (int k = 0; k < static_cast<int>(a.outline.size()); ++k) {
    const Vec2 w = pa.rotation * a.outline[k] + pa.translation;
    const double height = normal.dot(w - point);
    if (height < margin) out.push_back(PointPair{-normal, w, w - height * normal, height, k});
  }
}

Polygon box_polygon(const Vec2& h) {
  return make_polygon({Vec2(-h.x(), -h.y()), Vec2(h.x(), -h.y()), h, Vec2(-h.x(), h.y())});
}

}  // namespace moreau::polygon_contact
