// Biaxial compression of the Krabbenhoft/NURBS chapter Sec. 4.4.1: samples of disks, angular
// convex and non-convex particles (16 shapes, matched mean diameters) under the confining stress
// sigma_3 = 125 on the right wall and an axial strain of 0.21 imposed by the top wall, solved by
// the static formulation (eq. 4.16) for k_N = inf, 1e8, 1e6, 1e5 and k_T = 2 k_N / 3
// (Fig. 4.4-4.7). See README.md for the scene and the choices made.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "biaxial_test.hpp"
#include "moreau/harness/results.hpp"
#include "moreau/harness/table.hpp"
#include "moreau/model/shape_families.hpp"
#include "persistence.hpp"
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

std::string stiffness_label(double k) {
  if (std::isinf(k)) return "inf";
  char text[32];
  std::snprintf(text, sizeof text, "%.0e", k);
  return text;
}

// The curves of Fig. 4.4-4.7 and the driver's diagnostics, one row per load step.
void write_curves(const std::string& directory, const std::vector<Outcome>& outcomes) {
  moreau::CsvTable out(directory, "curves.csv",
                       {"family",
                        "k_n",
                        "step",
                        "axial_strain",
                        "volumetric_strain",
                        "sigma1",
                        "sigma3",
                        "deviatoric",
                        "newton_steps",
                        "substeps",
                        "solve_seconds",
                        "step_seconds",
                        "contacts",
                        "rattlers",
                        "idle_particles",
                        "idle_released",
                        "overshooting_particles",
                        "largest_motion",
                        "deepest_overlap",
                        "largest_dynamic_force",
                        "relaxation_steps",
                        "numerical_limit_solves"},
                       10);
  for (const Outcome& o : outcomes)
    for (const TestPoint& p : o.run.points)
      out.row(to_string(o.family), stiffness_label(o.k_normal), p.step, p.axial_strain,
              p.volumetric_strain, p.sigma1, p.sigma3, p.deviatoric(), p.newton_steps, p.substeps,
              p.solve_seconds, p.step_seconds, p.contacts, p.rattlers, p.idle_particles,
              p.idle_released, p.overshooting_particles, p.largest_motion, p.deepest_overlap,
              p.largest_dynamic_force, p.relaxation_steps, p.numerical_limit_solves);
}

void record_sample(ExperimentResults& results, const Sample& sample) {
  const std::string f = to_string(sample.family) + ": ";
  results.measure(f + "settling steps (dt at most 0.01 s, theta = 1)",
                  static_cast<double>(sample.settle_steps), "");
  results.measure(f + "settling steps shortened to move within half the margin",
                  static_cast<double>(sample.shortened_settle_steps), "");
  results.measure(f + "shortest settling step", sample.shortest_settle_step, "s",
                  "0: none shortened");
  results.measure(f + "servo consolidation steps", static_cast<double>(sample.consolidation_steps),
                  "");
  results.measure(f + "settling wall-clock (settling and consolidation)", sample.settle_seconds,
                  "s");
  results.measure(f + "largest overlap while settling", sample.largest_overlap, "m");
  results.measure(f + "non-converged settling steps", static_cast<double>(sample.settle_failures),
                  "");
  results.measure(f + "top wall stress at the end of the consolidation", sample.top_stress, "N/m^2",
                  "target sigma_3 = 125; above it: elastic overlaps step 0 releases");
  results.measure(f + "right wall stress at the end of the consolidation", sample.right_stress,
                  "N/m^2");
  results.measure(f + "mean particle speed at the end of the consolidation", sample.final_speed,
                  "m/s");
  results.measure(f + "consolidated (walls loaded, particles at rest)",
                  sample.consolidated ? 1.0 : 0.0, "",
                  sample.consolidated ? "" : "no equilibrium within the step limit (README.md)");
}

