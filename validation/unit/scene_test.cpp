// Scene files and output writers: a valid scene builds the world it describes (masses from
// density against the solid formulas), every kind of bad input is an InputError naming the
// file, the JSON path and the problem, generators are deterministic and overlap-free, CSV
// output reads back bit for bit, VTK output is complete, and the shipped example scenes load.
#define BOOST_TEST_MODULE scene
#include "moreau/io/scene.hpp"

#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <numbers>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "moreau/core/error.hpp"
#include "moreau/dem/dem_stepper.hpp"
#include "moreau/integrator/semi_implicit_euler.hpp"
#include "moreau/io/csv_writer.hpp"
#include "moreau/io/vtk_writer.hpp"
#include "moreau/nlgs/nlgs_solver.hpp"
#include "moreau/solver/projected_gauss_seidel.hpp"

namespace moreau {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using std::numbers::pi;

// Mass formulas multiply a handful of O(1) numbers: a few roundings.
constexpr double kRelTol = 1e-13;

// The repository root, from the build system: __FILE__ is relative when ccache rewrites paths
// under its base_dir.
const fs::path kSourceRoot = MOREAU_SOURCE_ROOT;

json parse(const std::string& text) { return json::parse(text); }

// A minimal valid document to which a test adds or changes keys.
json base_scene() { return parse(R"({"time_step": 0.001, "steps": 10, "bodies": []})"); }

// Checks that parsing `document` throws an InputError whose message holds every fragment.
void expect_error(const json& document, std::initializer_list<std::string> fragments) {
  try {
    parse_scene(document, "scene.json");
  } catch (const InputError& e) {
    const std::string message = e.what();
    for (const std::string& fragment : fragments)
      BOOST_TEST(message.find(fragment) != std::string::npos,
                 "message \"" << message << "\" lacks \"" << fragment << "\"");
    return;
  }
  BOOST_FAIL("no InputError for " << document.dump());
}

// A fresh directory under the system temporary directory, removed at the end of the test.
struct TemporaryDirectory {
  fs::path path;
  TemporaryDirectory() {
    std::string pattern = (fs::temp_directory_path() / "moreau-scene-test-XXXXXX").string();
    BOOST_REQUIRE(mkdtemp(pattern.data()) != nullptr);
    path = pattern;
  }
  ~TemporaryDirectory() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
  fs::path write(const std::string& name, const std::string& text) const {
    std::ofstream(path / name) << text;
    return path / name;
  }
};

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> fields;
  std::stringstream stream(line);
  for (std::string field; std::getline(stream, field, ',');) fields.push_back(field);
  return fields;
}

std::vector<std::vector<std::string>> read_csv(std::istream& in) {
  std::vector<std::vector<std::string>> rows;
  for (std::string line; std::getline(in, line);) rows.push_back(split(line));
  return rows;
}

double to_double(const std::string& text) { return std::strtod(text.c_str(), nullptr); }

// True when no two spheres of the bodies in [first, end) overlap.
bool no_overlaps(const World& world, std::size_t first) {
  for (std::size_t i = first; i < world.bodies.size(); ++i)
    for (std::size_t j = i + 1; j < world.bodies.size(); ++j) {
      const double ri = std::get<Sphere>(world.bodies[i].shape.geometry).radius;
      const double rj = std::get<Sphere>(world.bodies[j].shape.geometry).radius;
      if ((world.bodies[i].position - world.bodies[j].position).norm() < ri + rj) return false;
    }
  return true;
}

json random_scene(unsigned seed, const std::string& placement, int dimension) {
  json document = base_scene();
  document["dimension"] = dimension;
  if (dimension == 2) document["gravity"] = {0, -9.81};
  json generator = {{"type", "random_spheres"},
                    {"count", dimension == 2 ? 60 : 150},
                    {"radius_min", 0.05},
                    {"radius_max", 0.1},
                    {"seed", seed},
                    {"placement", placement},
                    {"box_min", {0, 0, 0}},
                    {"box_max", {2, 2, 2}}};
  if (dimension == 2) {
    generator["box_min"] = {0, 0};
    generator["box_max"] = {2, 2};
  }
  document["generators"] = json::array({generator});
  return document;
}

World sample_world(Dimension dimension) {
  World world;
  world.dimension = dimension;
  world.time = 0.1 + 0.2;  // 0.30000000000000004: needs all 17 digits
  RigidBody a;
  a.position = Vec3(1.0 / 3.0, -2.5e-17, dimension == Dimension::two ? 0.0 : 1e300);
  a.orientation = Quat(Eigen::AngleAxisd(2.5, Vec3::UnitZ()));
  a.linear_velocity = Vec3(std::nextafter(1.0, 2.0), -0.0, 5e-324);
  a.angular_velocity = Vec3(0.0, 0.0, -7.125);
  world.add_body(a);
  RigidBody b;
  b.position = Vec3(std::numbers::pi, std::numbers::e, 0.0);
  world.add_body(b);
  return world;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(scene_parsing)

BOOST_AUTO_TEST_CASE(sphere_mass_is_four_thirds_pi_r_cubed_rho) {
  const Scene scene = parse_scene(parse(R"({
    "time_step": 0.001, "steps": 1,
    "materials": [{"name": "glass", "density": 2500}],
    "bodies": [{"shape": {"type": "sphere", "radius": 0.1}, "material": "glass"}]})"),
                                  "scene.json");
  const RigidBody& ball = scene.world.bodies.at(0);
  const double mass = 4.0 / 3.0 * pi * std::pow(0.1, 3) * 2500.0;
  BOOST_TEST(ball.mass == mass, boost::test_tools::tolerance(kRelTol));
  // Solid ball: I = 2/5 m r^2 about every axis through the centre.
  BOOST_TEST((ball.inertia_body - 0.4 * mass * 0.01 * Mat3::Identity()).norm() <= kRelTol * mass);
  BOOST_TEST(scene.world.materials.at(ball.material).name == "glass");
}

BOOST_AUTO_TEST_CASE(box_mass_is_volume_times_density_with_box_inertia) {
  const Scene scene = parse_scene(parse(R"({
    "time_step": 0.001, "steps": 1,
    "bodies": [{"shape": {"type": "box", "half_extents": [0.1, 0.2, 0.3]}}]})"),
                                  "scene.json");
  const RigidBody& box = scene.world.bodies.at(0);
  const double mass = 8.0 * 0.1 * 0.2 * 0.3 * 1000.0;  // default material: 1000 kg/m^3
  BOOST_TEST(box.mass == mass, boost::test_tools::tolerance(kRelTol));
  // I_xx = m (b^2 + c^2) / 12 with full edges b = 0.4, c = 0.6.
  BOOST_TEST(box.inertia_body(0, 0) == mass * (0.16 + 0.36) / 12.0,
             boost::test_tools::tolerance(kRelTol));
  BOOST_TEST(box.inertia_body(2, 2) == mass * (0.04 + 0.16) / 12.0,
             boost::test_tools::tolerance(kRelTol));
}

