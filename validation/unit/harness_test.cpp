// The verdict logic of the experiment harness (moreau/harness/): comparisons, scales, the four
// verdicts, stale known-difference flags, bounds and the exit code; and, over every entry of
// every reference/*/expected.json, that each check can fail.
#define BOOST_TEST_MODULE harness
#include <algorithm>
#include <atomic>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "moreau/core/error.hpp"
#include "moreau/harness/cache_lock.hpp"
#include "moreau/harness/experiment.hpp"
#include "moreau/harness/piece_pool.hpp"
#include "moreau/harness/results.hpp"
#include "moreau/harness/resumable_run.hpp"
#include "moreau/harness/stepping.hpp"
#include "moreau/harness/table.hpp"
#include "moreau/io/scene.hpp"

namespace moreau {

// Boost.Test prints the verdicts of a failed comparison.
std::ostream& operator<<(std::ostream& out, Verdict verdict) { return out << to_string(verdict); }

namespace {

namespace fs = std::filesystem;

ReferenceValue value(Comparison comparison, double published, double tolerance = 0.0,
                     double high = 0.0) {
  ReferenceValue ref;
  ref.comparison = comparison;
  ref.published = published;
  ref.tolerance = tolerance;
  ref.published_high = high;
  return ref;
}

BOOST_AUTO_TEST_CASE(each_comparison_passes_inside_and_fails_outside) {
  BOOST_TEST(passes(value(Comparison::relative, 10.0, 0.1), 10.9));
  BOOST_TEST(!passes(value(Comparison::relative, 10.0, 0.1), 11.1));
  BOOST_TEST(passes(value(Comparison::relative, -10.0, 0.1), -9.1));
  BOOST_TEST(passes(value(Comparison::absolute, 0.0, 1e-3), -1e-3));
  BOOST_TEST(!passes(value(Comparison::absolute, 0.0, 1e-3), 1.1e-3));
  BOOST_TEST(passes(value(Comparison::at_least, 2.0), 2.0));
  BOOST_TEST(!passes(value(Comparison::at_least, 2.0), 1.999));
  BOOST_TEST(passes(value(Comparison::at_most, 2.0), 2.0));
  BOOST_TEST(!passes(value(Comparison::at_most, 2.0), 2.001));
  BOOST_TEST(passes(value(Comparison::range, 1.0, 0.0, 3.0), 3.0));
  BOOST_TEST(!passes(value(Comparison::range, 1.0, 0.0, 3.0), 0.5));
  BOOST_TEST(passes(value(Comparison::holds, 1.0), 1.0));
  BOOST_TEST(!passes(value(Comparison::holds, 1.0), 0.0));
}

BOOST_AUTO_TEST_CASE(a_value_that_is_not_finite_never_passes) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (Comparison c : {Comparison::relative, Comparison::absolute, Comparison::at_least,
                       Comparison::at_most, Comparison::range, Comparison::holds}) {
    BOOST_TEST(!passes(value(c, 0.0, inf, inf), nan));
    BOOST_TEST(!passes(value(c, 0.0, inf, inf), inf));
  }
}

// A reference directory with one value of each kind that matters for the exit code.
fs::path write_reference(const std::string& name) {
  const fs::path directory = fs::temp_directory_path() / "moreau_harness_test" / name;
  fs::create_directories(directory);
  std::ofstream(directory / "expected.json") << R"({
    "experiment": "toy",
    "values": {
      "speed": {"comparison": "relative", "published": 1.0, "tolerance": 0.01,
                "source": "test", "reason": "test"},
      "known": {"comparison": "absolute", "published": 0.0, "tolerance": 1e-9,
                "source": "test", "reason": "test", "known_difference": "not reproduced"},
      "known_at_quick": {"comparison": "at_least", "published": 2.0, "source": "test",
                         "reason": "test", "known_difference": {"quick": "too small a sample"}},
      "full_only": {"comparison": "at_least", "published": 5.0, "source": "test",
                    "reason": "test", "scales": ["full"]}
    }})";
  return directory;
}

