// The Simulation loop and its observers (moreau/simulation/), with every scheme from a scene.
#define BOOST_TEST_MODULE simulation
#include "moreau/simulation/simulation.hpp"

#include <boost/test/unit_test.hpp>
#include <cmath>
#include <filesystem>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "moreau/core/error.hpp"
#include "moreau/io/checkpoint.hpp"
#include "moreau/io/scene.hpp"
#include "moreau/simulation/observers.hpp"
#include "moreau/solver/projected_gauss_seidel.hpp"

namespace moreau {
namespace {

// A ball resting on a floor (gap 0, inside the margin), so that every step has one contact.
Scene resting_ball(const std::string& scheme, const std::string& solver, int max_iterations) {
  // variational_theta is two-dimensional (the ball is then a disk) and solves with the IPM.
  const bool variational = scheme == "variational_theta";
  const nlohmann::json document = {
      {"dimension", variational ? 2 : 3},
      {"time_step", 1e-3},
      {"steps", 20},
      {"collision", {{"margin", 1e-3}}},
      {"integrator", {{"scheme", scheme}}},
      {"solver",
       {{"name", variational ? "ipm-direct" : solver},
        {"tolerance", variational ? 1e-8 : 1e-12},
        {"max_iterations", max_iterations}}},
      {"materials", {{{"name", "steel"}, {"density", 7800}, {"youngs_modulus", 2e11}}}},
      {"bodies",
       {{{"name", "floor"},
         {"shape", {{"type", "half_space"}, {"normal", {0, 1, 0}}}},
         {"material", "steel"}},
        {{"name", "ball"},
         {"shape", {{"type", "sphere"}, {"radius", 0.1}}},
         {"material", "steel"},
         {"position", {0, 0.1, 0}}}}}};
  return parse_scene(document, "ball.json");
}

// Records what the loop hands its observers.
class Recorder final : public StepObserver {
 public:
  explicit Recorder(long contacts_every = 0) : contacts_every_(contacts_every) {}
  void on_start(const Stepper&, long total) override { total_ = total; }
  bool wants_contacts(long step) const override {
    return contacts_every_ > 0 && step % contacts_every_ == 0;
  }
  void on_step(const Stepper&, const StepReport& report) override {
    steps_.push_back(report.step);
    filled_.push_back(!report.contacts.empty());
  }
  void on_finish(const Stepper&, const RunOutcome& outcome) override { outcome_ = outcome; }

  long total_ = -1;
  std::vector<long> steps_;
  std::vector<bool> filled_;
  RunOutcome outcome_;

