// A solver and a time-stepping scheme defined here, in a file the engine does not know, each
// registered by one line: the registry lists it, makes it, the scene parser reads its own key
// with its bounds, and the scene schema (what `moreau schema` and docs/scene-format.md show)
// has its row, with no other edit.
#define BOOST_TEST_MODULE registration
#include <boost/test/unit_test.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "moreau/contact/delassus.hpp"
#include "moreau/core/error.hpp"
#include "moreau/integrator/contact_dynamics_stepper.hpp"
#include "moreau/integrator/scheme_registry.hpp"
#include "moreau/io/scene.hpp"
#include "moreau/solver/interior_point_solver.hpp"
#include "moreau/solver/projected_gauss_seidel.hpp"
#include "moreau/solver/solver_registry.hpp"

namespace moreau {
namespace {

// Projected Gauss-Seidel visiting the contacts backwards with an under-relaxation of its own.
struct BackwardsOptions : IterativeSolverOptions {
  double damping = 0.8;  // in (0, 1]
  static const OptionTable<BackwardsOptions>& fields() {
    static const OptionTable<BackwardsOptions> table = [] {
      OptionTable<BackwardsOptions> t;
      add_iterative_fields(t);
      t.push_back(number_option("damping", &BackwardsOptions::damping, Bounds::left_open(0, 1))
                      .described("relaxation of each projected step"));
      return t;
    }();
    return table;
  }
  void validate() const { validate_fields(fields(), *this, "BackwardsOptions"); }
};

class BackwardsGaussSeidel final : public ContactSolver {
 public:
  explicit BackwardsGaussSeidel(BackwardsOptions options)
      : ContactSolver(options), pgs_(pgs_options(options)) {
    options.validate();
  }
  std::string name() const override { return "test-backwards-gs"; }
  SolverStats solve(const ConeProblem& problem, VecX& r) const override {
    SolverStats stats = pgs_.solve(problem, r);
    stats.solver = name();
    return stats;
  }

