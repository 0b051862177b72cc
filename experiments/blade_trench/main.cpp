// The blade trench of Kleinert, Simeon & Dressler Sec. 5 (Fig. 8-10, Table 1): a rectangular
// blade ploughs through a trench of non-rotating spheres; the draft force (horizontal reaction
// impulse on the blade / h) from nonsmooth SHAKE (Kleinert eq. 14-20) with the matrix-free
// interior point method (Sec. 4, solver "ipm") at h = 1e-2 s and tolerances 1e-2 ... 1e-6,
// against a penalty DEM reference on the same settled packing and blade motion, and PGJ at
// h = 1e-3 s with 2,000 iterations per step. The settled packing is a checkpoint
// (moreau/io/checkpoint.hpp) every method starts from; README.md documents the choices.
#include <omp.h>

#include <filesystem>
#include <string>
#include <vector>

#include "methods.hpp"
#include "moreau/harness/experiment.hpp"
#include "moreau/harness/resumable_run.hpp"
#include "steady.hpp"
#include "table1.hpp"
#include "trench_config.hpp"
#include "trench_runs.hpp"

namespace {

using namespace moreau;
using namespace blade_trench;
namespace fs = std::filesystem;

constexpr const char* kExperiment = "blade_trench";

struct Options {
  // PGJ iterations per step (--pgj-iterations): the paper's 2,000 by default; more tell how
  // much of PGJ's draft is its residual.
  int pgj_iterations = kPgjIterations;
  bool complete = false;
  bool resume = false;
  long interrupt_after = -1;  // settling checkpoints and windows over all runs; -1: none
  bool settle_only = false;
  // --cache: where settled packings are kept (empty: the build tree's trench-cache).
  std::string cache;
  // --trench: the full scale's trench, medium (the main job) or the published one.
  FullTrench trench = FullTrench::medium;
  // --preconditioner: the IPM's body-space CG preconditioner (IpmOptions::preconditioner),
  // for comparison; the engine's default otherwise.
  moreau::conic::BodySpacePreconditioner preconditioner =
      moreau::conic::BodySpacePreconditioner::symmetric_gauss_seidel;
  SizeOptions size;
};

// This experiment's own options (README.md, "Running"), declared beside the common ones.
ExperimentOptions declare(Options& o, std::string& preconditioner, std::string& trench) {
  ExperimentOptions own;
  own.option("--trench", trench, "the full scale's trench (README.md, \"Scales\")")
      .choices({"medium", "published"});
  own.flag("--complete", o.complete,
           "the published trench only: the DEM, 1e-5 and 1e-6 over 2.5 s, the looser "
           "tolerances over 2 s");
  own.flag("--resume", o.resume,
           "start each run from its latest checkpoint; on SIGINT or SIGTERM write one and stop");
  own.option("--interrupt-after", o.interrupt_after,
             "test hook: stop after N of the settling's checkpoints and windows of ploughing, "
             "counted over the runs, as if killed")
      .within(1);
  own.option("--cache", o.cache,
             "the folder of the settled packings (default: the build tree's trench-cache)")
      .named("DIR");
  own.flag("--settle-only", o.settle_only, "settle the fill into the cache and stop");
  own.option("--spheres", o.size.spheres, "another number of grains (README.md, size options)")
      .within(1, 1e8);
  own.option("--cost", o.size.cost_duration,
             "the cost run: DEM, IPM 1e-3 and 1e-5 over this many seconds, no PGJ")
      .named("SECONDS");
  own.option("--fine", o.size.fine_tolerance,
             "the time-step study: the DEM and the IPM at this tolerance at h = 1e-2 s and "
             "1e-3 s, no other run")
      .named("TOLERANCE");
  own.option("--pgj-iterations", o.pgj_iterations, "PGJ iterations per step (default 2,000)")
      .within(1, 1e9);
  own.option("--preconditioner", preconditioner, "the IPM's body-space CG preconditioner")
      .choices({"symmetric_gauss_seidel", "body_blocks"});
  return own;
}

}  // namespace