BOOST_AUTO_TEST_CASE(exit_code_follows_the_verdicts_and_scales) {
  const Reference reference = Reference::load(write_reference("verdicts").string());
  {
    ExperimentResults results("toy", "quick", reference);
    results.check("speed", 1.005);
    results.check("known", 1.0);           // fails, but is a known difference
    results.check("known_at_quick", 1.0);  // fails, flagged at the quick scale
    BOOST_TEST(results.checks()[0].verdict == Verdict::pass);
    BOOST_TEST(results.checks()[1].verdict == Verdict::known_difference);
    BOOST_TEST(results.checks()[2].verdict == Verdict::known_difference);
    BOOST_TEST(results.all_passed());
    BOOST_TEST(results.exit_code() == 0);  // full_only does not apply at quick scale
    const std::vector<CheckResult> all = results.verdicts();
    BOOST_TEST(all.size() == 4u);
    BOOST_TEST(all[3].verdict == Verdict::not_evaluated);
  }
  {
    ExperimentResults results("toy", "quick", reference);
    results.check("speed", 1.02);  // outside 1%
    results.check("known", 1.0);
    results.check("known_at_quick", 1.0);
    BOOST_TEST(results.checks()[0].verdict == Verdict::fail);
    BOOST_TEST(!results.all_passed());
    BOOST_TEST(results.exit_code() == 1);
  }
  {
    // The flag of `known_at_quick` does not reach the full scale: there it is a failure.
    ExperimentResults results("toy", "full", reference);
    results.check("speed", 1.0);
    results.check("known", 1.0);
    results.check("known_at_quick", 1.0);
    BOOST_TEST(results.checks()[2].verdict == Verdict::fail);
    BOOST_TEST(results.exit_code() == 1);  // and full_only was never checked
  }
  {
    ExperimentResults results("toy", "full", reference);
    results.check("speed", 1.0);
    results.check("known", 1.0);
    results.check("known_at_quick", 3.0);
    results.not_evaluated("full_only", "its inputs were not run");
    BOOST_TEST(results.checks()[3].verdict == Verdict::not_evaluated);
    BOOST_TEST(results.exit_code() == 0);
  }
  {
    ExperimentResults results("toy", "quick", reference);
    BOOST_CHECK_THROW(results.check("unknown", 1.0), InputError);
    BOOST_CHECK_THROW(results.check("full_only", 6.0), InputError);  // not at this scale
    results.check("speed", 1.0);
    BOOST_CHECK_THROW(results.check("speed", 1.0), InputError);  // checked twice
    BOOST_CHECK_THROW(results.not_evaluated("known", ""), InputError);
  }
}

BOOST_AUTO_TEST_CASE(a_known_difference_that_passes_is_stale_and_fails_the_run) {
  const Reference reference = Reference::load(write_reference("stale").string());
  ExperimentResults results("toy", "quick", reference);
  results.check("speed", 1.0);
  results.check("known", 0.0);  // passes, though flagged
  results.check("known_at_quick", 1.0);
  BOOST_TEST(results.checks()[1].verdict == Verdict::pass);
  BOOST_TEST(results.checks()[1].stale_known_difference);
  BOOST_TEST(!results.all_passed());
  BOOST_TEST(results.exit_code() == 1);
}

BOOST_AUTO_TEST_CASE(a_bound_decides_only_where_every_value_beyond_it_agrees) {
  const ReferenceValue at_least = value(Comparison::at_least, 100.0);
  BOOST_TEST(judge(at_least, "quick", 101.0, Measured::lower_bound).verdict == Verdict::pass);
  BOOST_TEST(judge(at_least, "quick", 6.0, Measured::lower_bound).verdict ==
             Verdict::not_evaluated);
  BOOST_TEST(judge(at_least, "quick", 6.0, Measured::upper_bound).verdict == Verdict::fail);
  const ReferenceValue at_most = value(Comparison::at_most, 1.0);
  BOOST_TEST(judge(at_most, "quick", 2.0, Measured::lower_bound).verdict == Verdict::fail);
  BOOST_TEST(judge(at_most, "quick", 0.5, Measured::lower_bound).verdict == Verdict::not_evaluated);
  BOOST_TEST(
      judge(value(Comparison::relative, 1.0, 0.1), "quick", 1.0, Measured::lower_bound).verdict ==
      Verdict::not_evaluated);
}

