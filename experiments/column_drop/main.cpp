// Column drop, Krabbenhoft/NURBS chapter Sec. 4.4.2 (Fig. 4.8-4.13): columns of disks, angular
// convex and non-convex particles settled in a box against a smooth wall, then released by
// removing the other side wall; the dynamic variational contact dynamics (eq. 4.15) with
// theta = 0.7, dt = 0.05, k_N = 1e8, k_T = 2 k_N / 3, interparticle mu = 0.5 and 0. See
// README.md for the scene, the units and the measures.
#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "column.hpp"
#include "deposit.hpp"
#include "moreau/harness/experiment.hpp"
#include "moreau/harness/piece_pool.hpp"
#include "moreau/harness/resumable_run.hpp"
#include "moreau/model/shape_families.hpp"
#include "release.hpp"
#include "settling.hpp"

namespace {

using namespace moreau;
using namespace moreau::column_drop;
using namespace moreau::resumable;

void write_series(ExperimentResults& results, const std::string& directory,
                  const std::vector<Run>& runs) {
  CsvTable out(results, directory, "series.csv",
               {"run", "step", "kinetic_energy", "energy_ratio", "deposit_energy", "toe",
                "max_overlap", "contacts", "newton_steps", "converged", "seconds"},
               10);
  for (const Run& run : runs)
    for (const StepRecord& r : run.steps)
      out.row(run.label(), r.step, r.kinetic_energy, r.energy_ratio, r.deposit_energy, r.toe,
              r.max_overlap, r.contacts, r.newton_steps, r.converged, r.seconds);
}

void write_snapshots(ExperimentResults& results, const std::string& directory,
                     const std::vector<Run>& runs) {
  CsvTable out(results, directory, "snapshots.csv",
               {"run", "family", "step", "particle", "x", "y", "angle"}, 10);
  for (const Run& run : runs)
    for (const Snapshot& s : run.snapshots)
      for (std::size_t k = 0; k < s.pose.size(); ++k)
        out.row(run.label(), name(run.family), s.step, k, s.pose[k].x(), s.pose[k].y(),
                s.pose[k].z());
  // The free surface at the default 6 digits, as the figures of Fig. 4.10 and 4.13 read it.
  CsvTable profiles(results, directory, "profiles.csv", {"run", "x", "height", "occupied"}, 6);
  for (const Run& run : runs)
    for (const SurfaceBin& b : run.final_surface)
      profiles.row(run.label(), b.x, b.height, b.occupied);
}

// Outlines of shape k of each family in its body frame (particle i has shape i mod 16).
void write_shapes(ExperimentResults& results, const std::string& directory,
                  const ShapeFamilies& shapes) {
  CsvTable out(results, directory, "shapes.csv", {"family", "shape", "vertex", "x", "y"}, 10);
  for (std::size_t k = 0; k < shapes.mean_diameter.size(); ++k) {
    out.row("disk", k, -1, shapes.disk_radius[k], 0);  // radius
    for (Family f : {Family::angular, Family::non_convex}) {
      const Polygon& p = (f == Family::angular ? shapes.angular : shapes.non_convex)[k];
      for (std::size_t v = 0; v < p.outline.size(); ++v)
        out.row(name(f), k, v, p.outline[v].x(), p.outline[v].y());
    }
  }
}

void measure_run(ExperimentResults& results, const Run& run) {
  const std::string p = run.label() + ": ";
  results.measure(p + "final slope", run.slope.angle_deg, "deg",
                  "line fit to the free surface, bins between 10% and 90% of the deposit height");
  results.measure(p + "bins in the slope fit", run.slope.points, "");
  results.measure(p + "deposit height", run.slope.height, "m");
  results.measure(p + "spread (toe from the symmetry wall)", run.spread, "m");
  results.measure(p + "steps run", static_cast<double>(run.steps.size()), "");
  results.measure(p + "kinetic energy at the end / (M g d)", run.steps.back().energy_ratio, "");
  results.measure(p + "deposit kinetic energy at the end / (m g d)",
                  run.steps.back().deposit_energy, "", "particles with centre behind the toe");
  results.measure(p + "toe advance over the last window", run.toe_advance, "m",
                  "window: a tenth of the scaled paper step count");
  results.measure(p + "stopped", run.stopped ? 1.0 : 0.0, "");
  double overlap = 0.0, seconds = 0.0, newton = 0.0;
  long failed = 0;
  std::map<std::string, long> statuses;
  for (const StepRecord& r : run.steps) {
    if (!r.converged) ++statuses[r.status];
    overlap = std::max(overlap, r.max_overlap);
    seconds += r.seconds;
    newton += r.newton_steps;
    failed += r.converged ? 0 : 1;
  }
  const double n = static_cast<double>(run.steps.size());
  results.measure(p + "largest overlap of a step", overlap, "m", "largest -g0 over all contacts");
  results.measure(p + "Newton steps per step (mean)", newton / n, "");
  std::string why;
  for (const auto& [status, count] : statuses)
    why += (why.empty() ? "" : ", ") + status + ": " + std::to_string(count);
  results.measure(p + "steps not converged", failed, "", why);
  results.measure(p + "wall time per step (mean)", seconds / n, "s", "one thread");
}

// The published slopes and spreads (mu = 0.5), checked at full scale only (expected.json).
void published_checks(ExperimentResults& results, const Run& disk, const Run& angular,
                      const Run& non_convex) {
  results.check("slope_disk", disk.slope.angle_deg);
  results.check("slope_angular", angular.slope.angle_deg);
  results.check("slope_non_convex", non_convex.slope.angle_deg);
  results.check("slope_ordering",
                disk.slope.angle_deg < angular.slope.angle_deg &&
                    angular.slope.angle_deg < non_convex.slope.angle_deg,
                "disk < angular < non-convex at mu = 0.5");
  results.check("spread_ratio_disk", disk.spread / non_convex.spread);
  results.check("spread_ratio_angular", angular.spread / non_convex.spread);
}

// runs: disk 0.5, disk 0, angular 0.5, angular 0, non-convex 0.5, non-convex 0.
void check(ExperimentResults& results, const std::vector<Run>& runs, bool full) {
  if (full) published_checks(results, runs[0], runs[2], runs[4]);
  results.check("frictionless_disk_flows", !runs[1].stopped);
  results.check("frictionless_angular_stops", runs[3].stopped);
  results.check("frictionless_non_convex_stops", runs[5].stopped);
  double overlap = 0.0;
  for (const Run& run : runs)
    for (const StepRecord& r : run.steps) overlap = std::max(overlap, r.max_overlap);
  results.check("largest_overlap", overlap / kDiameter, "largest -g0 of any step of any release");
}

// This experiment's own options (README.md, "Running"): --resume continues every piece from its
// checkpoint ("Resuming from checkpoints"); --particles sets the count between the two scales;
// --family and --friction run one family or one of the two releases (both start from the same
// settled column, so they can run as two processes whose checkpoints are merged), leaving the
// checks, which compare families and releases, unchecked; --pieces runs that many pieces at
// once, each on one thread; --interrupt-after stops every piece after N steps as if killed
// (experiment.column_drop.resume).
struct Options {
  bool resume = false;
  std::optional<long> particles;
  std::optional<std::string> family;
  std::optional<double> mu;
  int pieces = 1;
  long interrupt_after = -1;
};

ExperimentOptions declare(Options& o) {
  ExperimentOptions own;
  own.flag("--resume", o.resume, "continue each piece from its latest checkpoint");
  own.option("--particles", o.particles, "particles per family (default: the scale's)").within(16);
  own.option("--family", o.family, "run only this family")
      .choices({"disk", "angular", "non_convex"});
  own.option("--friction", o.mu, "run only the release of this mu").choices({"0.5", "0"});
  own.option("--pieces", o.pieces, "pieces (settlings, releases) run at once, each on one thread")
      .within(1);
  own.option("--interrupt-after", o.interrupt_after,
             "test hook: every piece stops after N steps as if killed")
      .within(0);
  return own;
}

// The pieces of one family: its column settled, then released at mu = 0.5 and 0 (those `o`
// asks for), each release from the settled column.
struct FamilyPieces {
  Family family = Family::disk;
  Settled settled;
  std::vector<double> frictions;
  std::vector<Run> releases;  // in the order of `frictions`
};

std::string piece_name(Family family, double mu) {
  return std::string(name(family)) + (mu > 0 ? "_mu0.5" : "_mu0");
}

// Queues the settling of `f`, which queues its releases when it ends (first: they continue it).
void queue_family(PiecePool& pool, FamilyPieces& f, const Setup& setup, const ShapeFamilies& shapes,
                  double margin, const Persistence& persistence) {
  pool.add([&pool, &f, &setup, &shapes, margin, persistence] {
    std::unique_ptr<LineStream> settle_progress;
    f.settled = settle(
        setup, shapes, f.family, margin,
        piece_persistence(persistence, std::string(name(f.family)) + "_settle", settle_progress));
    // At the front of the queue in the order of `frictions`.
    for (std::size_t k = f.frictions.size(); k-- > 0;) {
      const double mu = f.frictions[k];
      pool.add(
          [&f, &setup, margin, persistence, mu, k] {
            const long steps = mu > 0 ? setup.steps_friction : setup.steps_frictionless;
            std::unique_ptr<LineStream> progress;
            f.releases[k] =
                release(f.settled, f.family, mu, steps, margin, setup.gravity,
                        piece_persistence(persistence, piece_name(f.family, mu), progress));
          },
          true);
    }
  });
}

void report_family(ExperimentResults& results, std::vector<Run>& runs, const FamilyPieces& f,
                   const Setup& setup, const Options& o) {
  const Settled& settled = f.settled;
  const std::string p = std::string(name(f.family)) + ": ";
  results.measure(p + "settling steps", settled.steps, "");
  results.measure(p + "settling wall time", settled.seconds, "s");
  const double aspect = settled.height / setup.width[static_cast<int>(f.family)];
  results.measure(p + "settled H0 / L0", aspect, "");
  if (!o.family) results.check(std::string("settled_aspect_") + name(f.family), aspect);
  results.measure(p + "settling, largest overlap", settled.max_overlap, "m");
  results.measure(p + "settling, steps not converged", settled.non_converged, "");
  std::cerr << "column_drop: " << name(f.family) << " settled in " << settled.steps << " steps ("
            << settled.seconds << " s), H0/L0 = " << aspect << "\n";
  for (const Run& run : f.releases) {
    runs.push_back(run);
    measure_run(results, runs.back());
    std::cerr << "column_drop: " << runs.back().label() << " slope " << runs.back().slope.angle_deg
              << " spread " << runs.back().spread << "\n";
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  return run_experiment(
      argc, argv, "column_drop", declare(o),
      [&o](const ExperimentArguments& args, ExperimentResults& results) {
        // Each piece writes its progress lines through its own LineStream (piece_persistence).
        Persistence persistence =
            experiment_persistence(args.output_directory, args.full(), o.resume, std::cerr);
        persistence.interrupt_after = o.interrupt_after;
        const ShapeFamilies shapes = make_shape_families();
        const long particles =
            o.particles.value_or(args.full() ? kPublishedParticles : kQuickParticles);
        const Setup setup = make_setup(particles, shapes);
        const double margin = kMarginFactor * kStepMotion * kDiameter;
        results.measure("particles per family", particles, "");
        results.measure("gravity (time unit: sqrt(2 g H0) dt = 0.15 d)", setup.gravity, "m/s^2");
        results.measure("collision margin of the release", margin, "m");
        results.measure("steps, mu = 0.5", setup.steps_friction, "");
        results.measure("steps, mu = 0", setup.steps_frictionless, "");
        results.measure("pieces run at once", o.pieces, "", "each on one thread");
        std::vector<FamilyPieces> families;
        for (Family family : {Family::disk, Family::angular, Family::non_convex}) {
          if (o.family && *o.family != name(family)) continue;
          FamilyPieces f;
          f.family = family;
          for (double mu : {0.5, 0.0})
            if (!o.mu || mu == *o.mu) f.frictions.push_back(mu);
          f.releases.resize(f.frictions.size());
          families.push_back(std::move(f));
        }
        // One at a time in the families' order; at once the longest (the non-convex column's)
        // first, so that the last piece to end is a short one.
        PiecePool pool(o.pieces);
        if (o.pieces == 1) {
          for (FamilyPieces& f : families)
            queue_family(pool, f, setup, shapes, margin, persistence);
        } else {
          for (auto f = families.rbegin(); f != families.rend(); ++f)
            queue_family(pool, *f, setup, shapes, margin, persistence);
        }
        pool.wait();
        std::vector<Run> runs;
        for (const FamilyPieces& f : families) report_family(results, runs, f, setup, o);
        if (runs.size() == 6) check(results, runs, args.full());
        write_series(results, args.output_directory, runs);
        write_snapshots(results, args.output_directory, runs);
        write_shapes(results, args.output_directory, shapes);
        for (const char* f : {"column_drop_mu05.png", "column_drop_mu0.png",
                              "column_drop_profiles.png", "column_drop_series.png"})
          results.add_file(f, "figure");
        return RunEnd::checked;
      });
}
