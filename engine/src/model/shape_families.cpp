// Seeded generation of the particle families of the Krabbenhoft/NURBS chapter Sec. 4.4; the
// procedure is documented in shape_families.hpp.
#include "moreau/model/shape_families.hpp"

#include <array>
#include <cmath>
#include <limits>
#include <numbers>
#include <string>

#include "moreau/core/error.hpp"

namespace moreau {
namespace {

using std::numbers::pi;

// Harmonic orders 2..5 of the star-shaped outline and their largest amplitudes; they sum to
// 0.85 < 1, so the radius stays positive and the outline simple.
constexpr std::array<int, 4> kOrders{2, 3, 4, 5};
constexpr std::array<double, 4> kMaxAmplitude{0.35, 0.25, 0.15, 0.10};
// A non-convex shape must fill at most this fraction of its convex hull (solidity), so that
// its concavities are deep enough to interlock.
constexpr double kMaxSolidity = 0.9;
constexpr int kMinCorners = 5;
constexpr int kMaxCorners = 8;

// splitmix64 (Steele, Lea & Flood 2014): a fixed sequence on every platform.
class Random {
 public:
  explicit Random(std::uint64_t seed) : state_(seed) {}
  double uniform() {  // [0, 1) with 53 random bits
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return static_cast<double>((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
  }

 private:
  std::uint64_t state_;
};

bool visibly_non_convex(const std::vector<Vec2>& outline) {
  return polygon_area(outline) <= kMaxSolidity * polygon_area(convex_hull(outline));
}

std::vector<Vec2> star_outline(Random& random, int vertices) {
  std::array<double, 4> amplitude{}, phase{};
  for (std::size_t j = 0; j < kOrders.size(); ++j) {
    amplitude[j] = kMaxAmplitude[j] * random.uniform();
    phase[j] = 2.0 * pi * random.uniform();
  }
  std::vector<Vec2> outline;
  for (int k = 0; k < vertices; ++k) {
    const double phi = 2.0 * pi * k / vertices;
    double r = 1.0;
    for (std::size_t j = 0; j < kOrders.size(); ++j)
      r += amplitude[j] * std::cos(kOrders[j] * phi + phase[j]);
    outline.emplace_back(r * std::cos(phi), r * std::sin(phi));
  }
  return outline;
}

// Removes the corner of least triangle area until `corners` remain (Visvalingam & Whyatt).
std::vector<Vec2> simplify(std::vector<Vec2> hull, int corners) {
  while (static_cast<int>(hull.size()) > corners) {
    const std::size_t n = hull.size();
    std::size_t weakest = 0;
    double least = std::numeric_limits<double>::infinity();
    for (std::size_t k = 0; k < n; ++k) {
      const Vec2 u = hull[k] - hull[(k + n - 1) % n], v = hull[(k + 1) % n] - hull[k];
      const double area = 0.5 * std::abs(u.x() * v.y() - u.y() * v.x());
      if (area < least) least = area, weakest = k;
    }
    hull.erase(hull.begin() + static_cast<long>(weakest));
  }
  return hull;
}

// The polygon of `outline` scaled to mean caliper diameter `diameter`.
Polygon with_diameter(const std::vector<Vec2>& outline, double diameter) {
  const double scale = diameter / mean_caliper_diameter(make_polygon(outline));
  std::vector<Vec2> scaled;
  for (const Vec2& v : outline) scaled.push_back(scale * v);
  return make_polygon(scaled);
}

}  // namespace

ShapeFamilies make_shape_families(const ShapeFamilyOptions& options) {
  if (options.count < 1)
    throw InputError("shape families: count must be >= 1, got " + std::to_string(options.count));
  if (!(options.mean_diameter > 0.0) || !std::isfinite(options.mean_diameter))
    throw InputError("shape families: mean_diameter must be finite and > 0");
  if (!(options.size_spread >= 0.0 && options.size_spread < 1.0))
    throw InputError("shape families: size_spread must lie in [0, 1)");
  if (options.outline_vertices < 8)
    throw InputError("shape families: outline_vertices must be >= 8, got " +
                     std::to_string(options.outline_vertices));
  Random random(options.seed);
  ShapeFamilies families;
  for (int k = 0; k < options.count; ++k) {
    std::vector<Vec2> outline = star_outline(random, options.outline_vertices);
    while (!visibly_non_convex(outline)) outline = star_outline(random, options.outline_vertices);
    const double diameter =
        options.mean_diameter * (1.0 + options.size_spread * (2.0 * random.uniform() - 1.0));
    const int corners =
        kMinCorners + static_cast<int>(random.uniform() * (kMaxCorners - kMinCorners + 1));
    families.non_convex.push_back(with_diameter(outline, diameter));
    families.angular.push_back(with_diameter(simplify(convex_hull(outline), corners), diameter));
    families.disk_radius.push_back(0.5 * diameter);
    families.mean_diameter.push_back(diameter);
  }
  return families;
}

}  // namespace moreau