BOOST_AUTO_TEST_CASE(a_malformed_known_difference_is_refused) {
  const fs::path directory = fs::temp_directory_path() / "moreau_harness_test" / "malformed";
  fs::create_directories(directory);
  for (const std::string flag : {R"({"huge": "text"})", R"(3)", R"("")", R"({"full": "x"})"}) {
    std::ofstream(directory / "expected.json") << R"({"experiment": "toy", "values": {
      "v": {"comparison": "at_least", "published": 1.0, "source": "s", "reason": "r",
            "scales": ["quick"], "known_difference": )" +
                                                      flag + "}}}";
    BOOST_CHECK_THROW(Reference::load(directory.string()), InputError);
  }
}

// Values just inside and just outside an entry's tolerance, on each side that has a bound.
struct Probe {
  std::vector<double> inside;
  std::vector<double> outside;
};

Probe probe(const ReferenceValue& ref) {
  const double p = ref.published;
  const double nudge = 1e-9 * std::max(1.0, std::abs(p));  // past a bound that has no width
  Probe values;
  switch (ref.comparison) {
    case Comparison::relative:
    case Comparison::absolute: {
      const double width =
          ref.comparison == Comparison::relative ? ref.tolerance * std::abs(p) : ref.tolerance;
      values.inside = {p, p + 0.99 * width, p - 0.99 * width};
      values.outside = {p + std::max(1.01 * width, nudge), p - std::max(1.01 * width, nudge)};
      break;
    }
    case Comparison::at_least:
      values.inside = {p, p + nudge};
      values.outside = {p - nudge};
      break;
    case Comparison::at_most:
      values.inside = {p, p - nudge};
      values.outside = {p + nudge};
      break;
    case Comparison::range: {
      const double high_nudge = 1e-9 * std::max(1.0, std::abs(ref.published_high));
      values.inside = {p, 0.5 * (p + ref.published_high), ref.published_high};
      values.outside = {p - nudge, ref.published_high + high_nudge};
      break;
    }
    case Comparison::holds:
      values.inside = {1.0};
      values.outside = {0.0};
      break;
  }
  return values;
}

// Every entry of every reference/*/expected.json can fail: a measured value just outside its
// tolerance (false for `holds`) is judged `fail` (`known difference` where the entry is flagged
// at that scale), one just inside `pass`. No entry is exempt: each comparison has a finite
// published value and tolerance (Reference::load refuses others), so each can be probed.
BOOST_AUTO_TEST_CASE(every_reference_entry_can_fail_and_can_pass) {
  const fs::path root = fs::path(MOREAU_SOURCE_ROOT) / "reference";
  int entries = 0;
  int flagged = 0;
  std::set<std::string> experiments;
  for (const auto& directory : fs::directory_iterator(root)) {
    if (!fs::exists(directory.path() / "expected.json")) continue;
    const Reference reference = Reference::load(directory.path().string());
    experiments.insert(reference.experiment());
    for (const ReferenceValue& ref : reference.values()) {
      for (const std::string scale : {"quick", "full"}) {
        if (!ref.applies_to(scale)) continue;
        ++entries;
        ReferenceValue unflagged = ref;
        unflagged.known_differences.clear();
        const bool is_flagged = !ref.known_difference_at(scale).empty();
        flagged += is_flagged ? 1 : 0;
        const Probe values = probe(ref);
        for (double inside : values.inside) {
          BOOST_TEST((judge(unflagged, scale, inside).verdict == Verdict::pass),
                     reference.experiment()
                         << "." << ref.name << " at " << scale << ": " << inside << " should pass");
          const CheckResult flagged_result = judge(ref, scale, inside);
          BOOST_TEST(flagged_result.stale_known_difference == is_flagged);
        }
        for (double outside : values.outside) {
          BOOST_TEST((judge(unflagged, scale, outside).verdict == Verdict::fail),
                     reference.experiment() << "." << ref.name << " at " << scale << ": " << outside
                                            << " should fail");
          BOOST_TEST((judge(ref, scale, outside).verdict ==
                      (is_flagged ? Verdict::known_difference : Verdict::fail)));
        }
      }
    }
  }
  BOOST_TEST_MESSAGE(entries << " entries at their scales in " << experiments.size()
                             << " experiments probed, " << flagged << " flagged");
  BOOST_TEST(experiments.size() >= 10u);
}

