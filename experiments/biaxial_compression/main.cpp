// Biaxial compression of the Krabbenhoft/NURBS chapter Sec. 4.4.1: samples of disks, angular
// convex and non-convex particles (16 shapes, matched mean diameters) under the confining stress
// sigma_3 = 125 on the right wall and an axial strain of 0.21 imposed by the top wall, solved by
// the static formulation (eq. 4.16) for k_N = inf, 1e8, 1e6, 1e5 and k_T = 2 k_N / 3
// (Fig. 4.4-4.7). See README.md for the scene and the choices made.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "biaxial_test.hpp"
#include "moreau/harness/experiment.hpp"
#include "moreau/harness/piece_pool.hpp"
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

// The pieces of one family: its sample (Sec. 4.4.1: poured, settled, consolidated under
// sigma_3), then its test at each k_N the run selects, each from the sample.
struct FamilyPieces {
  Family family = Family::disk;
  Sample sample;
  std::vector<double> stiffnesses;            // selected
  std::vector<std::optional<Outcome>> tests;  // in the order of `stiffnesses`
};

// The progress of the run's tests, on the experiment's stream (a published-scale run takes an
// hour or more).
struct Progress {
  double started = now_seconds();
  std::atomic<int> done = 0;
  int tests = 0;
};

TestOptions test_options(const Scale& scale, double k) {
  TestOptions options;
  options.k_normal = k;
  options.friction = kFriction;
  options.wall_friction = kWallFriction;
  options.confining_stress = kConfiningStress;
  options.load_steps = scale.load_steps;
  options.consolidation_steps = 0;
  return options;
}

// Queues the sample of `f`, which queues its tests when it is consolidated (first: they continue
// it, the stiffest first).
void queue_family(PiecePool& pool, FamilyPieces& f, const Scale& scale,
                  const Persistence& persistence, Progress& progress) {
  pool.add([&pool, &f, &scale, persistence, &progress] {
    SampleOptions sample_options;
    sample_options.family = f.family;
    sample_options.count = scale.count;
    sample_options.stress = kConfiningStress;
    sample_options.settle_time = scale.settle_time;
    sample_options.max_servo_steps = scale.max_servo_steps;
    std::unique_ptr<LineStream> sample_progress;
    f.sample = prepare_sample(
        sample_options,
        piece_persistence(persistence, to_string(f.family) + "_sample", sample_progress));
    LineStream(std::cout) << to_string(f.family) << ": settled in " << f.sample.settle_steps
                          << " + " << f.sample.consolidation_steps << " steps, "
                          << f.sample.settle_seconds << " s"
                          << (f.sample.consolidated ? "" : ", consolidation without equilibrium")
                          << std::endl;
    for (std::size_t i = f.stiffnesses.size(); i-- > 0;) {
      pool.add(
          [&f, &scale, persistence, &progress, i] {
            const double k = f.stiffnesses[i];
            const std::string piece = to_string(f.family) + "_k" + stiffness_label(k);
            std::unique_ptr<LineStream> test_progress;
            Outcome o{f.family,
                      k,
                      run_biaxial_test(f.sample, test_options(scale, k),
                                       piece_persistence(persistence, piece, test_progress)),
                      {}};
            o.measures = measure_response(o.run);
            LineStream(std::cout) << to_string(f.family) << " k_N = " << stiffness_label(k)
                                  << ": eps_a " << o.measures.final_axial_strain << ", peak "
                                  << o.measures.peak << ", " << o.measures.mean_step_seconds
                                  << " s per step"
                                  << (o.run.failure.empty() ? "" : ", stopped: " + o.run.failure)
                                  << "; test " << ++progress.done << "/" << progress.tests
                                  << " done, " << duration_text(now_seconds() - progress.started)
                                  << " in this process" << std::endl;
            f.tests[i] = std::move(o);
          },
          true);
    }
  });
}

}  // namespace

int main(int argc, char** argv) {
  // README.md "Resuming from checkpoints": --resume continues every piece from its checkpoint;
  // --only PREFIX runs only the curves whose piece name (e.g. non_convex_kinf) starts with
  // PREFIX, and the samples they need, for runs as separate processes: the checks are then not
  // evaluated and no results.json is written; --pieces N runs N pieces (samples, curves) at once,
  // each on one thread.
  bool resume = false;
  std::string only;
  int pieces = 1;
  moreau::ExperimentOptions own;
  own.flag("--resume", resume, "continue each piece from its latest checkpoint");
  own.option("--only", only,
             "run only the curves whose piece name starts with PREFIX (no checks, no "
             "results.json)")
      .named("PREFIX");
  own.option("--pieces", pieces, "pieces (samples, curves) run at once, each on one thread")
      .within(1);
  return moreau::run_experiment(
      argc, argv, "biaxial_compression", own,
      [&](const moreau::ExperimentArguments& args, ExperimentResults& results) {
        const Persistence persistence =
            experiment_persistence(args.output_directory, args.full(), resume, std::cout);
        const Scale scale = scale_of(args);
        Progress progress;
        const double diameter = moreau::ShapeFamilyOptions{}.mean_diameter;
        for (double k : scale.stiffnesses)
          if (!std::isinf(k))
            results.measure("characteristic overlap sigma_3 d / k_N at k_N = " + stiffness_label(k),
                            kConfiningStress * diameter / k, "m", "d = 1 m mean diameter");
        const auto selected = [&](const std::string& piece) { return piece.starts_with(only); };
        std::vector<FamilyPieces> families;
        for (Family family : {Family::disk, Family::angular, Family::non_convex}) {
          FamilyPieces f;
          f.family = family;
          for (double k : scale.stiffnesses)
            if (selected(to_string(family) + "_k" + stiffness_label(k))) f.stiffnesses.push_back(k);
          if (f.stiffnesses.empty()) continue;
          f.tests.resize(f.stiffnesses.size());
          families.push_back(std::move(f));
        }
        progress.tests = 0;
        for (const FamilyPieces& f : families)
          progress.tests += static_cast<int>(f.stiffnesses.size());
        // One at a time in the families' order; at once the longest (the non-convex family's)
        // first, so that the last piece to end is a short one.
        PiecePool pool(pieces);
        if (pieces == 1) {
          for (FamilyPieces& f : families) queue_family(pool, f, scale, persistence, progress);
        } else {
          for (auto f = families.rbegin(); f != families.rend(); ++f)
            queue_family(pool, *f, scale, persistence, progress);
        }
        pool.wait();
        std::vector<Outcome> outcomes;
        for (FamilyPieces& f : families) {
          record_sample(results, f.sample);
          for (std::optional<Outcome>& o : f.tests) {
            record_run(results, *o);
            outcomes.push_back(std::move(*o));
          }
        }
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
