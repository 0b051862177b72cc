// Resuming the biaxial experiment from its checkpoints (moreau/harness/resumable_run.hpp) gives
// the numbers of an uninterrupted run bit for bit: the preparation interrupted in its settling
// and in its consolidation, a test of k_N = 1e6 (finite: the shear history Delta q of eq. 4.8 is
// carried) interrupted after 3 of 6 load steps. And a checkpoint that does not fit is refused by
// name.
#define BOOST_TEST_MODULE biaxial_persistence
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "biaxial_test.hpp"
#include "moreau/core/error.hpp"
#include "moreau/harness/resumable_run.hpp"
#include "moreau/io/checkpoint.hpp"
#include "sample.hpp"

namespace fs = std::filesystem;
using namespace biaxial;
using namespace moreau::resumable;

namespace {

SampleOptions tiny_sample() {
  SampleOptions o;
  o.family = Family::disk;
  o.count = 24;
  return o;
}

TestOptions six_steps() {
  TestOptions o;
  o.k_normal = 1e6;
  o.friction = 0.5;
  o.wall_friction = 0.01;
  o.load_steps = 6;
  return o;
}

fs::path fresh_directory(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("moreau_biaxial_persistence_" + name);
  fs::remove_all(d);
  return d;
}

Persistence saving(const fs::path& directory, long interrupt_after) {
  Persistence p;
  p.directory = directory;
  p.resume = true;
  p.every_seconds = 0.0;
  p.interrupt_after = interrupt_after;
  return p;
}

void require_same_world(const moreau::World& a, const moreau::World& b) {
  BOOST_REQUIRE_EQUAL(a.bodies.size(), b.bodies.size());
  for (std::size_t i = 0; i < a.bodies.size(); ++i) {
    BOOST_TEST((a.bodies[i].position == b.bodies[i].position), "body " << i);
    BOOST_TEST((a.bodies[i].orientation.coeffs() == b.bodies[i].orientation.coeffs()));
  }
}

// Every measured field of the curves; the timings aside.
void require_same_curve(const TestRun& a, const TestRun& b) {
  BOOST_REQUIRE_EQUAL(a.points.size(), b.points.size());
  BOOST_TEST(a.failure == b.failure);
  BOOST_TEST(a.porosity0 == b.porosity0);
  for (std::size_t i = 0; i < a.points.size(); ++i) {
    const TestPoint &p = a.points[i], &q = b.points[i];
    BOOST_TEST(p.step == q.step);
    BOOST_TEST(p.sigma1 == q.sigma1, "step " << p.step);
    BOOST_TEST(p.sigma3 == q.sigma3, "step " << p.step);
    BOOST_TEST(p.axial_strain == q.axial_strain);
    BOOST_TEST(p.volumetric_strain == q.volumetric_strain);
    BOOST_TEST(p.newton_steps == q.newton_steps);
    BOOST_TEST(p.contacts == q.contacts);
    BOOST_TEST(p.largest_motion == q.largest_motion);
    BOOST_TEST(p.largest_dynamic_force == q.largest_dynamic_force);
    BOOST_TEST(p.relaxation_steps == q.relaxation_steps);
    BOOST_TEST(p.numerical_limit_solves == q.numerical_limit_solves);
  }
}

struct Prepared {
  Sample sample = prepare_sample(tiny_sample());
};

}  // namespace

BOOST_FIXTURE_TEST_SUITE(biaxial_persistence, Prepared)

BOOST_AUTO_TEST_CASE(preparation_resumed_in_each_phase_is_the_uninterrupted_one) {
  for (const long stop : {sample.settle_steps / 2, sample.settle_steps + 3}) {
    const fs::path d = fresh_directory("sample");
    BOOST_CHECK_THROW(prepare_sample(tiny_sample(), saving(d, stop)), Interrupted);
    const Sample resumed = prepare_sample(tiny_sample(), saving(d, -1));
    BOOST_TEST(resumed.settle_steps == sample.settle_steps);
    BOOST_TEST(resumed.consolidation_steps == sample.consolidation_steps);
    BOOST_TEST(resumed.shortened_settle_steps == sample.shortened_settle_steps);
    BOOST_TEST(resumed.shortest_settle_step == sample.shortest_settle_step);
    BOOST_TEST(resumed.top_stress == sample.top_stress);
    BOOST_TEST(resumed.porosity == sample.porosity);
    require_same_world(resumed.world, sample.world);
    // Finished: read back, the same again.
    require_same_world(prepare_sample(tiny_sample(), saving(d, 0)).world, sample.world);
    fs::remove_all(d);
  }
}