// Parses `words` (the program name first) as an experiment's command line.
ExperimentArguments parse_words(std::vector<std::string> words, const ExperimentOptions& own = {}) {
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  return ExperimentArguments::parse(static_cast<int>(argv.size()), argv.data(), "toy", own);
}

// The InputError message of parsing `words`, "" when it parses.
std::string refusal(std::vector<std::string> words, const ExperimentOptions& own = {}) {
  try {
    parse_words(std::move(words), own);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

BOOST_AUTO_TEST_CASE(an_experiment_declares_its_own_options_beside_the_common_ones) {
  const std::string out =
      (fs::temp_directory_path() / "moreau_harness_test" / "arguments").string();
  bool resume = false;
  std::optional<std::string> family;
  std::optional<double> mu;
  long count = 7;
  int iterations = 2000;
  ExperimentOptions own;
  own.flag("--resume", resume, "continue");
  own.option("--family", family, "one family").choices({"disk", "angular"});
  own.option("--friction", mu, "one release").choices({"0.5", "0"});
  own.option("--particles", count, "particles").within(16);
  own.option("--iterations", iterations, "iterations").within(1, 1e9);
  const ExperimentArguments args =
      parse_words({"toy", "--scale", "full", "--reference", "ref", "--output", out, "--threads",
                   "1", "--resume", "--family", "disk", "--friction", "0.5", "--particles", "20"},
                  own);
  BOOST_TEST(args.full());
  BOOST_TEST(args.reference_directory == "ref");
  BOOST_TEST(args.output_directory == out);
  BOOST_TEST(args.threads == 1);
  BOOST_TEST(resume);
  BOOST_TEST(family.value_or("") == "disk");
  BOOST_TEST(mu.value_or(-1.0) == 0.5);
  BOOST_TEST(count == 20);
  BOOST_TEST(iterations == 2000);  // not given: its default

  const std::vector<std::string> common = {"toy", "--reference", "ref", "--output", out};
  const auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> words = common;
    words.insert(words.end(), extra.begin(), extra.end());
    return refusal(words, own);
  };
  BOOST_TEST(with({}) == "");
  BOOST_TEST(with({"--colour", "red"}).find("--colour") != std::string::npos);
  BOOST_TEST(with({"--family", "cube"}) == "toy: --family: expected disk or angular, got 'cube'");
  BOOST_TEST(with({"--friction", "0.25"}) == "toy: --friction: expected 0.5 or 0, got '0.25'");
  BOOST_TEST(with({"--particles", "8"}) ==
             "toy: --particles: expected a whole number >= 16, got '8'");
  BOOST_TEST(with({"--iterations", "2.5"}).find("--iterations: expected a whole number") !=
             std::string::npos);
  BOOST_TEST(with({"--threads", "0"}).find("--threads: expected a whole number >= 1") !=
             std::string::npos);
  BOOST_TEST(with({"--scale", "medium"}) == "toy: --scale: expected quick or full, got 'medium'");
  BOOST_TEST(refusal({"toy", "--output", out}) == "toy: --reference DIR is required");
  BOOST_TEST(refusal({"toy", "--reference", "ref"}) == "toy: --output DIR is required");
  BOOST_TEST(refusal({"toy", "--reference", "ref", "--output", out, "--resume"}).find("--resume") !=
             std::string::npos);  // not declared by this experiment
}

BOOST_AUTO_TEST_CASE(a_table_writes_its_declared_columns_and_registers_its_file) {
  const fs::path directory = fs::temp_directory_path() / "moreau_harness_test" / "table";
  const Reference reference = Reference::load(write_reference("table").string());
  ExperimentResults results("toy", "quick", reference);
  {
    CsvTable table(results, directory.string(), "rows.csv",
                   {"run", CsvTable::quoted("method"), "value", "count", "flag", "note"});
    table.row("a", "PGS", 0.1, 3, true, "x, y");
    table.row("b", "say \"hi\"", 1.0 / 3.0, -1L, false, "");
    BOOST_CHECK_THROW(table.row("too", "few"), InputError);
    CsvTable six(directory.string(), "six.csv", {"x"}, 6);
    six.row(1.0 / 3.0);
  }
  std::ifstream in(directory / "rows.csv");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  BOOST_TEST(text ==
             "run,method,value,count,flag,note\n"
             "a,\"PGS\",0.10000000000000001,3,1,\"x, y\"\n"
             "b,\"say \"\"hi\"\"\",0.33333333333333331,-1,0,\n");
  std::ifstream in_six(directory / "six.csv");
  const std::string six((std::istreambuf_iterator<char>(in_six)), std::istreambuf_iterator<char>());
  BOOST_TEST(six == "x\n0.333333\n");
  results.write(directory.string());
  std::ifstream json(directory / "results.json");
  const std::string written((std::istreambuf_iterator<char>(json)),
                            std::istreambuf_iterator<char>());
  BOOST_TEST(written.find("\"rows.csv\"") != std::string::npos);
  BOOST_TEST(written.find("\"six.csv\"") == std::string::npos);  // not registered
}

// A reference directory whose expected.json holds `data` beside one value.
fs::path write_data_reference(const std::string& name, const std::string& data) {
  const fs::path directory = fs::temp_directory_path() / "moreau_harness_test" / name;
  fs::create_directories(directory);
  std::ofstream(directory / "expected.json") << R"({"experiment": "toy", "values": {
      "speed": {"comparison": "relative", "published": 1.0, "tolerance": 0.01,
                "source": "test", "reason": "test"}}, "data": )"
                                             << data << "}";
  return directory;
}

