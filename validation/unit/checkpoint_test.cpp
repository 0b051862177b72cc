// The engine's checkpoint file (moreau/io/checkpoint.hpp): the scheme's own state (the shear
// history Delta q of Krabbenhoft eq. 4.8) and the caller's metadata read back bit for bit beside
// the bodies; a file without them stays version 1; and every file that does not fit is refused
// with an error naming the file and the JSON path.
#define BOOST_TEST_MODULE checkpoint
#include "moreau/io/checkpoint.hpp"

#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "moreau/core/error.hpp"

namespace moreau {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

World two_balls() {
  World world;
  for (const char* name : {"left", "right"}) {
    RigidBody b;
    b.name = name;
    b.shape.geometry = Sphere{0.1};
    world.add_body(b);
  }
  world.bodies[1].position = Vec3(0.3, 1.0 / 3.0, -0.2);
  world.bodies[1].linear_velocity = Vec3(1e-17, -2.0 / 7.0, 3.0);
  world.time = 0.125;
  return world;
}

variational::ShearHistory some_history() {
  variational::ShearHistory h;
  h.set({0, 1, 2}, Vec3(1.0 / 3.0, -2e-300, 0.0));
  h.set({0, 1, -1}, Vec3(0.1, 0.2, 0.7));
  return h;
}

fs::path temp(const std::string& name) {
  return fs::temp_directory_path() / ("moreau_checkpoint_test_" + name + ".json");
}

json read_json(const fs::path& path) { return json::parse(std::ifstream(path)); }

void write_json(const fs::path& path, const json& document) {
  std::ofstream(path) << document.dump(1);
}

// The InputError of `read` names `path` and contains `what`.
template <class Read>
void require_refusal(const Read& read, const fs::path& path, const std::string& what) {
  BOOST_CHECK_EXCEPTION(read(), InputError, [&](const InputError& e) {
    const std::string message = e.what();
    BOOST_TEST_INFO("message: " << message);
    return message.find(path.string()) != std::string::npos &&
           message.find(what) != std::string::npos;
  });
}

BOOST_AUTO_TEST_CASE(scheme_state_and_metadata_read_back_exactly) {
  const World world = two_balls();
  const fs::path path = temp("full");
  const json metadata = {{"kind", "test"}, {"counters", {{"steps", 12}, {"seconds", 0.1}}}};
  write_checkpoint(path, world, CheckpointContents{42, "two balls", some_history(), metadata});
  BOOST_TEST(read_json(path)["version"] == 2);
  for (const fs::directory_entry& e : fs::directory_iterator(path.parent_path()))
    BOOST_TEST(!e.path().filename().string().starts_with(path.filename().string() + ".partial"));
  World fresh = two_balls();
  fresh.bodies[1].position.setZero();
  const CheckpointContents back = read_checkpoint_contents(path, fresh);
  BOOST_TEST(back.step == 42);
  BOOST_TEST(back.scene == "two balls");
  BOOST_TEST(back.metadata == metadata);
  BOOST_REQUIRE(back.shear_history.has_value());
  BOOST_TEST((back.shear_history->forces() == some_history().forces()));
  BOOST_TEST((fresh.bodies[1].position == world.bodies[1].position));
  BOOST_TEST((fresh.bodies[1].linear_velocity == world.bodies[1].linear_velocity));
  // The header alone, the world untouched.
  BOOST_TEST(read_checkpoint_header(path).metadata == metadata);
  // A reader that restores no scheme state refuses it rather than continue otherwise.
  require_refusal([&] { return read_checkpoint(path, fresh); }, path, "scheme_state.shear_history");
  fs::remove(path);
}

BOOST_AUTO_TEST_CASE(a_world_only_checkpoint_is_version_1) {
  const World world = two_balls();
  const fs::path path = temp("plain");
  write_checkpoint(path, world, 7, "two balls");
  const json document = read_json(path);
  BOOST_TEST(document["version"] == 1);
  BOOST_TEST(!document.contains("scheme_state"));
  BOOST_TEST(!document.contains("metadata"));
  World fresh = two_balls();
  BOOST_TEST(read_checkpoint(path, fresh) == 7);
  const CheckpointContents back = read_checkpoint_contents(path, fresh);
  BOOST_TEST(!back.shear_history.has_value());
  BOOST_TEST(back.metadata.is_null());
  fs::remove(path);
}

BOOST_AUTO_TEST_CASE(files_that_do_not_fit_are_refused_by_file_and_path) {
  const fs::path path = temp("refused");
  World world = two_balls();
  const auto read = [&] { return read_checkpoint_contents(path, world); };
  fs::remove(path);
  require_refusal(read, path, "cannot open");
  std::ofstream(path) << "{\"format\": \"moreau checkpoint\", \"version\": 2";
  require_refusal(read, path, "malformed checkpoint");

  write_checkpoint(path, world, CheckpointContents{3, "two balls", some_history(), json()});
  const json good = read_json(path);
  const auto refused = [&](const std::string& what, const auto& change) {
    json bad = good;
    change(bad);
    write_json(path, bad);
    require_refusal(read, path, what);
  };
  const json& rows = good["scheme_state"]["shear_history"];
  BOOST_REQUIRE_EQUAL(rows.size(), 2u);
  refused("scheme_state.shear_history[1]: a body outside",
          [](json& d) { d["scheme_state"]["shear_history"][1][1] = 2; });
  refused("scheme_state.shear_history[1]: the contact appears twice", [](json& d) {
    d["scheme_state"]["shear_history"][1] = d["scheme_state"]["shear_history"][0];
  });
  refused("scheme_state.shear_history[0]: expected [body_a",
          [](json& d) { d["scheme_state"]["shear_history"][0].erase(5); });
  refused("scheme_state.shear_history[0]: the force is not finite",
          [](json& d) { d["scheme_state"]["shear_history"][0][3] = "x"; });
  refused("scheme_state.warm_start: unknown",
          [](json& d) { d["scheme_state"]["warm_start"] = json::array(); });
  refused("metadata: expected an object", [](json& d) { d["metadata"] = 3; });
  refused("metadata: a version-1 checkpoint has none", [](json& d) {
    d["version"] = 1;
    d.erase("scheme_state");
    d["metadata"] = json::object();
  });
  refused("bodies[1].name: expected \"right\"", [](json& d) { d["bodies"][1]["name"] = "other"; });
  fs::remove(path);
}

// The DEM's state (springs, forces) reads back exactly; rows that do not fit are refused by path.
BOOST_AUTO_TEST_CASE(dem_springs_read_back_exactly_and_bad_rows_are_refused) {
  const fs::path path = temp("springs");
  World world = two_balls();
  CheckpointContents contents{7, "two balls", std::nullopt, json()};
  contents.dem_state = DemState{{{0, 1, Vec3(1.0 / 3.0, -2e-300, 1e-17)}},
                                {Vec6::Constant(0.1), Vec6::Constant(-1.0 / 3.0)}};
  write_checkpoint(path, world, contents);
  const CheckpointContents back = read_checkpoint_contents(path, world);
  BOOST_REQUIRE(back.dem_state.has_value());
  BOOST_REQUIRE_EQUAL(back.dem_state->springs.size(), 1u);
  BOOST_TEST((back.dem_state->springs[0].displacement == Vec3(1.0 / 3.0, -2e-300, 1e-17)));
  BOOST_TEST((back.dem_state->forces == contents.dem_state->forces));
  require_refusal([&] { return read_checkpoint(path, world); }, path,
                  "scheme_state.tangential_springs: carried by the checkpoint");
  const json good = read_json(path);
  const auto refused = [&](const std::string& what, const auto& change) {
    json bad = good;
    change(bad);
    write_json(path, bad);
    require_refusal([&] { return read_checkpoint_contents(path, world); }, path, what);
  };
  refused("scheme_state.tangential_springs[0]: a body outside",
          [](json& d) { d["scheme_state"]["tangential_springs"][0][1] = 2; });
  refused("scheme_state.tangential_springs[0]: expected body_a < body_b", [](json& d) {
    d["scheme_state"]["tangential_springs"][0][0] = 1;
    d["scheme_state"]["tangential_springs"][0][1] = 0;
  });
  refused("scheme_state.tangential_springs[1]: the pair appears twice", [](json& d) {
    d["scheme_state"]["tangential_springs"].push_back(d["scheme_state"]["tangential_springs"][0]);
  });
  refused("scheme_state.tangential_springs[0]: expected [body_a",
          [](json& d) { d["scheme_state"]["tangential_springs"][0].erase(4); });
  refused("scheme_state.tangential_springs[0]: the displacement is not finite",
          [](json& d) { d["scheme_state"]["tangential_springs"][0][2] = "x"; });
  refused("scheme_state.forces: expected an array of one row per body (2)",
          [](json& d) { d["scheme_state"]["forces"].erase(1); });
  refused("scheme_state.forces[1]: expected finite numbers",
          [](json& d) { d["scheme_state"]["forces"][1][5] = nullptr; });
  fs::remove(path);
}

BOOST_AUTO_TEST_CASE(metadata_must_be_an_object) {
  const fs::path path = temp("metadata");
  BOOST_CHECK_THROW(
      write_checkpoint(path, two_balls(), CheckpointContents{0, "", std::nullopt, json(3)}),
      InputError);
  BOOST_TEST(!fs::exists(path));
}

}  // namespace
}  // namespace moreau
