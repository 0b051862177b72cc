// Writes the particle families of make_shape_families (Krabbenhoft/NURBS chapter Sec. 4.4) as
// JSON for scripts/draw_shape_families.py:
//   shape_families_json [SEED] > families.json
// Each polygon: its outline (counter-clockwise, about the area centroid), its convex pieces,
// area and mean caliper diameter.
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "moreau/core/error.hpp"
#include "moreau/model/shape_families.hpp"

namespace {

nlohmann::json points(const std::vector<moreau::Vec2>& vertices) {
  nlohmann::json out = nlohmann::json::array();
  for (const moreau::Vec2& v : vertices) out.push_back({v.x(), v.y()});
  return out;
}

nlohmann::json polygon(const moreau::Polygon& p) {
  nlohmann::json pieces = nlohmann::json::array();
  for (const moreau::ConvexPiece& piece : p.pieces) pieces.push_back(points(piece.vertices));
  return {{"outline", points(p.outline)},
          {"pieces", pieces},
          {"area", moreau::polygon_area(p.outline)},
          {"mean_caliper_diameter", moreau::mean_caliper_diameter(p)}};
}

}  // namespace

int main(int argc, char** argv) {
  try {
    moreau::ShapeFamilyOptions options;
    if (argc > 2) throw moreau::InputError("usage: shape_families_json [SEED]");
    if (argc == 2) options.seed = std::stoull(argv[1]);
    const moreau::ShapeFamilies f = moreau::make_shape_families(options);
    nlohmann::json out{{"seed", options.seed},
                       {"mean_diameter", options.mean_diameter},
                       {"size_spread", options.size_spread},
                       {"non_convex", nlohmann::json::array()},
                       {"angular", nlohmann::json::array()},
                       {"disk_radius", f.disk_radius},
                       {"shape_diameter", f.mean_diameter}};
    for (const moreau::Polygon& p : f.non_convex) out["non_convex"].push_back(polygon(p));
    for (const moreau::Polygon& p : f.angular) out["angular"].push_back(polygon(p));
    std::cout << out.dump(1) << '\n';
  } catch (const std::exception& e) {
    std::cerr << "shape_families_json: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