BOOST_AUTO_TEST_CASE(disk_in_2d_has_unit_thickness_mass_and_half_m_r_squared) {
  const Scene scene = parse_scene(parse(R"({
    "dimension": 2, "gravity": [0, -9.81], "time_step": 0.001, "steps": 1,
    "materials": [{"name": "grain", "density": 2}],
    "bodies": [{"shape": {"type": "disk", "radius": 0.5}, "material": "grain",
                "position": [1, 2], "angle": 1.5707963267948966, "angular_velocity": 3}]})"),
                                  "scene.json");
  BOOST_TEST(scene.world.is_planar());
  const RigidBody& disk = scene.world.bodies.at(0);
  const double mass = pi * 0.25 * 2.0;
  BOOST_TEST(disk.mass == mass, boost::test_tools::tolerance(kRelTol));
  BOOST_TEST(disk.inertia_body(2, 2) == 0.5 * mass * 0.25, boost::test_tools::tolerance(kRelTol));
  BOOST_TEST(disk.position.isApprox(Vec3(1.0, 2.0, 0.0)));
  // A rotation by pi/2 about z: q = (cos pi/4, 0, 0, sin pi/4).
  BOOST_TEST(disk.orientation.w() == std::sqrt(0.5), boost::test_tools::tolerance(1e-15));
  BOOST_TEST(disk.orientation.z() == std::sqrt(0.5), boost::test_tools::tolerance(1e-15));
  BOOST_TEST(disk.angular_velocity.isApprox(Vec3(0.0, 0.0, 3.0)));
}

BOOST_AUTO_TEST_CASE(given_mass_scales_the_shape_inertia_and_given_inertia_wins) {
  const Scene scene = parse_scene(parse(R"({
    "time_step": 0.001, "steps": 1,
    "bodies": [
      {"shape": {"type": "sphere", "radius": 0.5}, "mass": 2},
      {"shape": {"type": "sphere", "radius": 0.5}, "mass": 2, "inertia": [1, 2, 3]},
      {"shape": {"type": "sphere", "radius": 0}, "mass": 1,
       "inertia": [[2, 0.5, 0], [0.5, 2, 0], [0, 0, 1]]}]})"),
                                  "scene.json");
  const auto& bodies = scene.world.bodies;
  BOOST_TEST(bodies[0].mass == 2.0);
  BOOST_TEST(bodies[0].inertia_body(1, 1) == 0.4 * 2.0 * 0.25,
             boost::test_tools::tolerance(kRelTol));
  BOOST_TEST(bodies[1].inertia_body.diagonal().isApprox(Vec3(1.0, 2.0, 3.0)));
  BOOST_TEST(bodies[2].inertia_body(0, 1) == 0.5);
}

BOOST_AUTO_TEST_CASE(settings_reach_the_step_options_and_the_world) {
  const Scene scene = parse_scene(parse(R"({
    "description": "all sections",
    "dimension": 3, "gravity": [0, 0, -10], "time_step": 0.1, "duration": 0.3,
    "integrator": {"frictional": false, "friction_model": "convex_relaxation",
                   "impact_law": "restitution"},
    "collision": {"margin": 0.01, "cell_size": 0.5},
    "solver": {"name": "pgs", "tolerance": 1e-6, "max_iterations": 50, "warm_start": false,
               "relaxation": 0.8, "order": [2, 0, 1], "seed": 9, "check_every": 2,
               "record_history": false, "on_failure": "stop"},
    "materials": [{"name": "a", "restitution": 0.5}, {"name": "b", "density": 10}],
    "friction": {"default": 0.3, "pairs": [{"materials": ["a", "b"], "mu": 0.7}]},
    "bodies": [{"name": "floor", "shape": {"type": "half_space", "normal": [0, 0, 2]}}],
    "output": {"directory": "results", "every": 5, "csv": false, "vtk": true,
               "progress": false}})"),
                                  "scene.json");
  // 0.3 / 0.1 is 2.9999999999999996 in doubles: the step count must still be 3.
  BOOST_TEST(scene.steps == 3);
  BOOST_TEST(scene.world.gravity.isApprox(Vec3(0.0, 0.0, -10.0)));
  const auto euler = scene.options_of<SemiImplicitEulerOptions>("semi_implicit_euler");
  BOOST_TEST(!euler.frictional);
  BOOST_TEST((euler.friction_model == FrictionModel::convex_relaxation));
  BOOST_TEST((euler.impact_law == ImpactLaw::restitution));
  BOOST_TEST(euler.collision.margin == 0.01);
  BOOST_TEST(euler.collision.cell_size == 0.5);
  BOOST_TEST(euler.time_step == 0.1);
  const PgsOptions& solver = scene.solver_options.get<PgsOptions>();
  BOOST_TEST(solver.tolerance == 1e-6);
  BOOST_TEST(solver.max_iterations == 50);
  BOOST_TEST(!solver.warm_start);
  BOOST_TEST(solver.relaxation == 0.8);
  BOOST_TEST((solver.order == ContactOrder::custom));
  BOOST_TEST(solver.custom_order == std::vector<int>({2, 0, 1}));
  BOOST_TEST(solver.seed == 9u);
  BOOST_TEST(solver.check_every == 2);
  BOOST_TEST(!solver.record_history);
  BOOST_TEST((scene.on_solver_failure == SolverFailurePolicy::stop));
  BOOST_TEST(scene.world.materials.size() == 3u);  // the built-in "default", a, b
  BOOST_TEST(scene.world.friction.get(1, 2) == 0.7);
  BOOST_TEST(scene.world.friction.get(1, 1) == 0.3);
  const RigidBody& floor = scene.world.bodies.at(0);
  BOOST_TEST((floor.motion == Motion::fixed));  // the default for a half-space
  BOOST_TEST(std::get<HalfSpace>(floor.shape.geometry).normal.isApprox(Vec3::UnitZ()));
  BOOST_TEST(scene.output.directory == "results");
  BOOST_TEST(scene.output.every == 5);
  BOOST_TEST(!scene.output.csv);
  BOOST_TEST(scene.output.vtk);
  BOOST_TEST(!scene.output.progress);
}