BOOST_AUTO_TEST_CASE(published_data_is_read_from_the_reference_by_row_and_column) {
  const std::string table_2 =
      R"({"table_2": {"source": "Table 2", "columns": ["iterations", "cpu"],)"
      R"( "rows": {"sbp": [305, 2.92], "eal": [158, 2.43]}}})";
  const Reference reference = Reference::load(write_data_reference("data", table_2).string());
  const PublishedData& table = reference.data("table_2");
  BOOST_TEST(table.source == "Table 2");
  BOOST_TEST(table.at("eal", "cpu") == 2.43);
  BOOST_TEST(table.at("sbp", "iterations") == 305.0);
  BOOST_TEST((table.row_names == std::vector<std::string>{"sbp", "eal"}));  // the file's order
  BOOST_CHECK_THROW(table.at("ebp", "cpu"), InputError);
  BOOST_CHECK_THROW(table.at("sbp", "seconds"), InputError);
  BOOST_CHECK_THROW(reference.data("table_3"), InputError);
  const std::string short_row =
      R"({"t": {"source": "s", "columns": ["a", "b"], "rows": {"x": [1]}}})";
  const std::string no_source = R"({"t": {"columns": ["a"], "rows": {"x": [1]}}})";
  BOOST_CHECK_THROW(Reference::load(write_data_reference("data_short", short_row).string()),
                    InputError);
  BOOST_CHECK_THROW(Reference::load(write_data_reference("data_no_source", no_source).string()),
                    InputError);
}