 private:
  static PgsOptions pgs_options(const BackwardsOptions& options) {
    PgsOptions pgs;
    static_cast<IterativeSolverOptions&>(pgs) = options;
    pgs.relaxation = options.damping;
    pgs.order = ContactOrder::reverse;
    return pgs;
  }
  ProjectedGaussSeidel pgs_;
};

// The one line.
const SolverRegistrar<BackwardsGaussSeidel, BackwardsOptions> kRegistration{
    "test-backwards-gs", {.coulomb = true, .frictionless = true}, "PGS backwards (a test)"};

BOOST_AUTO_TEST_CASE(a_registered_solver_is_listed_made_and_solves) {
  const std::vector<std::string> names = solver_names();
  BOOST_TEST((std::find(names.begin(), names.end(), "test-backwards-gs") != names.end()));
  // Two frictionless contacts, W = [[2, 1], [1, 2]], q = (-1, -1): r = (1/3, 1/3).
  SparseMatrix w(2, 2);
  w.insert(0, 0) = 2.0;
  w.insert(0, 1) = 1.0;
  w.insert(1, 0) = 1.0;
  w.insert(1, 1) = 2.0;
  const SparseDelassus delassus(w, 1);
  ConeProblem problem;
  problem.delassus = &delassus;
  problem.q = -VecX::Ones(2);
  problem.mu = VecX::Zero(2);
  VecX r = VecX::Zero(2);
  const SolverStats stats = make_solver("test-backwards-gs")->solve(problem, r);
  BOOST_TEST(stats.converged);
  BOOST_TEST(stats.solver == "test-backwards-gs");
  BOOST_TEST(r(0) == 1.0 / 3.0, boost::test_tools::tolerance(1e-7));
  BOOST_TEST(r(1) == 1.0 / 3.0, boost::test_tools::tolerance(1e-7));
}

BOOST_AUTO_TEST_CASE(a_scene_reads_its_keys_with_their_bounds) {
  nlohmann::json document = {
      {"time_step", 0.001},
      {"steps", 1},
      {"solver", {{"name", "test-backwards-gs"}, {"damping", 0.5}, {"max_iterations", 40}}}};
  const Scene scene = parse_scene(document, "scene.json");
  BOOST_TEST(scene.solver_options.get<BackwardsOptions>().damping == 0.5);
  BOOST_TEST(scene.solver_options.common().max_iterations == 40);
  document["solver"]["damping"] = 1.5;
  try {
    parse_scene(document, "scene.json");
    BOOST_ERROR("damping 1.5 was accepted");
  } catch (const InputError& e) {
    BOOST_TEST(std::string(e.what()).find("solver.damping: 1.5 is outside (0, 1]") !=
               std::string::npos);
  }
  // Its key is another solver's unread key.
  document["solver"]["name"] = "pgs";
  document["solver"]["damping"] = 0.5;
  BOOST_CHECK_THROW(parse_scene(document, "scene.json"), InputError);
}

BOOST_AUTO_TEST_CASE(the_scene_schema_has_its_row) {
  bool found = false;
  for (const SceneSection& section : scene_option_keys())
    if (section.path == "solver")
      for (const SceneOption& option : section.options)
        if (option.key == "damping") {
          found = true;
          BOOST_TEST(option.type == "number in (0, 1]");
          BOOST_TEST(option.default_value == "0.8");
        }
  BOOST_TEST(found);
}

// Options by scene key through the registry: the bounds and types of the solver's table, and an
// error naming the key and listing the solver's options for a key it does not have.
BOOST_AUTO_TEST_CASE(options_are_set_by_key_through_the_table) {
  AnySolverOptions options = default_solver_options("test-backwards-gs");
  set_solver_option("test-backwards-gs", options, "damping", 0.25);
  set_solver_option("test-backwards-gs", options, "check_every", 4.0);
  set_solver_option("test-backwards-gs", options, "record_history", false);
  const BackwardsOptions& own = options.get<BackwardsOptions>();
  BOOST_TEST(own.damping == 0.25);
  BOOST_TEST(own.check_every == 4);
  BOOST_TEST(!own.record_history);
  const auto fails_with = [&](auto set, const std::string& fragment) {
    try {
      set();
      BOOST_ERROR("accepted: " << fragment);
    } catch (const OptionError& e) {
      BOOST_TEST(std::string(e.what()).find(fragment) != std::string::npos, e.what());
    }
  };
  fails_with([&] { set_solver_option("test-backwards-gs", options, "damping", 1.5); },
             "damping: 1.5 is outside (0, 1]");
  fails_with([&] { set_solver_option("test-backwards-gs", options, "check_every", 2.5); },
             "check_every: 2.5 is not an integer");
  fails_with([&] { set_solver_option("test-backwards-gs", options, "warm_start", 1.0); },
             "warm_start: takes bool");
  fails_with([&] { set_solver_option("test-backwards-gs", options, "alpha", 0.5); },
             "alpha: not an option of solver \"test-backwards-gs\"; its options: tolerance");
  AnySolverOptions ipm = default_solver_options("ipm");
  set_solver_option("ipm", ipm, "stopping", std::string("kleinert_error"));
  BOOST_TEST((ipm.get<IpmOptions>().stopping == IpmStopping::kleinert_error));
  fails_with([&] { set_solver_option("ipm", ipm, "stopping", std::string("never")); },
             "stopping: \"never\" is not one of");
  // Another solver's struct is refused by name.
  BOOST_CHECK_THROW(options.get<PgsOptions>(), InputError);
}

// A scheme: the semi-implicit Euler step of the shared pipeline with only a share of each gap
// closed per step (a Baumgarte-like gap rate, gap_share Phi / dt).
struct GapShareOptions : StepSettings {
  double gap_share = 0.5;  // in (0, 1]
  static const OptionTable<GapShareOptions>& fields() {
    static const OptionTable<GapShareOptions> table{
        number_option("gap_share", &GapShareOptions::gap_share, Bounds::left_open(0, 1))
            .described("share of a gap closed per step")};
    return table;
  }
  void validate() const {
    StepSettings::validate();
    validate_fields(fields(), *this, "GapShareOptions");
  }
};

class GapShareStepper final : public ContactDynamicsStepper {
 public:
  GapShareStepper(World& world, GapShareOptions options, std::unique_ptr<ContactSolver> solver)
      : ContactDynamicsStepper(world, std::move(solver), detail::validated(options),
                               "test-gap-share"),
        share_(options.gap_share) {}
  std::string scheme() const override { return "test-gap-share"; }