BOOST_AUTO_TEST_CASE(defaults_name_the_output_after_the_scene_file) {
  const Scene scene = parse_scene(base_scene(), "scenes/my_scene.json");
  BOOST_TEST(scene.output.directory == (fs::path("out") / "my_scene").string());
  BOOST_TEST(scene.output.csv);
  BOOST_TEST(scene.output.every == 1);
  BOOST_TEST((scene.on_solver_failure == SolverFailurePolicy::warn));
  BOOST_TEST(scene.source == "scenes/my_scene.json");
}

BOOST_AUTO_TEST_CASE(comments_are_allowed_in_scene_files) {
  TemporaryDirectory directory;
  const fs::path path = directory.write("commented.json", R"({
    // line comment
    "time_step": 0.001, /* block comment */ "steps": 4
  })");
  BOOST_TEST(load_scene(path.string()).steps == 4);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(scene_errors)

BOOST_AUTO_TEST_CASE(missing_file_names_the_file) {
  try {
    load_scene("/nonexistent/no_such_scene.json");
    BOOST_FAIL("no InputError");
  } catch (const InputError& e) {
    BOOST_TEST(std::string(e.what()) == "/nonexistent/no_such_scene.json: scene file not found");
  }
}

BOOST_AUTO_TEST_CASE(malformed_json_gives_line_and_column) {
  TemporaryDirectory directory;
  const fs::path path =
      directory.write("broken.json", "{\n  \"time_step\": 0.001,\n  \"steps\" 10\n}\n");
  try {
    load_scene(path.string());
    BOOST_FAIL("no InputError");
  } catch (const InputError& e) {
    const std::string message = e.what();
    BOOST_TEST(message.find(path.string() + ": line 3, column ") == 0u, message);
    BOOST_TEST(message.find("malformed JSON") != std::string::npos, message);
  }
}

BOOST_AUTO_TEST_CASE(number_overflow_in_a_file_names_its_path_and_line) {
  // JSON has no infinity, but 1e999 overflows a double; nlohmann rejects it while parsing.
  TemporaryDirectory directory;
  const fs::path path = directory.write(
      "overflow.json",
      "{\"time_step\": 0.001, \"steps\": 1,\n \"bodies\": [\n  {\"shape\": {\"type\": \"sphere\", "
      "\"radius\": 1e999}}]}");
  try {
    load_scene(path.string());
    BOOST_FAIL("no InputError");
  } catch (const InputError& e) {
    const std::string message = e.what();
    BOOST_TEST(message.find(": line 3, column ") != std::string::npos, message);
    BOOST_TEST(message.find("bodies[0].shape.radius: must be a finite number") != std::string::npos,
               message);
  }
}

BOOST_AUTO_TEST_CASE(infinite_number_is_rejected) {
  json document = base_scene();
  document["time_step"] = std::numeric_limits<double>::infinity();
  expect_error(document, {"scene.json: time_step: must be a finite number, got inf"});
}

BOOST_AUTO_TEST_CASE(unknown_key_lists_the_allowed_ones) {
  expect_error(parse(R"({"time_step": 0.001, "steps": 1,
                         "bodies": [{"shape": {"type": "sphere", "radus": 1}}]})"),
               {"scene.json: bodies[0].shape.radus: unknown key",
                "allowed keys here: type, radius, offset"});
  expect_error(parse(R"({"time_step": 0.001, "steps": 1, "timestep": 2})"),
               {"scene.json: timestep: unknown key", "time_step"});
}

BOOST_AUTO_TEST_CASE(wrong_type_names_expected_and_found) {
  json document = base_scene();
  document["time_step"] = "fast";
  expect_error(document, {"scene.json: time_step: expected a number, got the string \"fast\""});
  document = base_scene();
  document["bodies"] = parse(R"([{"shape": {"type": "sphere", "radius": 1}, "position": [1, 2]}])");
  expect_error(document, {"bodies[0].position: expected an array of 3 numbers"});
}

BOOST_AUTO_TEST_CASE(negative_radius_and_mass_are_rejected) {
  json document = base_scene();
  document["bodies"] = parse(R"([{"shape": {"type": "half_space"}},
                                 {"shape": {"type": "sphere", "radius": -1}}])");
  expect_error(document, {"scene.json: bodies[1].shape.radius: must be >= 0, got -1"});
  document["bodies"] = parse(R"([{"shape": {"type": "sphere", "radius": 1}, "mass": -2}])");
  expect_error(document, {"scene.json: bodies[0].mass: must be > 0, got -2"});
}

BOOST_AUTO_TEST_CASE(impossible_parameters_are_rejected) {
  json document = base_scene();
  document["time_step"] = 0;
  expect_error(document, {"scene.json: time_step: 0 is outside (0, inf)"});
  document = base_scene();
  document["solver"] = {{"tolerance", -1}};
  expect_error(document, {"scene.json: solver.tolerance: -1 is outside [0, inf)"});
  document = base_scene();
  document.erase("steps");
  expect_error(document, {"scene.json: missing the run length"});
  document = base_scene();
  document["dimension"] = 4;
  expect_error(document, {"scene.json: dimension: must lie in [2, 3], got 4"});
}

BOOST_AUTO_TEST_CASE(unknown_solver_lists_the_known_ones) {
  json document = base_scene();
  document["solver"] = {{"name", "no_such_solver"}};
  expect_error(document, {"scene.json: solver.name: unknown solver \"no_such_solver\"", "pgs"});
}

BOOST_AUTO_TEST_CASE(unknown_material_lists_the_defined_ones) {
  json document = base_scene();
  document["materials"] = parse(R"([{"name": "steel"}])");
  document["bodies"] = parse(R"([{"shape": {"type": "sphere", "radius": 1},
                                  "material": "rubber"}])");
  expect_error(document, {"scene.json: bodies[0].material: unknown material \"rubber\"", "steel"});
}

BOOST_AUTO_TEST_CASE(two_d_body_out_of_plane_is_rejected) {
  json document = base_scene();
  document["dimension"] = 2;
  document["bodies"] = parse(R"([{"shape": {"type": "disk", "radius": 1},
                                  "position": [0, 1, 0.5]}])");
  expect_error(document, {"scene.json: bodies[0].position: a 2D scene lies in the z = 0 plane"});
  document["bodies"] = parse(R"([{"shape": {"type": "disk", "radius": 1},
                                  "angular_velocity": [1, 0, 0]}])");
  expect_error(document, {"bodies[0].angular_velocity: a 2D body rotates about z only"});
}