// A ball in free fall, stepped by the scene's semi-implicit Euler scheme.
Scene falling_ball() {
  const nlohmann::json document = {{"dimension", 3},
                                   {"time_step", 1e-3},
                                   {"steps", 1},
                                   {"materials", {{{"name", "steel"}, {"density", 7800}}}},
                                   {"bodies",
                                    {{{"name", "ball"},
                                      {"shape", {{"type", "sphere"}, {"radius", 0.1}}},
                                      {"material", "steel"}}}}};
  return parse_scene(document, "ball.json");
}

BOOST_AUTO_TEST_CASE(advance_while_steps_until_the_state_says_stop) {
  // Run until the ball falls at 0.5 m/s (about 51 steps), as a settling runs until it is at
  // rest: asked before each step, and each step is read.
  Scene scene = falling_ball();
  const RigidBody& ball = scene.world.bodies[0];
  std::vector<long> read;
  std::vector<long> asked;
  SteppingRun run(make_stepper(scene),
                  [&](const Stepper&, const StepReport& report) { read.push_back(report.step); });
  const RunOutcome outcome = run.advance_while([&](const Stepper& stepper) {
    asked.push_back(stepper.steps_taken());
    return ball.linear_velocity.y() > -0.5 && stepper.steps_taken() < 1000;
  });
  const long steps = run.stepper().steps_taken();
  BOOST_TEST(steps > 40);
  BOOST_TEST(steps < 60);
  BOOST_TEST(outcome.steps_completed == steps);
  BOOST_TEST(outcome.steps_requested == steps);
  BOOST_TEST(read.size() == static_cast<std::size_t>(steps));
  BOOST_TEST(asked.size() == static_cast<std::size_t>(steps + 1));  // the last one said stop
  BOOST_TEST(asked.back() == steps);
  // The same number of steps in one piece gives the same state, bit for bit.
  Scene again = falling_ball();
  SteppingRun whole(make_stepper(again));
  whole.advance(steps);
  BOOST_TEST(again.world.bodies[0].position == ball.position);
  BOOST_TEST(again.world.bodies[0].linear_velocity == ball.linear_velocity);
  // A run told to stop at once takes no step.
  BOOST_TEST(run.advance_while([](const Stepper&) { return false; }).steps_completed == 0);
  BOOST_TEST(run.stepper().steps_taken() == steps);
}

BOOST_AUTO_TEST_CASE(run_experiment_writes_results_as_the_body_ends_it) {
  const fs::path reference = write_reference("run_experiment");
  const fs::path out = fs::temp_directory_path() / "moreau_harness_test" / "run_experiment_out";
  const auto run = [&](RunEnd end, bool fail) {
    fs::remove_all(out);
    std::vector<std::string> words = {"toy", "--reference", reference.string(), "--output",
                                      out.string()};
    std::vector<char*> argv;
    for (std::string& w : words) argv.push_back(w.data());
    return run_experiment(static_cast<int>(argv.size()), argv.data(), "toy",
                          [&](const ExperimentArguments&, ExperimentResults& results) {
                            if (fail) throw InputError("refused");
                            results.check("speed", 1.0);
                            results.check("known", 1.0);
                            results.check("known_at_quick", 1.0);
                            return end;
                          });
  };
  BOOST_TEST(run(RunEnd::checked, false) == 0);
  BOOST_TEST(fs::exists(out / "results.json"));
  BOOST_TEST(run(RunEnd::part, false) == 0);
  BOOST_TEST(fs::exists(out / "results.json"));
  BOOST_TEST(run(RunEnd::part_without_results, false) == 0);
  BOOST_TEST(!fs::exists(out / "results.json"));
  BOOST_TEST(run(RunEnd::checked, true) == 2);
  BOOST_TEST(!fs::exists(out / "results.json"));
}

}  // namespace
}  // namespace moreau

