// The verdict logic of the experiment harness (moreau/harness/): comparisons, scales, known
// differences and the exit code.
#define BOOST_TEST_MODULE harness
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include "moreau/core/error.hpp"
#include "moreau/harness/results.hpp"

namespace moreau {
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
      "full_only": {"comparison": "at_least", "published": 5.0, "source": "test",
                    "reason": "test", "scales": ["full"]}
    }})";
  return directory;
}

BOOST_AUTO_TEST_CASE(exit_code_follows_the_checks_known_differences_and_scales) {
  const Reference reference = Reference::load(write_reference("verdicts").string());
  {
    ExperimentResults results("toy", "quick", reference);
    results.check("speed", 1.005);
    results.check("known", 1.0);  // fails, but is a known difference
    BOOST_TEST(!results.checks()[1].passed);
    BOOST_TEST(results.all_passed());
    BOOST_TEST(results.exit_code() == 0);  // full_only does not apply at quick scale
  }
  {
    ExperimentResults results("toy", "quick", reference);
    results.check("speed", 1.02);  // outside 1%
    results.check("known", 0.0);
    BOOST_TEST(!results.all_passed());
    BOOST_TEST(results.exit_code() == 1);
  }
  {
    ExperimentResults results("toy", "full", reference);
    results.check("speed", 1.0);
    results.check("known", 0.0);
    BOOST_TEST(results.exit_code() == 1);  // full_only was never checked
  }
  {
    ExperimentResults results("toy", "quick", reference);
    BOOST_CHECK_THROW(results.check("unknown", 1.0), InputError);
  }
}

}  // namespace
}  // namespace moreau
