// Biaxial compression of the Krabbenhoft/NURBS chapter Sec. 4.4.1: samples of disks, angular
// convex and non-convex particles (16 shapes, matched mean diameters) under the confining stress
// sigma_3 = 125 on the right wall and an axial strain of 0.21 imposed by the top wall, solved by
// the static formulation (eq. 4.16) for k_N = inf, 1e8, 1e6, 1e5 and k_T = 2 k_N / 3
// (Fig. 4.4-4.7). See README.md for the scene and the choices made.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <iostream>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "biaxial_test.hpp"
#include "moreau/harness/experiment.hpp"
#include "moreau/harness/resumable_run.hpp"
#include "moreau/model/shape_families.hpp"
#include "records.hpp"
#include "response.hpp"

namespace {

using namespace biaxial;
using namespace moreau::resumable;
using moreau::ExperimentResults;

constexpr double kRigid = std::numeric_limits<double>::infinity();
constexpr double kConfiningStress = 125.0;  // Sec. 4.4.1, "125 units" (N/m^2 here)
constexpr double kFriction = 0.5;           // Sec. 4.4.1 uses 0.3 and 0.5 (README.md)
// A trace of wall friction instead of the chapter's frictionless walls: a frictionless wall
// contact gives a particle one force column, and a polygon held by two wall contacts alone has
// a rank-deficient equilibrium (eq. 4.16): a mechanism, which the conic core refuses with the
// status dependent_equalities (README.md, "Deviations"). It bends sigma_1 by at most 1%.
constexpr double kWallFriction = 0.01;

struct Scale {
  int count;
  int load_steps;
  std::vector<double> stiffnesses;
  double settle_time;  // s, at most
  long max_servo_steps;
};

// Full: Sec. 4.4.1's 1,520 particles, 150 load steps, four stiffnesses. Its pour is 72 m (disks)
// to 123 m (non-convex) tall (README.md "Preparation"), whose top row lands after
// sqrt(2 h / g) = 3.8-5.0 s: 2 s of settling leaves the polygon samples falling at a mean
// 14 m/s and their consolidation without equilibrium after 300 servo steps, so the full scale
// settles for at most 10 s and consolidates for at most 1,000 steps (both end earlier at rest).
Scale scale_of(const moreau::ExperimentArguments& args) {
  if (args.full()) return {1520, 150, {kRigid, 1e8, 1e6, 1e5}, 10.0, 1000};
  return {40, 30, {kRigid, 1e8, 1e5}, 2.0, 300};  // README.md: quick scale
}

// The progress of the run's tests, on stdout (a published-scale run takes hours).
struct Progress {
  double started = now_seconds();
  int done = 0;
  int tests = 0;
};

// The sample of `family` (Sec. 4.4.1: poured, settled, consolidated under sigma_3), then its
// test at each k_N the run selects.
void run_family(ExperimentResults& results, std::vector<Outcome>& outcomes, Family family,
                const Scale& scale, const Persistence& persistence,
                const std::function<bool(const std::string&)>& selected, Progress& progress) {
  bool any = false;
  for (double k : scale.stiffnesses)
    any = any || selected(to_string(family) + "_k" + stiffness_label(k));
  if (!any) return;
  SampleOptions sample_options;
  sample_options.family = family;
  sample_options.count = scale.count;
  sample_options.stress = kConfiningStress;
  sample_options.settle_time = scale.settle_time;
  sample_options.max_servo_steps = scale.max_servo_steps;
  const Sample sample =
      prepare_sample(sample_options, persistence.child(to_string(family) + "_sample"));
  record_sample(results, sample);
  std::cout << to_string(family) << ": settled in " << sample.settle_steps << " + "
            << sample.consolidation_steps << " steps, " << sample.settle_seconds << " s"
            << (sample.consolidated ? "" : ", consolidation without equilibrium") << std::endl;
  for (double k : scale.stiffnesses) {
    TestOptions options;
    options.k_normal = k;
    options.friction = kFriction;
    options.wall_friction = kWallFriction;
    options.confining_stress = kConfiningStress;
    options.load_steps = scale.load_steps;
    options.consolidation_steps = 0;
    const std::string piece = to_string(family) + "_k" + stiffness_label(k);
    if (!selected(piece)) continue;
    Outcome o{family, k, run_biaxial_test(sample, options, persistence.child(piece)), {}};
    o.measures = measure_response(o.run);
    record_run(results, o);
    std::cout << to_string(family) << " k_N = " << stiffness_label(k) << ": eps_a "
              << o.measures.final_axial_strain << ", peak " << o.measures.peak << ", "
              << o.measures.mean_step_seconds << " s per step"
              << (o.run.failure.empty() ? "" : ", stopped: " + o.run.failure) << "; test "
              << ++progress.done << "/" << progress.tests << " done, "
              << duration_text(now_seconds() - progress.started) << " in this process" << std::endl;
    outcomes.push_back(std::move(o));
  }
}

}  // namespace

int main(int argc, char** argv) {
  // README.md "Resuming from checkpoints": --resume continues every piece from its checkpoint;
  // --only PREFIX runs only the curves whose piece name (e.g. non_convex_kinf) starts with
  // PREFIX, and the samples they need, for runs in parallel: the checks are then not evaluated
  // and no results.json is written.
  bool resume = false;
  std::string only;
  moreau::ExperimentOptions own;
  own.flag("--resume", resume, "continue each piece from its latest checkpoint");
  own.option("--only", only,
             "run only the curves whose piece name starts with PREFIX (no checks, no "
             "results.json)")
      .named("PREFIX");
  return moreau::run_experiment(
      argc, argv, "biaxial_compression", own,
      [&](const moreau::ExperimentArguments& args, ExperimentResults& results) {
        const Persistence persistence =
            experiment_persistence(args.output_directory, args.full(), resume, std::cout);
        const Scale scale = scale_of(args);
        Progress progress;
        progress.tests = 3 * static_cast<int>(scale.stiffnesses.size());
        const double diameter = moreau::ShapeFamilyOptions{}.mean_diameter;
        for (double k : scale.stiffnesses)
          if (!std::isinf(k))
            results.measure("characteristic overlap sigma_3 d / k_N at k_N = " + stiffness_label(k),
                            kConfiningStress * diameter / k, "m", "d = 1 m mean diameter");
        const auto selected = [&](const std::string& piece) { return piece.starts_with(only); };
        std::vector<Outcome> outcomes;
        for (Family family : {Family::disk, Family::angular, Family::non_convex})
          run_family(results, outcomes, family, scale, persistence, selected, progress);
        write_curves(args.output_directory, outcomes);
        if (!only.empty()) {
          std::cout << "--only " << only << ": " << outcomes.size()
                    << " curves, checks not evaluated (curves.csv written)" << std::endl;
          return moreau::RunEnd::part_without_results;
        }
        results.add_file("curves.csv", "raw");
        run_checks(results, outcomes, args.full());
        results.add_file("biaxial_compression.png", "figure");
        return moreau::RunEnd::checked;
      });
}