void record_run(ExperimentResults& results, const Outcome& o) {
  const std::string f = to_string(o.family) + ", k_N = " + stiffness_label(o.k_normal) + ": ";
  const ResponseMeasures& m = o.measures;
  results.measure(f + "porosity after consolidation", o.run.porosity0, "");
  results.measure(f + "axial strain reached", m.final_axial_strain, "",
                  o.run.failure.empty() ? "" : "stopped: " + o.run.failure);
  results.measure(f + "peak deviatoric stress", m.peak, "N/m^2");
  results.measure(f + "residual deviatoric stress", m.residual, "N/m^2",
                  "mean over eps_a >= 2/3 of the final strain");
  results.measure(f + "largest dilation -eps_v", m.dilation, "");
  results.measure(f + "largest compaction eps_v", m.compaction, "");
  results.measure(f + "(sigma_1 - sigma_3) at load step 1 / peak", m.first_step_ratio, "");
  results.measure(f + "IPM Newton steps per load step", m.mean_newton_steps, "");
  results.measure(f + "wall-clock per load step", m.mean_step_seconds, "s");
  results.measure(f + "extra solves (halved load steps)", static_cast<double>(m.substeps), "");
  results.measure(f + "pseudo-time step (eq. 4.15 from rest)", o.run.pseudo_time_step, "s",
                  "m u / dt^2 = 1e-3 sigma_3 d for a particle moved by one axial increment");
  long guarded = 0;
  double largest = 0.0, unflagged_peak = 0.0, overlap = 0.0, dynamic = 0.0;
  long relaxations = 0, limit_solves = 0;
  for (const TestPoint& p : o.run.points) {
    relaxations += p.relaxation_steps;
    limit_solves += p.numerical_limit_solves;
    dynamic = std::max(dynamic, p.largest_dynamic_force);
    guarded += p.overshooting_particles > 0 ? 1 : 0;
    largest = std::max(largest, p.largest_motion);
    overlap = std::max(overlap, p.deepest_overlap);
    if (p.overshooting_particles == 0) unflagged_peak = std::max(unflagged_peak, p.deviatoric());
  }
  results.measure(f + "load steps moving a particle beyond the collision margin",
                  static_cast<double>(guarded), "", "the driver's displacement guard");
  results.measure(f + "largest particle motion in a load step", largest, "m");
  results.measure(f + "peak deviatoric stress over the steps the guard did not flag",
                  unflagged_peak, "N/m^2",
                  "the single-step spikes of the peak come with many particles beyond the margin");
  results.measure(f + "deepest overlap at the start of a load step", overlap, "m");
  results.measure(f + "largest dynamic force of a load step / (sigma_3 d)",
                  o.run.contact_force_scale > 0.0 ? dynamic / o.run.contact_force_scale : 0.0, "",
                  "how far a load step is from the static equilibrium of eq. 4.16");
  results.measure(f + "kinetic relaxation steps", static_cast<double>(relaxations), "",
                  "after load steps whose dynamic forces exceeded 1e-2 sigma_3 d");
  results.measure(f + "solves accepted at the IPM's numerical limit",
                  static_cast<double>(limit_solves), "",
                  "rounding stalled the Newton steps with the core's residuals within the "
                  "tolerance (QuasiStaticReport::solved)");
}

}  // namespace

int main(int argc, char** argv) {
  try {
    // README.md "Resuming from checkpoints": --resume continues every piece from its checkpoint;
    // --only PREFIX runs only the curves whose piece name (e.g. non_convex_kinf) starts with
    // PREFIX, and the samples they need, for runs in parallel: the checks are then not
    // evaluated and no results.json is written.
    bool resume = false;
    std::string only;
    moreau::ExperimentOptions own;
    own.flag("--resume", resume, "continue each piece from its latest checkpoint");
    own.option("--only", only,
               "run only the curves whose piece name starts with PREFIX (no checks, no "
               "results.json)")
        .named("PREFIX");
    const moreau::ExperimentArguments args =
        moreau::ExperimentArguments::parse(argc, argv, "biaxial_compression", own);
    const Persistence persistence =
        experiment_persistence(args.output_directory, args.full(), resume, std::cout);
    const double started = now_seconds();
    int tests_done = 0;
    const int tests = 3 * static_cast<int>(scale_of(args).stiffnesses.size());
    ExperimentResults results("biaxial_compression", args.scale,
                              moreau::Reference::load(args.reference_directory));
    const Scale scale = scale_of(args);
    const double diameter = moreau::ShapeFamilyOptions{}.mean_diameter;
    for (double k : scale.stiffnesses)
      if (!std::isinf(k))
        results.measure("characteristic overlap sigma_3 d / k_N at k_N = " + stiffness_label(k),
                        kConfiningStress * diameter / k, "m", "d = 1 m mean diameter");
    const auto selected = [&](const std::string& piece) { return piece.starts_with(only); };
    std::vector<Outcome> outcomes;
    for (Family family : {Family::disk, Family::angular, Family::non_convex}) {
      bool any = false;
      for (double k : scale.stiffnesses)
        any = any || selected(to_string(family) + "_k" + stiffness_label(k));
      if (!any) continue;
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
                  << ++tests_done << "/" << tests << " done, "
                  << duration_text(now_seconds() - started) << " in this process" << std::endl;
        outcomes.push_back(std::move(o));
      }
    }
    write_curves(args.output_directory, outcomes);
    if (!only.empty()) {
      std::cout << "--only " << only << ": " << outcomes.size()
                << " curves, checks not evaluated (curves.csv written)" << std::endl;
      return 0;
    }
    results.add_file("curves.csv", "raw");
    run_checks(results, outcomes);
    results.add_file("biaxial_compression.png", "figure");
    results.write(args.output_directory);
    return results.exit_code();
  } catch (const std::exception& e) {
    std::cerr << "biaxial_compression: error: " << e.what() << "\n";
    return 2;
  }
}