BOOST_AUTO_TEST_CASE(test_resumed_after_three_load_steps_is_the_uninterrupted_one) {
  const TestRun straight = run_biaxial_test(sample, six_steps());
  BOOST_REQUIRE(straight.failure.empty());
  BOOST_REQUIRE_EQUAL(straight.points.size(), 7u);
  const fs::path d = fresh_directory("test");
  BOOST_CHECK_THROW(run_biaxial_test(sample, six_steps(), saving(d, 3)), Interrupted);
  // The checkpoint carries a shear history: the resumed steps depend on it.
  const moreau::CheckpointContents carried = moreau::read_checkpoint_header(checkpoint_file(d));
  BOOST_REQUIRE(carried.shear_history.has_value());
  BOOST_TEST(carried.shear_history->size() > 0u);
  const TestRun resumed = run_biaxial_test(sample, six_steps(), saving(d, -1));
  require_same_curve(straight, resumed);
  // Finished: read back without a step (the interruption hook would otherwise stop it).
  require_same_curve(straight, run_biaxial_test(sample, six_steps(), saving(d, 0)));
  fs::remove_all(d);
}

BOOST_AUTO_TEST_CASE(resuming_without_the_shear_history_gives_other_numbers) {
  const TestRun straight = run_biaxial_test(sample, six_steps());
  const fs::path d = fresh_directory("history");
  BOOST_CHECK_THROW(run_biaxial_test(sample, six_steps(), saving(d, 3)), Interrupted);
  nlohmann::json checkpoint = nlohmann::json::parse(std::ifstream(checkpoint_file(d)));
  checkpoint["scheme_state"]["shear_history"] = nlohmann::json::array();
  std::ofstream(checkpoint_file(d)) << checkpoint.dump(1);
  const TestRun resumed = run_biaxial_test(sample, six_steps(), saving(d, -1));
  BOOST_REQUIRE_EQUAL(resumed.points.size(), straight.points.size());
  BOOST_TEST(resumed.points[4].sigma1 != straight.points[4].sigma1);
  fs::remove_all(d);
}

BOOST_AUTO_TEST_CASE(a_checkpoint_that_does_not_fit_is_refused_by_name) {
  const fs::path d = fresh_directory("refused");
  BOOST_CHECK_THROW(run_biaxial_test(sample, six_steps(), saving(d, 1)), Interrupted);
  TestOptions other = six_steps();
  other.load_steps = 7;
  const auto names_file = [&](const moreau::InputError& e) {
    return std::string(e.what()).find(checkpoint_file(d).string()) != std::string::npos;
  };
  BOOST_CHECK_EXCEPTION(run_biaxial_test(sample, other, saving(d, -1)), moreau::InputError,
                        names_file);
  // Another kind of piece (the sample's checkpoint where a test's is expected).
  BOOST_CHECK_EXCEPTION(prepare_sample(tiny_sample(), saving(d, -1)), moreau::InputError,
                        names_file);
  std::ofstream(checkpoint_file(d)) << "{\"format\": \"moreau checkpoint\", \"version\": 2";
  BOOST_CHECK_EXCEPTION(run_biaxial_test(sample, six_steps(), saving(d, -1)), moreau::InputError,
                        names_file);
  fs::remove_all(d);
}

BOOST_AUTO_TEST_SUITE_END()

// The pour of 40 angular particles lands at up to 13 m/s, 0.13 m per 0.01 s step, most of the
// 0.15 m settling margin: the step that keeps every point's motion within half the margin is
// shortened, and the settling's deepest overlap stays elastic (k_N = 1e8: ~1e-5 m under the
// landing impacts), where 0.01 s steps let a landing pass the margin (4.4e-3 m in the stop-24
// quick sample; 0.16 m, two particles interlocked, at the full scale).
BOOST_AUTO_TEST_CASE(settling_steps_keep_the_motion_within_the_margin) {
  SampleOptions o;
  o.family = Family::angular;
  o.count = 40;
  const Sample sample = prepare_sample(o);
  BOOST_TEST(sample.shortened_settle_steps > 0);
  BOOST_TEST(sample.shortest_settle_step > 0.0);
  BOOST_TEST(sample.shortest_settle_step < o.settle_step);
  BOOST_TEST(sample.largest_overlap < 1e-3);
}
