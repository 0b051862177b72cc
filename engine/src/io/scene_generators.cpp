#include "scene_generators.hpp"

#include <array>
#include <cmath>
#include <random>

#include "moreau/io/scene.hpp"
#include "scene_bodies.hpp"
#include "sphere_placement.hpp"

namespace moreau::scene_io {
namespace {

// Attempts to place one sphere by rejection: the time before a placement that cannot succeed
// is reported stays in seconds.
constexpr long kMaxPlacementAttempts = 1000000;

// Bodies a generator may still add: the scene's bound (kMaxSceneBodies) is checked before any
// body is made, so that a count cannot make the reader allocate without limit.
long bodies_left(const World& world, const Node& count) {
  const long left = static_cast<long>(kMaxSceneBodies) - static_cast<long>(world.bodies.size());
  if (left < 1)
    count.fail("the scene already holds " + std::to_string(world.bodies.size()) +
               " bodies, its limit (" + std::to_string(kMaxSceneBodies) + ")");
  return left;
}

// Uniform in [0, 1) with 53 random bits from two mt19937 draws (Matsumoto and Nishimura's
// genrand_res53). Unlike std::uniform_real_distribution, whose algorithm each standard
// library picks, it gives the same numbers everywhere, so a seed gives the same scene.
std::mt19937 make_rng(const Node& node) {
  const long seed = node.has("seed") ? node.get("seed").integer(0, 4294967295L) : 1;
  return std::mt19937(static_cast<std::mt19937::result_type>(seed));
}

std::string generator_name(const Node& node, const std::string& type, std::size_t index) {
  return node.has("name") ? node.get("name").string() : type + std::to_string(index);
}

const char* const kAxisNames[3] = {"x", "y", "z"};

// Per-axis spacing: one number for all axes or one per axis (2 or 3 in 2D, 3 in 3D), > 0.
Vec3 read_per_axis(const Node& node, const Context& context) {
  if (node.value().is_number()) return Vec3::Constant(node.positive());
  const std::vector<double> v = context.planar() ? node.numbers(2, 3) : node.numbers(3, 3);
  const std::vector<Node> entries = node.elements();
  for (int axis = 0; axis < context.active_axes(); ++axis) entries[axis].positive();
  return Vec3(v[0], v[1], v.size() == 3 ? v[2] : 1.0);
}

void generate_grid(const Node& node, std::size_t index, World& world, Context& context) {
  std::vector<std::string> allowed = {"type",  "name",    "shape",  "origin",
                                      "count", "spacing", "jitter", "seed"};
  allowed.insert(allowed.end(), kBodyPropertyKeys.begin(), kBodyPropertyKeys.end());
  node.expect_object(allowed);
  const std::string name = generator_name(node, "grid", index);
  const Node shape_node = node.get("shape");
  const Shape shape = read_shape(shape_node, context);
  if (std::holds_alternative<HalfSpace>(shape.geometry))
    shape_node.fail(
        "a grid of half-spaces is not a thing; use a \"container\" generator or bodies");
  const BodyProperties properties = read_body_properties(node, context);

  const Node count_node = node.get("count");
  std::array<long, 3> count = {1, 1, 1};
  {
    const std::vector<Node> entries = count_node.elements();
    if (entries.size() != 3 && !(context.planar() && entries.size() == 2))
      count_node.fail_type(context.planar() ? "an array of 2 integers [nx, ny]"
                                            : "an array of 3 integers [nx, ny, nz]");
    const long room = bodies_left(world, count_node);
    for (std::size_t axis = 0; axis < entries.size(); ++axis)
      count[axis] = entries[axis].integer(1);
    if (static_cast<double>(count[0]) * static_cast<double>(count[1]) *
            static_cast<double>(count[2]) >
        static_cast<double>(room))
      count_node.fail(std::to_string(count[0]) + " x " + std::to_string(count[1]) + " x " +
                      std::to_string(count[2]) + " bodies would take the scene past its limit of " +
                      std::to_string(kMaxSceneBodies) + " bodies");
    if (context.planar() && count[2] != 1)
      entries[2].fail("a 2D grid has one layer in z, got " + std::to_string(count[2]));
  }
  Vec3 origin = Vec3::Zero();
  if (auto o = node.find("origin")) origin = read_point(*o, context);
  const Node spacing_node = node.get("spacing");
  const Vec3 spacing = read_per_axis(spacing_node, context);
  const double jitter = node.has("jitter") ? node.get("jitter").non_negative() : 0.0;

  // Neighbouring sites differ along at least one axis with several sites, and along that
  // axis their boxes stay apart when spacing >= 2 (half extent + jitter): no overlaps.
  const Vec3 half = aabb_half_extents(shape.geometry, properties.orientation.toRotationMatrix());
  for (int axis = 0; axis < context.active_axes(); ++axis) {
    const double needed = 2.0 * (half(axis) + jitter);
    if (count[axis] > 1 && spacing(axis) < needed)
      spacing_node.fail(std::string("bodies would overlap: spacing along ") + kAxisNames[axis] +
                        " is " + format_number(spacing(axis)) + ", needs >= " +
                        format_number(needed) + " (2 x (shape half extent + jitter))");
  }

  std::mt19937 rng = make_rng(node);
  long k = 0;
  for (long iz = 0; iz < count[2]; ++iz)
    for (long iy = 0; iy < count[1]; ++iy)
      for (long ix = 0; ix < count[0]; ++ix) {
        Vec3 position = origin + Vec3(ix * spacing.x(), iy * spacing.y(), iz * spacing.z());
        if (jitter > 0.0)
          for (int axis = 0; axis < context.active_axes(); ++axis)
            position(axis) += detail::uniform(rng, -jitter, jitter);
        world.add_body(make_body(node, properties, shape, position,
                                 name + "_" + std::to_string(k++), world, context));
      }
}

void generate_random_spheres(const Node& node, std::size_t index, World& world, Context& context) {
  node.expect_object({"type", "name", "count", "radius_min", "radius_max", "box_min", "box_max",
                      "seed", "placement", "spacing", "max_attempts", "material", "motion",
                      "rotation_locked", "velocity", "angular_velocity"});
  const std::string name = generator_name(node, "random_spheres", index);
  const BodyProperties properties = read_body_properties(node, context);
  const Node count_node = node.get("count");
  const long count = count_node.integer(1);
  if (count > bodies_left(world, count_node))
    count_node.fail(std::to_string(count) + " bodies would take the scene past its limit of " +
                    std::to_string(kMaxSceneBodies) + " bodies");
  const double radius_min = node.get("radius_min").positive();
  double radius_max = radius_min;
  if (auto r = node.find("radius_max")) {
    radius_max = r->number();
    if (radius_max < radius_min)
      r->fail("must be >= radius_min = " + format_number(radius_min) + ", got " +
              format_number(radius_max));
  }
  const Vec3 box_min = read_point(node.get("box_min"), context);
  const Node box_max_node = node.get("box_max");
  const Vec3 box_max = read_point(box_max_node, context);
  for (int axis = 0; axis < context.active_axes(); ++axis)
    if (box_max(axis) - box_min(axis) < 2.0 * radius_max)
      box_max_node.fail(std::string("the box must be at least 2 radius_max = ") +
                        format_number(2.0 * radius_max) + " wide along " + kAxisNames[axis] +
                        ", got " + format_number(box_max(axis) - box_min(axis)));
  const bool lattice =
      node.has("placement") && node.get("placement").choice({"rejection", "lattice"}) == "lattice";
  if (!lattice && node.has("spacing"))
    node.get("spacing").fail("applies to \"placement\": \"lattice\" only");
  if (lattice && node.has("max_attempts"))
    node.get("max_attempts").fail("applies to \"placement\": \"rejection\" only");

  detail::SpherePlacement placement;
  placement.axes = context.active_axes();
  placement.count = count;
  placement.radius_min = radius_min;
  placement.radius_max = radius_max;
  placement.box_min = box_min;
  placement.box_max = box_max;
  placement.centres.reserve(count);
  placement.radii.reserve(count);
  std::mt19937 rng = make_rng(node);
  if (lattice) {
    double spacing = 2.0 * radius_max;
    if (auto s = node.find("spacing")) {
      spacing = s->positive();
      if (spacing < 2.0 * radius_max)
        s->fail("must be >= 2 radius_max = " + format_number(2.0 * radius_max) + ", got " +
                format_number(spacing));
    }
    const std::array<long, 3> sites = detail::lattice_sites(placement, spacing);
    const long capacity = sites[0] * sites[1] * sites[2];
    if (capacity < count)
      node.get("count").fail("the box holds only " + std::to_string(capacity) +
                             " lattice sites of spacing " + format_number(spacing) + " for " +
                             std::to_string(count) + " spheres");
    detail::place_on_lattice(placement, spacing, rng);
  } else {
    const long max_attempts = node.has("max_attempts")
                                  ? node.get("max_attempts").integer(1, kMaxPlacementAttempts)
                                  : 1000;
    try {
      detail::place_by_rejection(placement, max_attempts, rng);
    } catch (const InputError& e) {
      node.get("count").fail(e.what());
    }
  }
  for (std::size_t k = 0; k < placement.centres.size(); ++k) {
    Shape shape;
    shape.geometry = Sphere{placement.radii[k]};
    world.add_body(make_body(node, properties, shape, placement.centres[k],
                             name + "_" + std::to_string(k), world, context));
  }
}

void generate_container(const Node& node, std::size_t index, World& world, Context& context) {
  node.expect_object({"type", "name", "min", "max", "open_top", "material"});
  const std::string name = generator_name(node, "container", index);
  const Vec3 low = read_point(node.get("min"), context);
  const Node max_node = node.get("max");
  const Vec3 high = read_point(max_node, context);
  for (int axis = 0; axis < context.active_axes(); ++axis)
    if (!(high(axis) > low(axis)))
      max_node.fail(std::string("must exceed min along ") + kAxisNames[axis] + ", got " +
                    format_number(high(axis)) + " <= " + format_number(low(axis)));
  const bool open_top = node.has("open_top") ? node.get("open_top").boolean() : true;
  BodyProperties properties = read_body_properties(node, context);
  properties.motion = Motion::fixed;

  const Vec3 centre = 0.5 * (low + high);
  for (int axis = 0; axis < context.active_axes(); ++axis)
    for (int side = 0; side < 2; ++side) {
      if (axis == 1 && side == 1 && open_top) continue;
      // The wall is the solid beyond the face; its normal points into the container.
      Shape shape;
      HalfSpace wall;
      wall.normal = (side == 0 ? 1.0 : -1.0) * Vec3::Unit(axis);
      shape.geometry = wall;
      Vec3 position = centre;
      position(axis) = side == 0 ? low(axis) : high(axis);
      world.add_body(make_body(node, properties, shape, position,
                               name + "_" + kAxisNames[axis] + (side == 0 ? "_min" : "_max"), world,
                               context));
    }
}

// A square pyramid of equal spheres stacked in the hollows of the layer below (the cannonball
// pyramid of Olsen & Kamrin Sec. 8.2): layer L holds (base - L)^2 spheres at
//   origin + ((i + L/2) d, L (d / sqrt(2) + lift), (j + L/2) d),  i, j = 0 .. base - L - 1,
// d the diameter, in the order layer, i, j (j fastest): the centres of touching layers are
// d / sqrt(2) apart vertically, `lift` more to start them apart. The base layer is fixed.
// `materials` cycles through its names by the sphere's index over the whole pyramid (the
// multi-species pyramid of Sec. 8.2.2 alternates two); `material` gives them all one.
void generate_pyramid(const Node& node, std::size_t index, World& world, Context& context) {
  std::vector<std::string> allowed = {"type", "name", "shape",    "origin",
                                      "base", "lift", "materials"};
  allowed.insert(allowed.end(), kBodyPropertyKeys.begin(), kBodyPropertyKeys.end());
  node.expect_object(allowed);
  if (context.planar()) node.fail("a pyramid is three-dimensional; set dimension 3");
  const std::string name = generator_name(node, "pyramid", index);
  const Node shape_node = node.get("shape");
  const Shape shape = read_shape(shape_node, context);
  const Sphere* sphere = std::get_if<Sphere>(&shape.geometry);
  if (!sphere) shape_node.fail("a pyramid is stacked of spheres");
  BodyProperties properties = read_body_properties(node, context);
  if (properties.motion) node.get("motion").fail("the base layer is fixed and the others dynamic");
  const Node base_node = node.get("base");
  const long base = base_node.integer(1, 100000);
  const double layers = static_cast<double>(base);
  if (layers * (layers + 1.0) * (2.0 * layers + 1.0) / 6.0 >
      static_cast<double>(bodies_left(world, base_node)))
    base_node.fail("a pyramid of base " + std::to_string(base) +
                   " would take the scene past its limit of " + std::to_string(kMaxSceneBodies) +
                   " bodies");
  std::vector<int> materials;
  if (auto list = node.find("materials")) {
    if (node.has("material")) list->fail("give either \"material\" or \"materials\"");
    for (const Node& entry : list->elements()) materials.push_back(read_material(entry, context));
    if (materials.empty()) list->fail("must name at least one material");
  }
  Vec3 origin = Vec3::Zero();
  if (auto o = node.find("origin")) origin = read_point(*o, context);
  const double lift = node.has("lift") ? node.get("lift").non_negative() : 0.0;

  const double d = 2.0 * sphere->radius;
  long k = 0;
  for (long layer = 0; layer < base; ++layer) {
    const long n = base - layer;
    properties.motion = layer == 0 ? Motion::fixed : Motion::dynamic;
    for (long i = 0; i < n; ++i)
      for (long j = 0; j < n; ++j, ++k) {
        if (!materials.empty())
          properties.material = materials[static_cast<std::size_t>(k) % materials.size()];
        const Vec3 position =
            origin + Vec3((static_cast<double>(i) + 0.5 * static_cast<double>(layer)) * d,
                          static_cast<double>(layer) * (d / std::sqrt(2.0) + lift),
                          (static_cast<double>(j) + 0.5 * static_cast<double>(layer)) * d);
        world.add_body(make_body(
            node, properties, shape, position,
            name + std::to_string(layer) + "_" + std::to_string(i) + "_" + std::to_string(j), world,
            context));
      }
  }
}

}  // namespace

void read_generators(const Node& node, World& world, Context& context) {
  const std::vector<Node> generators = node.elements();
  for (std::size_t i = 0; i < generators.size(); ++i) {
    const Node& generator = generators[i];
    if (!generator.value().is_object()) generator.fail_type("an object");
    const std::string type = generator.get("type").choice(
        {"grid", "random_spheres", "container", "pyramid"}, "generator type");
    if (type == "grid") generate_grid(generator, i, world, context);
    if (type == "random_spheres") generate_random_spheres(generator, i, world, context);
    if (type == "container") generate_container(generator, i, world, context);
    if (type == "pyramid") generate_pyramid(generator, i, world, context);
  }
}

}  // namespace moreau::scene_io
