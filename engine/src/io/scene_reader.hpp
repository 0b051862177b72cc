#pragma once
// The JSON reading of scene files that the parser (scene.cpp), its option tables
// (scene_schema.cpp), the bodies (scene_bodies.cpp) and the generators (scene_generators.cpp)
// share: a Node knows its place in the document, so that every error names the file and the
// JSON path of the value that is wrong. Private to the engine.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "moreau/core/error.hpp"
#include "moreau/core/types.hpp"
#include "moreau/model/world.hpp"

namespace moreau::scene_io {

using json = nlohmann::json;

// Shortest text that reads back to the same double ("0.1", "1e-08", "inf").
std::string format_number(double value);
// A JSON value as a message shows it ("1.5", "the string \"x\"", "an object").
std::string describe(const json& value);
std::string join(const std::vector<std::string>& words);  // "a, b, c"

// A JSON value together with its place in the document, so that every error names the
// file and the JSON path (bodies[3].shape.radius) of the value that is wrong.
class Node {
 public:
  Node(const json& value, std::string path, const std::string& source)
      : value_(&value), path_(std::move(path)), source_(&source) {}

  const json& value() const { return *value_; }
  const std::string& path() const { return path_; }

  [[noreturn]] void fail(const std::string& problem) const {
    std::string message = *source_ + ": ";
    if (!path_.empty()) message += path_ + ": ";
    throw InputError(message + problem);
  }
  [[noreturn]] void fail_type(const std::string& expected) const {
    fail("expected " + expected + ", got " + describe(*value_));
  }

  // Checks that this is an object whose keys are all in `allowed`.
  void expect_object(const std::vector<std::string>& allowed) const {
    if (!value_->is_object()) fail_type("an object");
    for (const auto& item : value_->items()) {
      if (std::find(allowed.begin(), allowed.end(), item.key()) == allowed.end())
        child(item.key()).fail("unknown key; allowed keys here: " + join(allowed));
    }
  }
  bool has(const std::string& key) const { return value_->contains(key); }
  std::optional<Node> find(const std::string& key) const {
    if (!value_->is_object() || !value_->contains(key)) return std::nullopt;
    return child(key);
  }
  // The value at a dotted path of keys below this one ("compatible.enabled"), if present.
  std::optional<Node> find_path(const std::string& path) const {
    const std::size_t dot = path.find('.');
    const std::optional<Node> first = find(path.substr(0, dot));
    if (!first || dot == std::string::npos) return first;
    return first->find_path(path.substr(dot + 1));
  }
  Node get(const std::string& key) const {
    if (!value_->contains(key)) fail("missing required key \"" + key + "\"");
    return child(key);
  }

  std::vector<Node> elements() const {
    if (!value_->is_array()) fail_type("an array");
    std::vector<Node> out;
    for (std::size_t i = 0; i < value_->size(); ++i)
      out.emplace_back((*value_)[i], path_ + "[" + std::to_string(i) + "]", *source_);
    return out;
  }

  double number() const {
    if (!value_->is_number()) fail_type("a number");
    const double x = value_->get<double>();
    if (!std::isfinite(x)) fail("must be a finite number, got " + format_number(x));
    return x;
  }
  double positive() const {
    const double x = number();
    if (!(x > 0.0)) fail("must be > 0, got " + format_number(x));
    return x;
  }
  double non_negative() const {
    const double x = number();
    if (!(x >= 0.0)) fail("must be >= 0, got " + format_number(x));
    return x;
  }
  double in_range(double low, double high) const {
    const double x = number();
    if (!(x >= low && x <= high))
      fail("must lie in [" + format_number(low) + ", " + format_number(high) + "], got " +
           format_number(x));
    return x;
  }
  // An integer in [minimum, maximum]; a float with an integral value (1e3) is accepted. The
  // range is checked on the value as written, before any conversion: 2^63 does not wrap.
  long integer(long minimum, long maximum = std::numeric_limits<long>::max()) const {
    if (!value_->is_number()) fail_type("an integer");
    const auto out_of_range = [&] {
      fail("must lie in [" + std::to_string(minimum) + ", " + std::to_string(maximum) + "], got " +
           describe(*value_));
    };
    if (value_->is_number_unsigned()) {
      const auto x = value_->get<std::uint64_t>();
      if (maximum < 0 || x > static_cast<std::uint64_t>(maximum) ||
          static_cast<long double>(x) < static_cast<long double>(minimum))
        out_of_range();
      return static_cast<long>(x);
    }
    if (value_->is_number_integer()) {
      const auto x = value_->get<std::int64_t>();
      if (x < minimum || x > maximum) out_of_range();
      return static_cast<long>(x);
    }
    const double x = value_->get<double>();
    if (!std::isfinite(x) || x != std::floor(x))
      fail("expected an integer, got " + describe(*value_));
    // 2^63 is the first double above every long; maximum itself may round up to it.
    if (x < static_cast<double>(minimum) || x >= 0x1p63 || x > static_cast<double>(maximum))
      out_of_range();
    const long value = static_cast<long>(x);
    if (value > maximum) out_of_range();
    return value;
  }
  // A stiffness: a number (checked by `read`) or the string "rigid", +infinity.
  template <class Read>
  double stiffness_or_rigid(Read read) const {
    if (!value_->is_string()) return std::invoke(read, *this);
    if (value_->get<std::string>() != "rigid") fail_type("a number or \"rigid\"");
    return std::numeric_limits<double>::infinity();
  }
  bool boolean() const {
    if (!value_->is_boolean()) fail_type("true or false");
    return value_->get<bool>();
  }
  std::string string() const {
    if (!value_->is_string()) fail_type("a string");
    return value_->get<std::string>();
  }
  // One of `options`; the message names what is chosen (a solver, a shape) and lists them.
  std::string choice(const std::vector<std::string>& options,
                     const std::string& what = "value") const {
    const std::string text = string();
    if (std::find(options.begin(), options.end(), text) == options.end())
      fail("unknown " + what + " \"" + text + "\"; expected one of: " + join(options));
    return text;
  }
  // An array of numbers with between `min_size` and `max_size` entries.
  std::vector<double> numbers(std::size_t min_size, std::size_t max_size) const {
    const std::string expected = min_size == max_size
                                     ? "an array of " + std::to_string(min_size) + " numbers"
                                     : "an array of " + std::to_string(min_size) + " to " +
                                           std::to_string(max_size) + " numbers";
    if (!value_->is_array() || value_->size() < min_size || value_->size() > max_size)
      fail_type(expected);
    std::vector<double> out;
    for (const Node& element : elements()) out.push_back(element.number());
    return out;
  }
  Vec3 vec3() const {
    const std::vector<double> v = numbers(3, 3);
    return Vec3(v[0], v[1], v[2]);
  }

 private:
  Node child(const std::string& key) const {
    return Node((*value_)[key], path_.empty() ? key : path_ + "." + key, *source_);
  }

  const json* value_;
  std::string path_;
  const std::string* source_;
};

// Scene-wide facts the parts of the parser share.
struct Context {
  Dimension dimension = Dimension::three;
  std::map<std::string, int> materials;  // name -> index into World::materials
  std::set<std::string> body_names;
  bool planar() const { return dimension == Dimension::two; }
  int active_axes() const { return planar() ? 2 : 3; }
};

// A position or vector of the world: three numbers; a 2D scene also takes two and needs z = 0.
Vec3 read_point(const Node& node, const Context& context);
// A direction; normalized, so it must not be zero.
Vec3 read_direction(const Node& node, const Context& context);
// The index of a material defined in the scene.
int read_material(const Node& node, const Context& context);

}  // namespace moreau::scene_io
