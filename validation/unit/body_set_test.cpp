// A world whose body set changes during a run (World::remove_bodies, Stepper::renumber_bodies)
// and the channel-flow inflow that adds and removes bodies every few steps
// (moreau/simulation/channel_flow.hpp, Preclik et al. Sec. 4.3).
#define BOOST_TEST_MODULE body_set
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "moreau/core/error.hpp"
#include "moreau/integrator/impulse_velocity_stepper.hpp"
#include "moreau/integrator/impulse_warm_start.hpp"
#include "moreau/integrator/semi_implicit_euler.hpp"
#include "moreau/io/scene.hpp"
#include "moreau/model/shape.hpp"
#include "moreau/simulation/channel_flow.hpp"
#include "moreau/solver/projected_gauss_seidel.hpp"
#include "moreau/variational/variational_stepper.hpp"

namespace moreau {
namespace {

RigidBody ball(double radius, const Vec3& position) {
  RigidBody b;
  b.shape.geometry = Sphere{radius};
  const MassProperties m = mass_properties(Sphere{radius}, 1000.0, Dimension::three);
  b.mass = m.mass;
  b.inertia_body = m.inertia;
  b.position = position;
  return b;
}

RigidBody floor_body() {
  RigidBody floor;
  floor.name = "floor";
  floor.motion = Motion::fixed;
  floor.shape.geometry = HalfSpace{Vec3::UnitY()};
  return floor;
}

// A column of three touching balls of `radius` standing on the floor at x.
void add_column(World& world, double x, double radius) {
  for (int k = 0; k < 3; ++k) world.add_body(ball(radius, Vec3(x, radius * (2 * k + 1), 0.0)));
}

// PGS with a fixed, small sweep count: far from converged for a column of three, so each
// step's result depends on the warm start it is given.
std::unique_ptr<ContactSolver> few_sweeps() {
  PgsOptions o;
  o.tolerance = 0.0;
  o.max_iterations = 3;
  o.warm_start = true;
  return std::make_unique<ProjectedGaussSeidel>(o);
}

SemiImplicitEulerOptions stepping() {
  SemiImplicitEulerOptions o;
  o.time_step = 1e-3;
  o.collision.margin = 1e-3;
  return o;
}

BOOST_AUTO_TEST_CASE(remove_bodies_keeps_the_order_of_the_others_and_maps_indices) {
  World world;
  for (int i = 0; i < 5; ++i) world.add_body(ball(0.1, Vec3(i, 0, 0)));
  const std::vector<int> map = world.remove_bodies({0, 1, 0, 1, 0});
  BOOST_TEST(map == (std::vector<int>{0, -1, 1, -1, 2}), boost::test_tools::per_element());
  BOOST_TEST(world.bodies.size() == 3u);
  BOOST_TEST(world.bodies[1].position.x() == 2.0);
  BOOST_TEST(world.bodies[2].position.x() == 4.0);
  BOOST_CHECK_THROW(world.remove_bodies({1}), InputError);
}

BOOST_AUTO_TEST_CASE(warm_start_follows_renumbered_bodies_and_drops_removed_ones) {
  ImpulseWarmStart warm;
  std::vector<Contact> before(3);
  before[0].body_a = 0, before[0].body_b = 3;
  before[1].body_a = 1, before[1].body_b = 3;
  before[2].body_a = 2, before[2].body_b = 3;
  VecX impulses(3);
  impulses << 10.0, 11.0, 12.0;
  warm.remember(before, impulses);
  warm.renumber({-1, 0, 1, 2});  // body 0 removed
  std::vector<Contact> after(2);
  after[0].body_a = 0, after[0].body_b = 2;  // old (1, 3)
  after[1].body_a = 1, after[1].body_b = 2;  // old (2, 3)
  VecX guess = VecX::Zero(2);
  warm.apply(after, 1, guess);
  BOOST_TEST(guess(0) == 11.0);
  BOOST_TEST(guess(1) == 12.0);
}

BOOST_AUTO_TEST_CASE(shear_history_follows_renumbered_bodies_and_drops_removed_ones) {
  variational::ShearHistory history;
  history.set({0, 3, -1}, Vec3(1, 0, 0));
  history.set({1, 3, -1}, Vec3(2, 0, 0));
  history.set({2, 3, 0}, Vec3(3, 0, 0));
  history.renumber({0, -1, 1, 2});  // body 1 removed
  BOOST_TEST(history.size() == 2u);
  BOOST_TEST(history.forces().at({0, 2, -1}).x() == 1.0);
  BOOST_TEST(history.forces().at({1, 2, 0}).x() == 3.0);
}

// Two independent columns; removing one mid-run leaves the other moving exactly as in a world
// that never held it, warm start included, since PGS updates a contact from its own bodies
// only. Without the renumbering the warm start would hand the removed column's impulses
// (other balls, other weights) to the remaining one.
BOOST_AUTO_TEST_CASE(removing_bodies_mid_run_leaves_the_others_as_if_never_there) {
  const auto run = [](bool with_other, bool renumber) {
    World world;
    world.add_body(floor_body());
    if (with_other) add_column(world, 0.0, 0.05);
    add_column(world, 1.0, 0.1);
    SemiImplicitEulerStepper stepper(world, stepping(), few_sweeps());
    for (int s = 0; s < 5; ++s) stepper.step();
    if (with_other) {
      const std::vector<int> map = world.remove_bodies({0, 1, 1, 1, 0, 0, 0});
      BOOST_TEST(map[4] == 1);
      if (renumber) {
        stepper.renumber_bodies(map);
        for (const Contact& c : stepper.last_report().contacts) {
          BOOST_TEST(c.body_a >= 0);
          BOOST_TEST(c.body_b < 4);
        }
        BOOST_TEST(stepper.last_report().contacts.size() == 3u);
        BOOST_TEST(stepper.last_report().impulses.size() == 9);
      }
    }
    for (int s = 0; s < 5; ++s) stepper.step();
    std::vector<double> heights;
    for (const RigidBody& b : world.bodies) heights.push_back(b.position.y());
    return heights;
  };
  const std::vector<double> alone = run(false, false);
  const std::vector<double> removed = run(true, true);
  BOOST_TEST(removed == alone, boost::test_tools::per_element());
  BOOST_TEST(run(true, false) != alone);
}

ChannelFlowOptions small_channel() {
  ChannelFlowOptions o;
  o.outlet_x = 0.005;
  o.y_max = 0.003;
  o.z_max = 0.002;
  o.fill = false;
  return o;  // 3 x 2 particles per layer
}

BOOST_AUTO_TEST_CASE(inflow_resets_the_plane_after_two_radii_and_adds_a_layer) {
  World world;
  world.gravity = Vec3::Zero();
  ChannelInflow inflow(world, small_channel());
  BOOST_TEST(inflow.layers() == 1);
  BOOST_TEST(world.bodies.size() == 7u);  // the plane and one layer of 3 x 2
  BOOST_TEST(world.bodies[inflow.plane()].position.x() == 0.0);
  ImpulseVelocityOptions o;
  o.time_step = 1e-5;
  ImpulseVelocityStepper stepper(world, o, few_sweeps());
  // Two radii (0.47 mm) at 1 m/s take 47 steps of 10 us.
  for (int s = 0; s < 46; ++s) {
    stepper.step();
    BOOST_TEST(inflow.after_step(stepper).added == 0);
  }
  stepper.step();
  BOOST_TEST(inflow.after_step(stepper).added == 6);
  BOOST_TEST(inflow.layers() == 2);
  BOOST_TEST(std::abs(world.bodies[inflow.plane()].position.x()) < 1e-12);
}

// Particles enter and leave: the body count follows, no particle stays past the outlet, and the
// contacts of every step name bodies that exist.
BOOST_AUTO_TEST_CASE(outlet_deletes_particles_and_contacts_follow) {
  World world;
  world.gravity = Vec3::Zero();
  ChannelInflow inflow(world, small_channel());
  ImpulseVelocityOptions o;
  o.time_step = 1e-5;
  ImpulseVelocityStepper stepper(world, o, few_sweeps());
  long removed = 0;
  for (int s = 0; s < 800; ++s) {
    const StepReport& report = stepper.step();
    for (const Contact& c : report.contacts)
      BOOST_TEST_REQUIRE(c.body_b < static_cast<int>(world.bodies.size()));
    removed += inflow.after_step(stepper).removed;
    for (const Contact& c : stepper.last_report().contacts)
      BOOST_TEST_REQUIRE(c.body_b < static_cast<int>(world.bodies.size()));
  }
  // The first layer, at x = r, reaches the outlet at 5 mm after 4.8 ms (480 steps).
  BOOST_TEST(removed > 0);
  BOOST_TEST(removed == inflow.particles_removed());
  BOOST_TEST(static_cast<long>(world.bodies.size()) ==
             inflow.first_particle() + inflow.particles_added() - removed);
  for (int i = inflow.first_particle(); i < static_cast<int>(world.bodies.size()); ++i)
    BOOST_TEST_REQUIRE(world.bodies[i].position.x() <= small_channel().outlet_x);
}

// The initial filling: the layer grid every grid_spacing along x up to the outlet, without the
// points whose sphere would overlap a fixed body (here a box standing in the channel).
BOOST_AUTO_TEST_CASE(filling_repeats_the_layer_grid_and_leaves_the_obstacle_free) {
  World world;
  RigidBody box;
  box.motion = Motion::fixed;
  box.shape.geometry = Box{Vec3(0.0006, 0.0006, 0.002)};
  box.position = Vec3(0.0025, 0.0015, 0.001);
  world.add_body(box);
  ChannelFlowOptions o = small_channel();
  o.fill = true;
  ChannelInflow inflow(world, o);
  // x = r, r + 1 mm, ..., up to x + 2r <= 5 mm: five lattice layers of 3 x 2; the middle
  // column (y = 1.5 mm) of the layers at x = 2.235 and 3.235 mm lies within a radius of the
  // box's [1.9, 3.1] x [0.9, 2.1] mm.
  const long grid = 5 * 6;
  const long inside = static_cast<long>(world.bodies.size()) - inflow.first_particle();
  BOOST_TEST(inside == inflow.particles_added());
  BOOST_TEST(inside == grid - 4);
  for (int i = inflow.first_particle(); i < static_cast<int>(world.bodies.size()); ++i) {
    const Vec3 q = (world.bodies[i].position - box.position).cwiseAbs();
    BOOST_TEST_REQUIRE(!(q.x() < 0.0006 + o.radius && q.y() < 0.0006 + o.radius));
  }
}

BOOST_AUTO_TEST_CASE(layers_are_a_function_of_the_seed) {
  const auto first_layer = [](std::uint32_t seed) {
    World world;
    ChannelFlowOptions o = small_channel();
    o.seed = seed;
    ChannelInflow inflow(world, o);
    std::vector<double> v;
    for (int i = inflow.first_particle(); i < static_cast<int>(world.bodies.size()); ++i) {
      const Vec3& u = world.bodies[i].linear_velocity;
      BOOST_TEST(u.x() == 1.0);
      BOOST_TEST(std::abs(u.y()) <= 0.5);
      BOOST_TEST(std::abs(u.z()) <= 0.5);
      v.push_back(u.y());
      v.push_back(u.z());
    }
    return v;
  };
  BOOST_TEST(first_layer(7) == first_layer(7), boost::test_tools::per_element());
  BOOST_TEST(first_layer(7) != first_layer(8));
}

// A run continued from the inflow's state and the bodies' states (what a checkpoint holds) adds
// the layers and deletes the particles that the uninterrupted run does: the same bodies, the
// same generator.
BOOST_AUTO_TEST_CASE(an_inflow_resumed_from_its_state_continues_the_same_run) {
  ImpulseVelocityOptions o;
  o.time_step = 1e-5;
  World world;
  ChannelInflow inflow(world, small_channel());
  ImpulseVelocityStepper stepper(world, o, few_sweeps());
  for (int s = 0; s < 530; ++s) {  // past the first deletion at the outlet (480 steps)
    stepper.step();
    inflow.after_step(stepper);
  }
  BOOST_TEST_REQUIRE(inflow.particles_removed() > 0);
  const ChannelInflowState state = inflow.state(world);
  World resumed_world;
  ChannelInflow resumed = ChannelInflow::resume(resumed_world, small_channel(), state);
  BOOST_TEST_REQUIRE(resumed_world.bodies.size() == world.bodies.size());
  for (std::size_t i = 0; i < world.bodies.size(); ++i) {  // the states a checkpoint restores
    RigidBody& b = resumed_world.bodies[i];
    b.position = world.bodies[i].position;
    b.orientation = world.bodies[i].orientation;
    b.linear_velocity = world.bodies[i].linear_velocity;
    b.angular_velocity = world.bodies[i].angular_velocity;
  }
  resumed_world.time = world.time;
  ImpulseVelocityStepper resumed_stepper(resumed_world, o, few_sweeps());
  resumed_stepper.resume_at(stepper.steps_taken());
  for (int s = 0; s < 200; ++s) {
    stepper.step();
    inflow.after_step(stepper);
    resumed_stepper.step();
    resumed.after_step(resumed_stepper);
  }
  BOOST_TEST(resumed.layers() == inflow.layers());
  BOOST_TEST(resumed.particles_added() == inflow.particles_added());
  BOOST_TEST(resumed.particles_removed() == inflow.particles_removed());
  BOOST_TEST_REQUIRE(resumed_world.bodies.size() == world.bodies.size());
  for (std::size_t i = 0; i < world.bodies.size(); ++i) {
    BOOST_TEST((resumed_world.bodies[i].position == world.bodies[i].position));
    BOOST_TEST((resumed_world.bodies[i].linear_velocity == world.bodies[i].linear_velocity));
  }
  ChannelInflowState negative = state;
  negative.particles = -1;
  World refused;
  BOOST_CHECK_THROW(ChannelInflow::resume(refused, small_channel(), negative), InputError);
}

BOOST_AUTO_TEST_CASE(options_that_cannot_make_a_layer_are_refused) {
  ChannelFlowOptions o = small_channel();
  o.grid_spacing = 1e-4;  // below the diameter
  BOOST_CHECK_THROW(o.validate(), InputError);
  o = small_channel();
  o.outlet_x = 0.0;
  BOOST_CHECK_THROW(o.validate(), InputError);
  o = small_channel();
  o.y_max = 0.0005;
  BOOST_CHECK_THROW(o.validate(), InputError);
  World world;
  o = small_channel();
  o.material = 3;
  BOOST_CHECK_THROW(ChannelInflow(world, o), InputError);
}

BOOST_AUTO_TEST_CASE(cell_fields_average_per_cell_and_peak_speed) {
  World world;
  world.add_body(floor_body());
  RigidBody a = ball(0.1, Vec3(0.5, 0.5, 0.0));
  a.linear_velocity = Vec3(1.0, 0.0, 0.0);
  RigidBody b = ball(0.1, Vec3(0.6, 0.6, 0.3));
  b.linear_velocity = Vec3(3.0, 0.0, 0.0);
  world.add_body(a);
  world.add_body(b);
  world.add_body(ball(0.1, Vec3(1.5, 0.5, 0.0)));
  CellFields cells(0.0, 2.0, 0.0, 1.0, 2, 1);
  cells.add(world, 1);
  BOOST_TEST(cells.at(0, 0).count == 2);
  BOOST_TEST(cells.peak_speed() == 2.0);
  BOOST_TEST(cells.at(0, 0).height == 0.4);
  // Three balls of r = 0.1 under tops 0.4 and 0.1 above z = 0 on two 1 m^2 cells.
  const double volume = 4.0 / 3.0 * 3.141592653589793 * 1e-3;
  BOOST_TEST(bed_solid_fraction(cells, 0.1, 0.0) == 3 * volume / 0.5,
             boost::test_tools::tolerance(1e-12));
}

// The published scenes carry the section; a bad value is an InputError naming its key.
BOOST_AUTO_TEST_CASE(scene_channel_flow_section_is_read_and_checked) {
  for (const char* name : {"channel_flow_coulomb.json", "channel_flow_max_dissipation.json"}) {
    const Scene scene = load_scene(std::string(MOREAU_SOURCE_ROOT) + "/scenes/" + name);
    BOOST_REQUIRE(scene.channel_flow.has_value());
    BOOST_TEST(scene.channel_flow->radius == 0.235e-3);
    BOOST_TEST(scene.channel_flow->material == 1);  // glass, after the built-in material
  }
  const auto parse = [](const nlohmann::json& flow) {
    const nlohmann::json document = {{"steps", 1},
                                     {"materials", {{{"name", "glass"}, {"density", 2650}}}},
                                     {"channel_flow", flow}};
    return parse_scene(document, "flow.json");
  };
  BOOST_TEST(parse({{"material", "glass"}}).channel_flow->material == 1);
  const auto refused = [&](const nlohmann::json& flow, const std::string& words) {
    try {
      parse(flow);
    } catch (const InputError& e) {
      BOOST_TEST_INFO(e.what());
      BOOST_TEST(std::string(e.what()).find(words) != std::string::npos);
      return;
    }
    BOOST_ERROR("accepted " << flow.dump());
  };
  refused({{"material", "sand"}}, "sand");
  refused({{"grid_spacing", 1e-4}}, "grid_spacing");
  refused({{"radius", -1.0}}, "channel_flow.radius");
  refused({{"inlet", 0.0}}, "unknown key");
}

}  // namespace
}  // namespace moreau
