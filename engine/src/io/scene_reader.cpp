#include "scene_reader.hpp"

#include "moreau/core/option_table.hpp"

namespace moreau::scene_io {

std::string format_number(double value) { return shortest_text(value); }

std::string describe(const json& value) {
  switch (value.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return value.get<bool>() ? "true" : "false";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
      return format_number(value.get<double>());
    case json::value_t::string: {
      std::string text = value.get<std::string>();
      if (text.size() > 40) text = text.substr(0, 37) + "...";
      return "the string \"" + text + "\"";
    }
    case json::value_t::array:
      return "an array of " + std::to_string(value.size()) + " elements";
    case json::value_t::object:
      return "an object";
    default:
      return "a value of type " + std::string(value.type_name());
  }
}

std::string join(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& word : words) out += (out.empty() ? "" : ", ") + word;
  return out;
}

Vec3 read_point(const Node& node, const Context& context) {
  if (!context.planar()) return node.vec3();
  const std::vector<double> v = node.numbers(2, 3);
  if (v.size() == 3 && v[2] != 0.0)
    node.fail("a 2D scene lies in the z = 0 plane, got z = " + format_number(v[2]));
  return Vec3(v[0], v[1], 0.0);
}

Vec3 read_direction(const Node& node, const Context& context) {
  const Vec3 v = read_point(node, context);
  if (!(v.norm() > 0.0)) node.fail("must be a non-zero vector");
  return v.normalized();
}

int read_material(const Node& node, const Context& context) {
  const std::string name = node.string();
  const auto it = context.materials.find(name);
  if (it == context.materials.end()) {
    std::vector<std::string> known;
    for (const auto& entry : context.materials) known.push_back(entry.first);
    node.fail("unknown material \"" + name + "\"; defined materials: " + join(known));
  }
  return it->second;
}

}  // namespace moreau::scene_io