 private:
  long contacts_every_;
};

BOOST_AUTO_TEST_CASE(every_scheme_runs_the_same_scene_through_the_loop) {
  for (const std::string& scheme : scheme_names()) {
    Scene scene = resting_ball(scheme, scheme == "theta" ? "nlgs-eal" : "pgs", 1000);
    Simulation simulation(make_stepper(scene));
    BOOST_TEST(simulation.stepper().scheme() == scheme);
    Recorder recorder;
    RunStatistics stats;
    simulation.add_observer(recorder);
    simulation.add_observer(stats);
    const RunOutcome outcome = simulation.run(5);
    BOOST_TEST(outcome.status == "completed", scheme);
    BOOST_TEST(outcome.steps_completed == 5, scheme);
    BOOST_TEST(recorder.total_ == 5, scheme);
    BOOST_TEST(recorder.steps_ == std::vector<long>({1, 2, 3, 4, 5}), scheme);
    BOOST_TEST(recorder.outcome_.status == "completed", scheme);
    BOOST_TEST(stats.steps_completed == 5, scheme);
    BOOST_TEST(stats.max_contacts == 1, scheme);  // the DEM ball sinks in: one touching pair
    BOOST_TEST(scene.world.time == 5 * simulation.stepper().time_step(),
               boost::test_tools::tolerance(1e-12));
  }
}

BOOST_AUTO_TEST_CASE(dem_fills_contacts_only_where_an_observer_reads_them) {
  Scene scene = resting_ball("dem", "pgs", 1000);
  Simulation simulation(make_stepper(scene));
  Recorder recorder(5);
  simulation.add_observer(recorder);
  simulation.run(10);
  for (std::size_t k = 0; k < recorder.steps_.size(); ++k)
    BOOST_TEST(recorder.filled_[k] == (recorder.steps_[k] % 5 == 0), "step " << recorder.steps_[k]);
}

BOOST_AUTO_TEST_CASE(stop_policy_ends_the_run_at_the_first_failed_step) {
  // One PGS sweep cannot reach 1e-12 on a fresh contact: step 1 fails.
  Scene scene = resting_ball("semi_implicit_euler", "pgs", 1);
  scene.solver_options.get<PgsOptions>().warm_start = false;
  Simulation simulation(make_stepper(scene));
  Recorder recorder;
  RunStatistics stats;
  std::ostringstream warnings;
  FailurePolicy policy(SolverFailurePolicy::stop, warnings);
  simulation.add_observer(stats);
  simulation.add_observer(policy);
  simulation.add_observer(recorder);
  BOOST_CHECK_THROW(simulation.run(10), RunStopped);
  BOOST_TEST(recorder.outcome_.status == "stopped");
  BOOST_TEST(recorder.outcome_.steps_completed == 1);
  BOOST_TEST(recorder.outcome_.error.find("step 1 (t = 0.001 s): solver pgs did not converge") !=
             std::string::npos);
  BOOST_TEST(stats.non_converged_steps == 1);
  BOOST_TEST(stats.first_non_converged_step == 1);
}

BOOST_AUTO_TEST_CASE(a_step_with_a_non_finite_merit_or_criterion_is_counted) {
  // A run whose solver returned NaN or inf at some step did not solve what it claims: the
  // statistics count it, and `moreau run` ends such a run with status "non_finite".
  Scene scene = resting_ball("semi_implicit_euler", "pgs", 1);
  const std::unique_ptr<Stepper> stepper = make_stepper(scene);
  RunStatistics stats;
  StepReport report;
  report.solver_stats.termination = Termination::converged;
  report.step = 1;
  report.solver_stats.merit = 1e-9;
  stats.on_step(*stepper, report);
  BOOST_TEST(stats.non_finite_steps == 0);
  report.step = 2;
  report.solver_stats.merit = std::numeric_limits<double>::quiet_NaN();
  stats.on_step(*stepper, report);
  report.step = 3;
  report.solver_stats.merit = 1e-9;
  report.solver_stats.criterion = "kleinert_error";
  report.solver_stats.criterion_value = std::numeric_limits<double>::infinity();
  stats.on_step(*stepper, report);
  BOOST_TEST(stats.non_finite_steps == 2);
  BOOST_TEST(stats.first_non_finite_step == 2);
  BOOST_TEST(std::isnan(stats.max_merit));
}

BOOST_AUTO_TEST_CASE(warn_policy_warns_ten_times_then_only_counts) {
  Scene scene = resting_ball("semi_implicit_euler", "pgs", 1);
  scene.solver_options.get<PgsOptions>().warm_start = false;
  Simulation simulation(make_stepper(scene));
  RunStatistics stats;
  std::ostringstream warnings;
  FailurePolicy policy(SolverFailurePolicy::warn, warnings);
  simulation.add_observer(stats);
  simulation.add_observer(policy);
  const RunOutcome outcome = simulation.run(15);
  BOOST_TEST(outcome.status == "completed");
  BOOST_TEST(stats.non_converged_steps == 15);
  const std::string text = warnings.str();
  long lines = 0;
  for (char c : text) lines += c == '\n';
  BOOST_TEST(lines == 11);  // ten warnings and the note that the rest are only counted
  BOOST_TEST(text.find("only counted") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(checkpoint_reads_back_exactly_and_rejects_other_shapes) {
  Scene scene = resting_ball("shake", "apgd", 100);
  World& world = scene.world;
  world.bodies[1].position = Vec3(0.1, 0.1 + 1.0 / 3.0, -0.2);
  world.bodies[1].linear_velocity = Vec3(1e-17, -2.0 / 7.0, 3.0);
  world.time = 0.125;
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / "moreau_simulation_test_checkpoint.json";
  write_checkpoint(path, world, 7, "ball.json");
  Scene fresh = resting_ball("shake", "apgd", 100);
  BOOST_TEST(read_checkpoint(path, fresh.world) == 7);
  BOOST_TEST(fresh.world.time == 0.125);
  BOOST_TEST((fresh.world.bodies[1].position == world.bodies[1].position));
  BOOST_TEST((fresh.world.bodies[1].linear_velocity == world.bodies[1].linear_velocity));
  // A ball of another radius (or another motion) is another world: named in the error.
  Scene other = resting_ball("shake", "apgd", 100);
  other.world.bodies[1].shape.geometry = Sphere{0.2};
  BOOST_CHECK_EXCEPTION(read_checkpoint(path, other.world), InputError, [](const InputError& e) {
    return std::string(e.what()).find("bodies[1].shape") != std::string::npos;
  });
  other = resting_ball("shake", "apgd", 100);
  other.world.bodies[1].motion = Motion::prescribed;
  BOOST_CHECK_EXCEPTION(read_checkpoint(path, other.world), InputError, [](const InputError& e) {
    return std::string(e.what()).find("bodies[1].motion") != std::string::npos;
  });
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace moreau