int main(int argc, char** argv) {
  Options own;
  std::string preconditioner = "symmetric_gauss_seidel";
  std::string trench = "medium";
  return run_experiment(
      argc, argv, kExperiment, declare(own, preconditioner, trench),
      [&](const ExperimentArguments& args, ExperimentResults& results) {
        if (preconditioner == "body_blocks")
          own.preconditioner = moreau::conic::BodySpacePreconditioner::body_blocks;
        if (trench == "published") own.trench = FullTrench::published;
        const fs::path dir = args.output_directory;
        TrenchConfig config = trench_config(args.scale, own.trench, own.complete, own.size);
        config.ipm_preconditioner = own.preconditioner;
        long* interrupt = own.interrupt_after > 0 ? &own.interrupt_after : nullptr;
        // A resumable job that is told to stop (SIGINT, SIGTERM) checkpoints first, so that the
        // next start loses nothing: the settling (which always continues from its checkpoint in
        // the cache) at its next checkpoint, a ploughing run at the end of its current window.
        if (own.resume || own.settle_only) resumable::stop_on_signals();
        const Start start = prepare(config, dir, own.cache, interrupt, results);
        results.add_file("settled_packing.json", "raw");
        results.add_file("trench_scene.json", "raw");
        // The settling of the full scale is a job of its own (README.md): the packing goes to
        // the cache, where the ploughing runs find it.
        if (own.settle_only) return RunEnd::part;
        // Checkpoints at the full scale always, at the quick scale when asked to resume.
        const fs::path checkpoints = own.resume || args.full() ? dir / "checkpoints" : fs::path();
        const SpecFor spec = [&](const std::string& label, const std::string& slug,
                                 double duration) {
          return RunSpec{label,      slug,     duration, checkpoints, config.checkpoint_every,
                         own.resume, interrupt};
        };
        const RunResult dem = run_dem(config, start.density, start.checkpoint,
                                      spec("DEM", "dem", config.dem_duration));
        const Steady dem_draft = steady(dem, config.steady_start);
        const std::vector<ToleranceResult> ipm = run_tolerances(config, start, spec, dem, dir);
        const std::vector<ToleranceResult> ipm_fine = run_fine_ipm(config, start, spec, dem);
        const std::vector<RunResult> pgj = run_pgj(config, start, spec, own.pgj_iterations);

        std::vector<RunResult> all = {dem};
        for (const ToleranceResult& t : ipm) all.push_back(t.run);
        for (const ToleranceResult& t : ipm_fine) all.push_back(t.run);
        all.insert(all.end(), pgj.begin(), pgj.end());
        write_series(results, dir, all);
        write_table(results, dir, table_1(results.reference()), ipm, ipm_fine, dem, dem_draft, pgj,
                    config.steady_start);
        const bool medium = args.full() && own.trench == FullTrench::medium;
        const std::string suffix = !args.full() ? "" : medium ? "_medium" : "_full";
        check_drafts(results, ipm, suffix);
        check_separation(results, ipm, suffix);
        if (medium)
          not_this_trench(results, "_full",
                          "the published trench (105,144 spheres) runs with --trench published "
                          "--complete (ctest experiment.blade_trench.published, label long)");
        else if (args.full())
          not_this_trench(results, "_medium", "the medium trench runs with --trench medium");
        measure_runs(results, results.reference(), ipm, ipm_fine, dem, pgj, config.steady_start,
                     dem_draft);
        results.measure("OpenMP threads", omp_get_max_threads(), "");
        results.add_file("snapshot.csv", "raw");
        for (const char* figure :
             {"draft_force.png", "trench_snapshot.png", "rtf_vs_tolerance.png"})
          results.add_file(figure, "figure");
        return RunEnd::checked;
      });
}