 private:
  double share_;
  void build_problem(StepState& state, std::vector<Contact> candidates,
                     StepReport& report) override {
    build_offset_problem(state, std::move(candidates), report, FrictionModel::coulomb);
  }
  double normal_offset(const Contact& contact, double dt) const override {
    return share_ * contact.gap / dt;
  }
  void update_positions(StepState& state) override { integrate_positions(world_, state.dt); }
};

// The one line.
const SchemeRegistrar<GapShareStepper, GapShareOptions> kSchemeRegistration{
    "test-gap-share", "semi-implicit Euler closing a share of each gap (a test)"};

// A sphere of radius 0.5 on a plane, 0.1 above it, under the test scheme.
nlohmann::json gap_share_scene(double gap_share) {
  return {{"dimension", 3},
          {"gravity", {0, 0, -10}},
          {"time_step", 0.01},
          {"steps", 40},
          {"integrator", {{"scheme", "test-gap-share"}, {"gap_share", gap_share}}},
          {"collision", {{"margin", 0.2}}},
          {"bodies",
           {{{"name", "floor"}, {"shape", {{"type", "half_space"}, {"normal", {0, 0, 1}}}}},
            {{"name", "ball"},
             {"shape", {{"type", "sphere"}, {"radius", 0.5}}},
             {"position", {0, 0, 0.6}}}}}};
}

BOOST_AUTO_TEST_CASE(a_registered_scheme_is_read_made_and_steps) {
  const std::vector<std::string> names = scheme_names();
  BOOST_TEST((std::find(names.begin(), names.end(), "test-gap-share") != names.end()));
  Scene scene = parse_scene(gap_share_scene(0.25), "scene.json");
  BOOST_TEST(scene.options_of<GapShareOptions>("test-gap-share").gap_share == 0.25);
  BOOST_TEST(scene.options_of<GapShareOptions>("test-gap-share").collision.margin == 0.2);
  const std::unique_ptr<Stepper> stepper = make_stepper(scene);
  BOOST_TEST(stepper->scheme() == "test-gap-share");
  for (long step = 0; step < scene.steps; ++step) stepper->step();
  // The ball lands and rests: its gap closes to 0 with no penetration.
  const double gap = scene.world.bodies[1].position.z() - 0.5;
  BOOST_TEST(gap >= -1e-9);
  BOOST_TEST(gap < 1e-3);
  try {
    parse_scene(gap_share_scene(1.5), "scene.json");
    BOOST_ERROR("gap_share 1.5 was accepted");
  } catch (const InputError& e) {
    BOOST_TEST(std::string(e.what()).find("integrator.gap_share: 1.5 is outside (0, 1]") !=
               std::string::npos);
  }
  // Its key is not read by another scheme.
  nlohmann::json document = gap_share_scene(0.5);
  document["integrator"]["scheme"] = "semi_implicit_euler";
  BOOST_CHECK_THROW(parse_scene(document, "scene.json"), InputError);
  bool found = false;
  for (const SceneSection& section : scene_option_keys())
    if (section.path == "integrator")
      for (const SceneOption& option : section.options)
        if (option.key == "gap_share") {
          found = option.type == "number in (0, 1]" && option.default_value == "0.5";
        }
  BOOST_TEST(found);
}

}  // namespace
}  // namespace moreau