BOOST_AUTO_TEST_CASE(inconsistent_bodies_are_rejected) {
  json document = base_scene();
  document["bodies"] = parse(R"([{"shape": {"type": "half_space"}, "motion": "dynamic"}])");
  expect_error(document, {"bodies[0]: a half_space has no finite mass"});
  document["bodies"] = parse(R"([{"name": "a", "shape": {"type": "sphere", "radius": 1}},
                                 {"name": "a", "shape": {"type": "sphere", "radius": 1}}])");
  expect_error(document, {"bodies[1]: body name \"a\" is used twice"});
  document["bodies"] = parse(R"([{"shape": {"type": "sphere", "radius": 1}, "motion": "fixed",
                                  "velocity": [1, 0, 0]}])");
  expect_error(document, {"bodies[0].velocity: a fixed body cannot move"});
  document["bodies"] = parse(R"([{"shape": {"type": "sphere", "radius": 0}}])");
  expect_error(document, {"bodies[0]: a dynamic sphere with radius 0", "\"mass\""});
}

BOOST_AUTO_TEST_CASE(overlapping_grid_is_rejected) {
  json document = base_scene();
  document["generators"] = parse(R"([{"type": "grid", "shape": {"type": "sphere", "radius": 1},
                                      "count": [3, 1, 1], "spacing": 1.5}])");
  expect_error(document, {"generators[0].spacing: bodies would overlap", "along x"});
}

BOOST_AUTO_TEST_CASE(overfull_random_box_is_rejected) {
  json document = base_scene();
  document["generators"] = parse(R"([{"type": "random_spheres", "count": 100, "radius_min": 1,
                                      "box_min": [0, 0, 0], "box_max": [4, 4, 4],
                                      "placement": "lattice"}])");
  expect_error(document, {"generators[0].count: the box holds only 8 lattice sites"});
  document["generators"][0].erase("placement");
  document["generators"][0]["max_attempts"] = 20;
  expect_error(document, {"generators[0].count: placed only"});
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(generators)

BOOST_AUTO_TEST_CASE(same_seed_gives_the_same_spheres_and_another_seed_others) {
  for (const char* placement : {"rejection", "lattice"}) {
    const Scene a = parse_scene(random_scene(11, placement, 3), "a.json");
    const Scene b = parse_scene(random_scene(11, placement, 3), "b.json");
    const Scene c = parse_scene(random_scene(12, placement, 3), "c.json");
    BOOST_REQUIRE(a.world.bodies.size() == 150u);
    bool all_equal = true;
    bool any_differs = false;
    for (std::size_t i = 0; i < a.world.bodies.size(); ++i) {
      all_equal = all_equal && a.world.bodies[i].position == b.world.bodies[i].position &&
                  a.world.bodies[i].mass == b.world.bodies[i].mass;
      any_differs = any_differs || a.world.bodies[i].position != c.world.bodies[i].position;
    }
    BOOST_TEST(all_equal, placement);
    BOOST_TEST(any_differs, placement);
  }
}

BOOST_AUTO_TEST_CASE(random_spheres_do_not_overlap_and_stay_in_their_box) {
  for (int dimension : {2, 3})
    for (const char* placement : {"rejection", "lattice"}) {
      const Scene scene = parse_scene(random_scene(3, placement, dimension), "s.json");
      BOOST_TEST(no_overlaps(scene.world, 0), placement << " in " << dimension << "D");
      for (const RigidBody& body : scene.world.bodies) {
        const double r = std::get<Sphere>(body.shape.geometry).radius;
        BOOST_TEST((r >= 0.05 && r <= 0.1));
        for (int axis = 0; axis < dimension; ++axis)
          BOOST_TEST((body.position(axis) - r >= 0.0 && body.position(axis) + r <= 2.0));
        if (dimension == 2) BOOST_TEST(body.position.z() == 0.0);
      }
    }
}

BOOST_AUTO_TEST_CASE(grid_places_count_bodies_at_the_spacing) {
  json document = base_scene();
  document["generators"] = parse(R"([{"type": "grid", "name": "g",
    "shape": {"type": "box", "half_extents": [0.1, 0.1, 0.1]},
    "origin": [1, 0, 0], "count": [2, 3, 4], "spacing": [0.5, 0.25, 0.2]}])");
  const Scene scene = parse_scene(document, "grid.json");
  BOOST_REQUIRE(scene.world.bodies.size() == 24u);
  // x varies fastest, then y, then z.
  BOOST_TEST(scene.world.bodies[1].position.isApprox(Vec3(1.5, 0.0, 0.0)));
  BOOST_TEST(scene.world.bodies[2].position.isApprox(Vec3(1.0, 0.25, 0.0)));
  BOOST_TEST(scene.world.bodies[23].position.isApprox(Vec3(1.5, 0.5, 0.6)));
  BOOST_TEST(scene.world.bodies[23].name == "g_23");
}

BOOST_AUTO_TEST_CASE(container_walls_face_inward_and_the_top_stays_open) {
  json document = base_scene();
  document["generators"] = parse(R"([{"type": "container", "name": "box",
                                      "min": [0, 0, 0], "max": [1, 2, 3]}])");
  const Scene scene = parse_scene(document, "box.json");
  BOOST_REQUIRE(scene.world.bodies.size() == 5u);
  const Vec3 inside(0.5, 1.0, 1.5);
  for (const RigidBody& wall : scene.world.bodies) {
    BOOST_TEST((wall.motion == Motion::fixed));
    const Vec3 normal = std::get<HalfSpace>(wall.shape.geometry).normal;
    // The centre of the box lies on the open side of every wall.
    BOOST_TEST(normal.dot(inside - wall.position) > 0.0, wall.name);
    BOOST_TEST(normal.dot(Vec3(0.0, 1.0, 0.0)) > -1.0, wall.name << " closes the top");
  }
}