// Pieces run at once (moreau/harness/piece_pool.hpp): pieces that queue their continuations all
// run, one worker keeps the queue's order, a piece's exception reaches wait(), and lines
// written to LineStreams from several threads arrive whole.
BOOST_AUTO_TEST_CASE(a_piece_pool_runs_every_piece_and_its_continuations) {
  for (const int workers : {1, 2, 3}) {
    BOOST_TEST_CONTEXT("workers " << workers) {
      moreau::resumable::PiecePool pool(workers);
      std::vector<int> done(9, 0);
      std::mutex order_mutex;
      std::vector<int> order;
      for (int family = 0; family < 3; ++family) {
        pool.add([&, family] {
          done[3 * family] = 1;
          {
            const std::lock_guard<std::mutex> lock(order_mutex);
            order.push_back(3 * family);
          }
          for (int k = 2; k >= 1; --k) {
            pool.add(
                [&, family, k] {
                  done[3 * family + k] = done[3 * family];  // after its settling
                  const std::lock_guard<std::mutex> lock(order_mutex);
                  order.push_back(3 * family + k);
                },
                true);
          }
        });
      }
      pool.wait();
      BOOST_TEST(std::count(done.begin(), done.end(), 1) == 9);
      if (workers == 1) {
        BOOST_TEST(order == std::vector<int>({0, 1, 2, 3, 4, 5, 6, 7, 8}),
                   boost::test_tools::per_element());
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(a_piece_pool_rethrows_a_pieces_failure) {
  for (const int workers : {1, 2}) {
    moreau::resumable::PiecePool pool(workers);
    int after = 0;
    pool.add([] { throw std::runtime_error("piece failed"); });
    pool.add([&after] { ++after; });
    BOOST_CHECK_THROW(pool.wait(), std::runtime_error);
    if (workers == 1) BOOST_TEST(after == 0);  // nothing starts after the failure
  }
  BOOST_CHECK_THROW(moreau::resumable::PiecePool(0), moreau::InputError);
}

BOOST_AUTO_TEST_CASE(line_streams_write_whole_lines) {
  std::ostringstream target;
  {
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&target, t] {
        moreau::resumable::LineStream out(target);
        for (int i = 0; i < 200; ++i) out << "thread " << t << " line " << i << " end\n";
      });
    }
    for (std::thread& t : threads) t.join();
  }
  std::istringstream lines(target.str());
  int count = 0;
  for (std::string line; std::getline(lines, line); ++count) {
    BOOST_TEST_REQUIRE(line.rfind("thread ", 0) == 0u);
    BOOST_TEST_REQUIRE(line.size() >= 4u);
    BOOST_TEST_REQUIRE(line.substr(line.size() - 4) == " end");
    BOOST_TEST_REQUIRE(line.find("thread", 1) == std::string::npos);  // no other line inside
  }
  BOOST_TEST(count == 800);
}

BOOST_AUTO_TEST_CASE(a_stop_signal_is_noted_for_the_next_checkpoint_not_obeyed_at_once) {
  moreau::resumable::stop_on_signals();
  BOOST_CHECK(!moreau::resumable::stop_requested());
  std::raise(SIGTERM);  // with the default action this ends the test process
  BOOST_CHECK(moreau::resumable::stop_requested());
}

BOOST_AUTO_TEST_CASE(a_cache_lock_waits_for_its_holder) {
  // flock(2) locks an open file, so a second lock from this process waits as another process's
  // would: the waiting thread gets the lock only once the holder has finished its entry.
  const std::filesystem::path entry =
      std::filesystem::temp_directory_path() / "moreau_harness_test_cache" / "entry.json";
  std::atomic<bool> entry_written = false;
  std::atomic<bool> saw_entry_written = false;
  std::optional<moreau::CacheLock> holder;
  holder.emplace(entry, "holder waiting (not expected)");
  std::thread waiter([&] {
    const moreau::CacheLock lock(entry, "waiting for the holder");
    saw_entry_written = entry_written.load();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  entry_written = true;
  holder.reset();
  waiter.join();
  BOOST_TEST(saw_entry_written.load());
  std::filesystem::remove_all(entry.parent_path());
}