// Base 3: 9 + 4 + 1 spheres; layer 1 sits in the hollows, d / sqrt(2) + lift above the base, the
// materials alternate by index, the base is fixed; the touching layers (lift 0) just touch.
BOOST_AUTO_TEST_CASE(pyramid_layers_sit_in_the_hollows_below) {
  json document = base_scene();
  document["materials"] = parse(R"([{"name": "a"}, {"name": "b"}])");
  document["generators"] = parse(R"([{"type": "pyramid", "name": "L", "base": 3,
      "shape": {"type": "sphere", "radius": 0.5}, "origin": [0, 0.5, 0], "lift": 0.1,
      "materials": ["a", "b"]}])");
  const Scene scene = parse_scene(document, "pyramid.json");
  const std::vector<RigidBody>& bodies = scene.world.bodies;
  BOOST_REQUIRE(bodies.size() == 14u);
  BOOST_TEST(bodies[1].name == "L0_0_1");
  BOOST_TEST(bodies[9].name == "L1_0_0");
  BOOST_TEST((bodies[8].motion == Motion::fixed));
  BOOST_TEST((bodies[9].motion == Motion::dynamic));
  BOOST_TEST(bodies[9].position.isApprox(Vec3(0.5, 0.5 + 1.0 / std::sqrt(2.0) + 0.1, 0.5)));
  BOOST_TEST(
      bodies[13].position.isApprox(Vec3(1.0, 0.5 + 2.0 * (1.0 / std::sqrt(2.0) + 0.1), 1.0)));
  BOOST_TEST(scene.world.materials[bodies[0].material].name == "a");
  BOOST_TEST(scene.world.materials[bodies[1].material].name == "b");
  BOOST_TEST(scene.world.materials[bodies[9].material].name == "b");
  // Without lift, a sphere of layer 1 touches the four below it.
  document["generators"][0]["lift"] = 0;
  const Scene touching = parse_scene(document, "pyramid.json");
  BOOST_TEST((touching.world.bodies[9].position - touching.world.bodies[0].position).norm() == 1.0,
             boost::test_tools::tolerance(1e-12));

  document["generators"][0]["material"] = "a";
  expect_error(document, {"generators[0].materials: give either \"material\" or \"materials\""});
  document["generators"][0].erase("material");
  document["generators"][0]["shape"] = parse(R"({"type": "box", "half_extents": [1, 1, 1]})");
  expect_error(document, {"generators[0].shape: a pyramid is stacked of spheres"});
  document["dimension"] = 2;
  expect_error(document, {"generators[0]: a pyramid is three-dimensional"});
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(csv_writer)

BOOST_AUTO_TEST_CASE(body_rows_read_back_to_the_same_doubles) {
  for (Dimension dimension : {Dimension::two, Dimension::three}) {
    const World world = sample_world(dimension);
    std::stringstream csv;
    write_body_csv_header(csv, dimension);
    write_body_csv_rows(csv, world, 42);
    const auto rows = read_csv(csv);
    BOOST_REQUIRE(rows.size() == 3u);
    const std::size_t columns = dimension == Dimension::two ? 17 : 16;
    BOOST_TEST(rows[0].size() == columns);
    BOOST_TEST(rows[0][3] == "x");
    BOOST_TEST(rows[0][15] == "wz");
    for (std::size_t i = 0; i < 2; ++i) {
      const RigidBody& body = world.bodies[i];
      const auto& row = rows[i + 1];
      BOOST_REQUIRE(row.size() == columns);
      BOOST_TEST(row[0] == "42");
      BOOST_TEST(to_double(row[1]) == world.time);
      BOOST_TEST(row[2] == std::to_string(i));
      const double expected[13] = {
          body.position.x(),        body.position.y(),         body.position.z(),
          body.orientation.w(),     body.orientation.x(),      body.orientation.y(),
          body.orientation.z(),     body.linear_velocity.x(),  body.linear_velocity.y(),
          body.linear_velocity.z(), body.angular_velocity.x(), body.angular_velocity.y(),
          body.angular_velocity.z()};
      for (int k = 0; k < 13; ++k)
        BOOST_TEST(to_double(row[3 + k]) == expected[k], "column " << rows[0][3 + k]);
    }
    if (dimension == Dimension::two) {
      BOOST_TEST(rows[0][16] == "angle");
      BOOST_TEST(to_double(rows[1][16]) == 2.5, boost::test_tools::tolerance(1e-15));
    }
  }
}

BOOST_AUTO_TEST_CASE(contact_forces_are_impulses_over_the_time_step) {
  StepReport report;
  report.step = 7;
  report.time = 0.007;
  report.rows_per_contact = 3;
  Contact c;
  c.body_a = 0;
  c.body_b = 1;
  c.point = Vec3(0.1, 0.2, 0.3);
  c.normal = Vec3(0.0, 1.0, 0.0);
  c.gap = -1e-6;
  report.contacts = {c, c};
  report.impulses.resize(6);
  report.impulses << 0.3, 0.01, -0.02, 1.0 / 3.0, 0.0, 0.0;
  const double dt = 1e-3;
  std::stringstream csv;
  write_contact_csv_header(csv);
  write_contact_csv_rows(csv, report, dt);
  const auto rows = read_csv(csv);
  BOOST_REQUIRE(rows.size() == 3u);
  BOOST_TEST(
      rows[0] == split("step,time,contact,body_a,body_b,px,py,pz,nx,ny,nz,gap,f_n,f_t1,f_t2"),
      boost::test_tools::per_element());
  for (int i = 0; i < 2; ++i) {
    BOOST_REQUIRE(rows[i + 1].size() == 15u);
    BOOST_TEST(rows[i + 1][2] == std::to_string(i));
    BOOST_TEST(to_double(rows[i + 1][5]) == 0.1);
    BOOST_TEST(to_double(rows[i + 1][11]) == -1e-6);
    for (int k = 0; k < 3; ++k)
      BOOST_TEST(to_double(rows[i + 1][12 + k]) == report.impulses(3 * i + k) / dt);
  }
}

BOOST_AUTO_TEST_CASE(compatible_forces_are_a_last_column) {
  StepReport report;
  report.step = 1;
  report.time = 0.001;
  report.contacts = {Contact{}, Contact{}};
  report.impulses = Eigen::Vector2d(0.004, 0.006);
  report.set_details(CompatibleSolve{Eigen::Vector2d(0.002, 0.008), {}});
  const double dt = 1e-3;
  std::stringstream csv;
  write_contact_csv_header(csv, /*compatible=*/true);
  write_contact_csv_rows(csv, report, dt, /*compatible=*/true);
  const auto rows = read_csv(csv);
  BOOST_REQUIRE(rows.size() == 3u);
  BOOST_REQUIRE(rows[0].size() == 16u);
  BOOST_TEST(rows[0][15] == "f_n_compatible");
  BOOST_TEST(to_double(rows[1][12]) == 4.0);
  BOOST_TEST(to_double(rows[1][15]) == 2.0);
  BOOST_TEST(to_double(rows[2][15]) == 8.0);
}

BOOST_AUTO_TEST_CASE(writer_creates_both_files_with_headers) {
  TemporaryDirectory directory;
  const World world = sample_world(Dimension::three);
  {
    CsvWriter writer(directory.path / "run", world.dimension);
    writer.write_bodies(world, 0);
    writer.flush();
  }
  std::ifstream bodies(directory.path / "run" / "bodies.csv");
  std::ifstream contacts(directory.path / "run" / "contacts.csv");
  BOOST_TEST(read_csv(bodies).size() == 3u);
  BOOST_TEST(read_csv(contacts).size() == 1u);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(vtk_writer)

BOOST_AUTO_TEST_CASE(particles_leave_out_half_spaces_and_collections_list_every_step) {
  TemporaryDirectory directory;
  World world;
  RigidBody floor;
  floor.motion = Motion::fixed;
  floor.shape.geometry = HalfSpace{};
  world.add_body(floor);
  RigidBody ball;
  ball.shape.geometry = Sphere{0.5};
  ball.position = Vec3(0.0, 0.4, 0.0);
  world.add_body(ball);
  StepReport report;
  report.rows_per_contact = 3;
  Contact contact;
  contact.body_a = 0;
  contact.body_b = 1;
  contact.point = Vec3(0.0, -0.05, 0.0);
  report.contacts = {contact};
  report.impulses = Vec3(2e-3, 0.0, 0.0);
  {
    VtkWriter writer(directory.path);
    writer.write(world, 0, nullptr, 1e-3);
    world.time = 0.5;
    writer.write(world, 500, &report, 1e-3);
  }
  auto read = [&](const char* name) {
    std::ifstream in(directory.path / name);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  };
  const std::string particles = read("particles_00000500.vtp");
  BOOST_TEST(particles.find("NumberOfPoints=\"1\" NumberOfVerts=\"1\"") != std::string::npos);
  const std::string contacts = read("contacts_00000500.vtp");
  BOOST_TEST(contacts.find("NumberOfPoints=\"2\" NumberOfVerts=\"0\" NumberOfLines=\"1\"") !=
             std::string::npos);
  // |f| = r / dt = 2 N.
  BOOST_TEST(
      contacts.find("Name=\"force\" NumberOfComponents=\"1\" format=\"ascii\">\n          2\n") !=
      std::string::npos);
  BOOST_TEST(read("contacts_00000000.vtp").find("NumberOfLines=\"0\"") != std::string::npos);
  const std::string collection = read("particles.pvd");
  BOOST_TEST(
      collection.find("timestep=\"0\" group=\"\" part=\"0\" file=\"particles_00000000.vtp\"") !=
      std::string::npos);
  BOOST_TEST(
      collection.find("timestep=\"0.5\" group=\"\" part=\"0\" file=\"particles_00000500.vtp\"") !=
      std::string::npos);
  BOOST_TEST(collection.substr(collection.size() - 11) == "</VTKFile>\n");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(example_scenes)

BOOST_AUTO_TEST_CASE(every_scene_in_scenes_loads) {
  const fs::path scenes = kSourceRoot / "scenes";
  BOOST_REQUIRE(fs::is_directory(scenes));
  int count = 0;
  for (const auto& entry : fs::directory_iterator(scenes)) {
    if (entry.path().extension() != ".json") continue;
    BOOST_TEST_CONTEXT(entry.path().string()) {
      const Scene scene = load_scene(entry.path().string());
      BOOST_TEST(scene.steps > 0);
      BOOST_TEST(!scene.world.bodies.empty());
    }
    ++count;
  }
  BOOST_TEST(count >= 3);
}

BOOST_AUTO_TEST_CASE(annotated_example_of_the_format_document_loads) {
  std::ifstream in(kSourceRoot / "docs" / "scene-format.md");
  std::stringstream text;
  text << in.rdbuf();
  const std::string document = text.str();
  const std::string open = "```jsonc\n";
  const std::size_t begin = document.find(open);
  BOOST_REQUIRE(begin != std::string::npos);
  const std::size_t end = document.find("```", begin + open.size());
  BOOST_REQUIRE(end != std::string::npos);
  const json example =
      json::parse(document.substr(begin + open.size(), end - begin - open.size()), nullptr, true,
                  /*ignore_comments=*/true);
  const Scene scene = parse_scene(example, "scene-format.md");
  // 2 bodies, 5 walls, 200 beads, 5 pegs.
  BOOST_TEST(scene.world.bodies.size() == 212u);
  BOOST_TEST(scene.steps == 1000);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(methods)

// The beam example with its "method" replaced, read as load_scene would.
Scene beam_scene(const std::string& method) {
  std::ifstream in(kSourceRoot / "scenes" / "beam_compatible.json");
  json document = json::parse(in, nullptr, true, /*ignore_comments=*/true);
  document["method"] = method;
  return parse_scene(document, "beam_compatible.json");
}

BOOST_AUTO_TEST_CASE(compatible_dem_and_rigid_keys_reach_the_scene) {
  json document = base_scene();
  document["method"] = "dem";
  document["integrator"] = {{"frictional", false},
                            {"compatible",
                             {{"enabled", true},
                              {"law", "hertzian"},
                              {"equilibrium_tolerance", 1e-9},
                              {"optimality_tolerance", 1e-8},
                              {"max_outer_iterations", 30}}}};
  document["dem"] = {{"law", "hertzian"},
                     {"damping_ratio", 0.5},
                     {"tangential", false},
                     {"tangential_stiffness_ratio", 0.5},
                     {"tangential_damping_ratio", 0.1},
                     {"time_step", 1e-6},
                     {"skin", 0.01}};
  document["materials"] = json::array(
      {{{"name", "steel"}, {"youngs_modulus", "rigid"}, {"relative_stiffness", "rigid"}}});
  document["bodies"] =
      json::array({{{"shape", {{"type", "sphere"}, {"radius", 0.1}}}, {"material", "steel"}}});
  const Scene scene = parse_scene(document, "scene.json");
  BOOST_TEST(scene.scheme == "dem");
  const CompatibleOptions compatible =
      scene.options_of<SemiImplicitEulerOptions>("semi_implicit_euler").compatible;
  BOOST_TEST(compatible.enabled);
  BOOST_TEST((compatible.law == ContactLaw::hertzian));
  BOOST_TEST(compatible.truss.equilibrium_tolerance == 1e-9);
  BOOST_TEST(compatible.truss.optimality_tolerance == 1e-8);
  BOOST_TEST(compatible.truss.max_outer_iterations == 30);
  const auto dem = scene.options_of<DemOptions>("dem");
  const DemMaterialLaw& law = dem.law;
  BOOST_TEST((law.law == NormalLaw::hertzian));
  BOOST_TEST(law.damping_ratio == 0.5);
  BOOST_TEST(!law.tangential);
  BOOST_TEST(law.tangential_stiffness_ratio == 0.5);
  BOOST_TEST(law.tangential_damping_ratio == 0.1);
  BOOST_TEST(dem.time_step == 1e-6);
  BOOST_TEST(dem.skin == 0.01);
  const Material& steel = scene.world.materials[scene.world.bodies[0].material];
  BOOST_TEST(std::isinf(steel.youngs_modulus));
  BOOST_TEST(std::isinf(steel.relative_stiffness));
  // The DEM covers the scene's simulated time (10 steps of 1 ms) with its own step.
  BOOST_TEST(scene_step_count(scene, dem.time_step) == 10000);
}

BOOST_AUTO_TEST_CASE(bad_method_compatible_and_dem_values_name_their_path) {
  json document = base_scene();
  document["method"] = "fem";
  expect_error(document, {"scene.json: method: unknown method \"fem\"", "cd, dem"});

  document = base_scene();
  document["integrator"] = {{"compatible", {{"enabled", true}}}};
  expect_error(document, {"scene.json: integrator.compatible.enabled:", "frictional"});
  document["integrator"] = {{"frictional", false}, {"compatible", {{"law", "linear"}}}};
  expect_error(document, {"integrator.compatible.law: unknown law \"linear\""});
  document["integrator"] = {{"frictional", false}, {"compatible", {{"max_outer_iterations", 0}}}};
  expect_error(document, {"integrator.compatible.max_outer_iterations: 0 is outside [1, inf)"});
  document["integrator"] = {{"frictional", false}, {"compatible", {{"tolerance", 1e-9}}}};
  expect_error(document, {"integrator.compatible.tolerance: unknown key"});

  document = base_scene();
  document["dem"] = {{"time_step", "fast"}};
  expect_error(document, {"scene.json: dem.time_step: expected a number or \"auto\""});
  document["dem"] = {{"damping_ratio", -1}};
  expect_error(document, {"dem.damping_ratio: -1 is outside [0, inf)"});
  document["dem"] = {{"law", "linear"}};
  expect_error(document, {"dem.law: unknown law \"linear\"", "hookean, hertzian"});

  document = base_scene();
  document["materials"] = json::array({{{"name", "glass"}, {"youngs_modulus", "soft"}}});
  expect_error(document, {"materials[0].youngs_modulus: expected a number or \"rigid\""});
  document["materials"] = json::array({{{"name", "glass"}, {"relative_stiffness", 0}}});
  expect_error(document, {"materials[0].relative_stiffness: must be > 0"});
}

BOOST_AUTO_TEST_CASE(dem_needs_a_youngs_modulus_for_every_material_at_load_time) {
  json document = base_scene();
  document["method"] = "dem";
  document["materials"] = json::array({{{"name", "glass"}}});
  document["bodies"] = json::array({{{"name", "bead"},
                                     {"shape", {{"type", "sphere"}, {"radius", 0.1}}},
                                     {"material", "glass"}}});
  expect_error(document,
               {"scene.json: scheme \"dem\": material \"glass\"", "\"bead\"", "youngs_modulus"});
  // The same scene is fine under CD, which needs no stiffness.
  document["method"] = "cd";
  BOOST_CHECK_NO_THROW(parse_scene(document, "scene.json"));
}

BOOST_AUTO_TEST_CASE(beam_scene_loads_for_both_methods) {
  const Scene cd = beam_scene("cd");
  BOOST_TEST(cd.scheme == "semi_implicit_euler");
  const auto euler = cd.options_of<SemiImplicitEulerOptions>("semi_implicit_euler");
  BOOST_TEST(euler.compatible.enabled);
  BOOST_TEST(!euler.frictional);
  BOOST_TEST(cd.steps == 50);
  Scene dem = beam_scene("dem");
  BOOST_TEST(dem.scheme == "dem");
  const auto options = dem.options_of<DemOptions>("dem");
  BOOST_TEST(options.time_step == 0.0);  // "auto"
  const std::unique_ptr<Stepper> stepper = make_stepper(dem);
  BOOST_TEST(stepper->time_step() == 0.5 * estimate_stable_time_step(dem.world, options));
  // The DEM run covers the CD run's simulated time, 50 x 1 ms.
  const long steps = scene_step_count(dem, stepper->time_step());
  BOOST_TEST(static_cast<double>(steps) * stepper->time_step() >= 0.05);
  BOOST_TEST(static_cast<double>(steps - 1) * stepper->time_step() < 0.05);
}

// The support forces 2, 6, 2 N that docs/scene-format.md promises, by the options `moreau run`
// builds from the scene: compatible CD forces at the last CD step, elastic DEM forces at rest.
BOOST_AUTO_TEST_CASE(beam_scene_carries_2_6_2_with_both_methods) {
  const double expected[3] = {2.0, 6.0, 2.0};
  Scene cd = beam_scene("cd");
  const std::unique_ptr<Stepper> stepper = make_stepper(cd);
  for (long step = 1; step < cd.steps; ++step) stepper->step();
  const StepReport& report = stepper->step();
  BOOST_REQUIRE(report.contacts.size() == 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    const int support = report.contacts[i].body_a;  // the disks are bodies 0, 1, 2
    BOOST_TEST(compatible_result(report).impulses(static_cast<long>(i)) / cd.time_step() ==
                   expected[support],
               boost::test_tools::tolerance(1e-6));
  }

  Scene dem = beam_scene("dem");
  const std::unique_ptr<Stepper> dem_stepper = make_stepper(dem);
  const long steps = scene_step_count(dem, dem_stepper->time_step());
  for (long step = 0; step < steps; ++step) dem_stepper->step();
  const std::vector<DemContact> contacts = dynamic_cast<DemStepper&>(*dem_stepper).contacts();
  BOOST_REQUIRE(contacts.size() == 3u);
  for (const DemContact& contact : contacts)
    BOOST_TEST(contact.elastic_force == expected[contact.body_a],
               boost::test_tools::tolerance(1e-6));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(schema)

// The rows of the tables of docs/scene-format.md, by section and key: the cells of the
// columns "type", "unit" and "default" (trimmed), read by the table's header row.
using DocumentedRows =
    std::map<std::string, std::map<std::string, std::map<std::string, std::string>>>;

std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> out;
  std::size_t start = 1;
  for (std::size_t bar = line.find('|', start); bar != std::string::npos;
       start = bar + 1, bar = line.find('|', start)) {
    std::string cell = line.substr(start, bar - start);
    cell.erase(0, cell.find_first_not_of(' '));
    cell.erase(cell.find_last_not_of(' ') + 1);
    out.push_back(cell);
  }
  return out;
}

DocumentedRows documented_rows() {
  const std::map<std::string, std::string> heading_to_path{
      {"## Top level", ""},
      {"## integrator", "integrator"},
      {"### integrator.compatible", "integrator.compatible"},
      {"## collision", "collision"},
      {"## solver", "solver"},
      {"### solver.nlgs", "solver.nlgs"},
      {"## output", "output"},
      {"## dem", "dem"},
      {"## channel_flow", "channel_flow"}};
  std::ifstream in(kSourceRoot / "docs" / "scene-format.md");
  BOOST_REQUIRE(in);
  DocumentedRows rows;
  std::string line, section;
  std::vector<std::string> header;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line.rfind("#", 0) == 0) {
      const auto it = heading_to_path.find(line);
      inside = it != heading_to_path.end();
      if (inside) section = it->second;
      continue;
    }
    if (inside && line.rfind("| key |", 0) == 0) header = cells(line);
    if (!inside || line.rfind("| `", 0) != 0) continue;
    const std::vector<std::string> row = cells(line);
    const std::string key = row[0].substr(1, row[0].find('`', 1) - 1);
    for (std::size_t c = 1; c < header.size() && c < row.size(); ++c)
      if (header[c] == "type" || header[c] == "unit" || header[c] == "default")
        rows[section][key][header[c]] = row[c];
  }
  return rows;
}

// Every key the parser accepts is documented in its section with the type (bounds), unit and
// default of its option table, and every documented key is one the parser accepts
// (docs/scene-format.md stays true to the parser; `moreau schema` prints the table's cells).
BOOST_AUTO_TEST_CASE(documented_keys_types_units_and_defaults_are_the_parsed_ones) {
  const DocumentedRows documented = documented_rows();
  const std::vector<SceneSection> sections = scene_option_keys();
  BOOST_TEST(documented.size() == sections.size());
  for (const SceneSection& section : sections) {
    const auto it = documented.find(section.path);
    BOOST_REQUIRE_MESSAGE(it != documented.end(), "no table for \"" << section.path << "\"");
    std::set<std::string> parsed;
    for (const SceneOption& option : section.options) {
      parsed.insert(option.key);
      const auto row = it->second.find(option.key);
      BOOST_TEST_CONTEXT("\"" << section.path << "\": " << option.key) {
        BOOST_TEST_REQUIRE((row != it->second.end()), "parsed but not documented");
        std::map<std::string, std::string> columns = row->second;
        BOOST_TEST(columns["type"] == option.type);
        BOOST_TEST(columns["unit"] == option.unit);
        BOOST_TEST(columns["default"] == option.default_value);
      }
    }
    for (const auto& [key, columns] : it->second)
      BOOST_TEST(parsed.count(key) == 1u,
                 "\"" << section.path << "\": " << key << " is documented but not parsed");
  }
}

// A bound is checked once, from the option table, after the section is read: the message
// names the JSON path, the value and the interval.
BOOST_AUTO_TEST_CASE(values_outside_their_bounds_name_path_value_and_interval) {
  json document = base_scene();
  document["collision"] = {{"margin", -0.5}};
  expect_error(document, {"scene.json: collision.margin: -0.5 is outside [0, inf)"});
  document = base_scene();
  document["output"] = {{"every", 0}};
  expect_error(document, {"scene.json: output.every: 0 is outside [1, inf)"});
  document = base_scene();
  document["solver"] = {{"name", "nlgs-eal"}, {"nlgs", {{"newton_tolerance", 0}}}};
  expect_error(document, {"scene.json: solver.nlgs.newton_tolerance: 0 is outside (0, inf)"});
  document = base_scene();
  document["solver"] = {{"name", "pgs"}, {"relaxation", 2}};
  expect_error(document, {"scene.json: solver.relaxation: 2 is outside (0, 2) for solver \"pgs\""});
  // A wrong type is still reported as one, before any bound.
  document["solver"] = {{"name", "pgs"}, {"relaxation", "fast"}};
  expect_error(document, {"solver.relaxation: expected a number, got the string \"fast\""});
}

// A key that the chosen scheme or solver does not read is an error naming it, and a bound
// that only some solvers have is checked at load time, naming the key.
BOOST_AUTO_TEST_CASE(keys_a_scheme_or_solver_does_not_read_are_errors) {
  json document = base_scene();
  document["integrator"] = {{"scheme", "impulse_velocity"}, {"theta", 0.5}};
  expect_error(document,
               {"scene.json: integrator.theta: not read by scheme \"impulse_velocity\"", "theta"});
  document["integrator"] = {{"scheme", "theta"}, {"impact_law", "plastic"}};
  expect_error(document, {"integrator.impact_law: not read by scheme \"theta\""});
  document["integrator"] = {{"scheme", "theta"}, {"theta", 0.4}};
  expect_error(document, {"integrator.theta: 0.4 is outside [0.5, 1]"});
  document["integrator"] = {{"scheme", "impulse_velocity"}, {"error_reduction", 1.5}};
  expect_error(document, {"integrator.error_reduction: 1.5 is outside [0, 1]"});
  document["integrator"] = {{"scheme", "rk4"}};
  expect_error(document, {"integrator.scheme: unknown scheme \"rk4\""});
  document = base_scene();
  document["method"] = "cd";
  document["integrator"] = {{"scheme", "theta"}};
  expect_error(document, {"scene.json: method: give the scheme once"});

  document = base_scene();
  document["solver"] = {{"name", "md_gs"}, {"relaxation", 1.5}};
  expect_error(document,
               {"scene.json: solver.relaxation: 1.5 is outside (0, 1] for solver \"md_gs\""});
  document["solver"] = {{"name", "apgd"}, {"relaxation", 1.5}};
  expect_error(document, {"solver.relaxation: not read by solver \"apgd\"", "adaptive_restart"});
  document["solver"] = {{"name", "pgs"}, {"nlgs", {{"alpha", 0.5}}}};
  expect_error(document, {"solver.nlgs: not read by solver \"pgs\""});
  // Keys every iterative solver shares are still errors where a solver does not read them.
  document["solver"] = {{"name", "newton"}, {"check_every", 5}};
  expect_error(document,
               {"solver.check_every: not read by solver \"newton\"", "divergence_factor"});
  document["solver"] = {{"name", "ipm"}, {"divergence_factor", 1e6}};
  expect_error(document, {"solver.divergence_factor: not read by solver \"ipm\""});
  document["solver"] = {{"name", "md_jacobi"}, {"check_every", 2}};
  expect_error(document, {"solver.check_every: not read by solver \"md_jacobi\""});
  document["solver"] = {{"name", "nlgs-sbp"}, {"relaxation", 1.2}};
  expect_error(document, {"solver.relaxation: not read by solver \"nlgs-sbp\"", "nlgs"});
  document["solver"] = {{"name", "nlgs-eal"}, {"nlgs", {{"stopping", "never"}}}};
  expect_error(document, {"solver.nlgs.stopping: unknown stopping \"never\""});
  document["solver"] = {{"name", "nlgs-eal"},
                        {"nlgs", {{"alpha", 0.5}, {"stopping", "epsilon_glob"}}}};
  const Scene scene = parse_scene(document, "scene.json");
  const NlgsOptions& nlgs = scene.solver_options.get<NlgsOptions>();
  BOOST_TEST(nlgs.rho_factor == 0.5);
  BOOST_TEST((nlgs.stopping == NlgsStopping::epsilon_glob));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace moreau
