// Granular channel flow past an obstacle, Preclik et al. Sec. 4.3 (Fig. 9-12, Table 2): the
// impulse-velocity scheme with the Coulomb-like and the maximum-dissipation impact model on the
// same seeded inflow, two seeds each; the macro figures of Table 2 sampled every 10 ms and
// averaged over the steady part, the velocity and angular-velocity profiles on the x-y cells
// of Fig. 10-11, the radial distribution near the outflow of Fig. 12. See README.md.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <iomanip>
#include <iostream>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "flow_runs.hpp"
#include "moreau/harness/experiment.hpp"
#include "moreau/harness/piece_pool.hpp"
#include "moreau/harness/resumable_run.hpp"

namespace {

using namespace moreau;
using namespace channel_flow;
namespace resumable = moreau::resumable;

// The scales. Quick: the channel shrunk to a tenth in x and y (1.5 x 0.65 cm, the obstacle with
// it) and 4 mm high, particles, inflow and time step as published. Full: the published channel.
struct Scale {
  double shrink, height, duration;
};
constexpr Scale kQuick{0.1, 0.004, 0.08};
constexpr Scale kFull{1.0, 0.02, 10.0};
constexpr long kSampleEvery = 1000;  // steps: 10 ms at dt = 10 us (Preclik et al. Table 2)
// The steady part starts after three transits of the channel at the inflow speed: by then the
// initial filling has left and the bed has formed; the `steady` check tests it on the samples.
constexpr double kSteadyTransits = 3.0;
// The particle count of the first and second half of the steady samples differ by at most this
// share when the flow is steady.
constexpr double kSteadyDrift = 0.05;
// Two models agree in a figure when their seed-averaged values differ by at most this many times
// the larger seed-to-seed difference within a model (the run-to-run spread).
constexpr double kSpreadFactor = 3.0;
const unsigned kSeeds[] = {1, 2};

struct Figures {
  double particles, solid_fraction, contacts_per_particle, penetration_um, peak_speed;
};

Figures figures(const Outcome& o, double steady_from) {
  const Means m = steady_means(o, steady_from);
  return {m.particles, m.solid_fraction, m.contacts_per_particle, m.penetration_max * 1e6,
          o.profile.front().last.peak_speed()};
}

void write_tables(ExperimentResults& results, const std::string& dir,
                  const std::vector<Outcome>& runs) {
  CsvTable samples(results, dir, "samples.csv",
                   {"model", "seed", "time", "particles", "contacts", "contacts_per_particle",
                    "solid_fraction", "penetration", "iterations"},
                   8);
  CsvTable profile(results, dir, "profile.csv",
                   {"model", "seed", "frame", "ix", "iy", "x", "y", "count", "vx", "vy", "vz",
                    "speed", "wx", "wy", "wz", "angular_speed"},
                   8);
  CsvTable rdf(results, dir, "rdf.csv", {"model", "seed", "r_over_d", "g"}, 8);
  for (const Outcome& o : runs) {
    for (const Sample& s : o.samples)
      samples.row(o.model, o.seed, s.time, s.particles, s.contacts,
                  s.particles > 0 ? static_cast<double>(s.contacts) / s.particles : 0.0,
                  s.solid_fraction, s.penetration, s.iterations);
    for (const auto& [frame, cells] :
         {std::pair<std::string, const CellFields*>{"last", &o.profile.front().last},
          {"steady_mean", &o.profile.front().mean}})
      for (long iy = 0; iy < cells->cells_y(); ++iy)
        for (long ix = 0; ix < cells->cells_x(); ++ix) {
          const CellFields::Cell& c = cells->at(ix, iy);
          const double n = std::max<double>(1.0, static_cast<double>(c.count));
          const Vec3 v = c.velocity / n, w = c.angular_velocity / n;
          profile.row(o.model, o.seed, frame, ix, iy, cells->centre_x(ix), cells->centre_y(iy),
                      c.count, v.x(), v.y(), v.z(), v.norm(), w.x(), w.y(), w.z(), w.norm());
        }
    for (std::size_t k = 0; k < o.rdf.size(); ++k)
      rdf.row(o.model, o.seed, (static_cast<double>(k) + 0.5) * o.rdf_bin_width / o.diameter,
              o.rdf[k]);
  }
}

// The checkpoint directory of a run: "coulomb_seed1", ...
std::string run_name(const RunSpec& spec) {
  const std::string model =
      spec.scene == kMaxDissipationScene ? std::string("max_dissipation") : "coulomb";
  return model + "_seed" + std::to_string(spec.seed);
}

std::string text(double x) {
  std::ostringstream out;
  out << std::setprecision(4) << x;
  return out.str();
}

// runs: Coulomb seeds 1, 2, then maximum dissipation seeds 1, 2.
void check_figures(ExperimentResults& results, const std::vector<Outcome>& runs,
                   const std::vector<Figures>& f, double steady_from) {
  struct Figure {
    const char* name;
    double Figures::*member;
  };
  const Figure all[] = {{"particles", &Figures::particles},
                        {"solid_fraction", &Figures::solid_fraction},
                        {"contacts_per_particle", &Figures::contacts_per_particle},
                        {"penetration", &Figures::penetration_um},
                        {"peak_speed", &Figures::peak_speed}};
  for (const Figure& fig : all) {
    const double c1 = f[0].*fig.member, c2 = f[1].*fig.member;
    const double m1 = f[2].*fig.member, m2 = f[3].*fig.member;
    const double spread = std::max(std::abs(c1 - c2), std::abs(m1 - m2));
    const double difference = std::abs(0.5 * (c1 + c2) - 0.5 * (m1 + m2));
    const double band = kSpreadFactor * spread;
    results.check(std::string("models_agree_") + fig.name, difference <= band,
                  "Coulomb seeds " + text(c1) + ", " + text(c2) + "; maximum dissipation " +
                      text(m1) + ", " + text(m2) + "; |difference of means| " + text(difference) +
                      " vs band 3 x spread = " + text(band));
  }
  const auto mean = [&](int first, double Figures::*member) {
    return 0.5 * (f[first].*member + f[first + 1].*member);
  };
  for (const auto& [model, first] :
       {std::pair<std::string, int>{"coulomb", 0}, {"max_dissipation", 2}}) {
    const std::string seeds = "mean of seeds 1 and 2 over the steady samples";
    results.check(model + "_solid_fraction", mean(first, &Figures::solid_fraction), seeds);
    results.check(model + "_contacts_per_particle", mean(first, &Figures::contacts_per_particle),
                  seeds);
    results.check(model + "_peak_speed", mean(first, &Figures::peak_speed),
                  "largest cell-mean speed of the last frame, mean of seeds 1 and 2");
    results.check(model + "_penetration",
                  std::max(f[first].penetration_um, f[first + 1].penetration_um),
                  "largest particle-particle overlap over the steady samples of both seeds, um");
    results.check(model + "_rdf_peak_at_diameter",
                  rdf_peak_at_diameter(runs[first]) && rdf_peak_at_diameter(runs[first + 1]),
                  "largest g(r) within 10% of d for both seeds");
    const double drift = std::max(steady_drift(runs[first], steady_from),
                                  steady_drift(runs[first + 1], steady_from));
    results.check(model + "_steady", drift <= kSteadyDrift,
                  "particle count drift between the halves of the steady samples: " + text(drift) +
                      " (at most " + text(kSteadyDrift) + ")");
  }
}

}  // namespace

int main(int argc, char** argv) {
  // README.md "Resuming from checkpoints": --resume continues every run from its checkpoint,
  // also to a longer --duration; --interrupt-after stops every run after step N as if killed
  // (the test of resuming).
  double duration = 0.0;
  bool resume = false;
  long interrupt_after = -1;
  ExperimentOptions own;
  own.option("--duration", duration,
             "simulated time per run, s (default: 0.08 quick, 10 full as published)")
      .within(0.0);
  own.flag("--resume", resume, "continue each run from its latest checkpoint");
  own.option("--interrupt-after", interrupt_after,
             "test hook: every run stops after step N as if killed")
      .within(0);
  return run_experiment(
      argc, argv, "channel_flow", own,
      [&](const ExperimentArguments& args, ExperimentResults& results) {
        const Scale scale = args.full() ? kFull : kQuick;
        resumable::Persistence persistence = resumable::experiment_persistence(
            args.output_directory, args.full(), resume, std::cout);
        persistence.interrupt_after = interrupt_after;
        std::vector<RunSpec> specs;
        for (const std::string& scene : {kCoulombScene, kMaxDissipationScene})
          for (const unsigned seed : kSeeds) {
            RunSpec spec;
            spec.scene = scene;
            spec.shrink = scale.shrink;
            spec.height = scale.height;
            spec.seed = seed;
            spec.duration = duration > 0.0 ? duration : scale.duration;
            spec.sample_every = kSampleEvery;
            specs.push_back(spec);
          }
        // The channel length and the inflow speed of the scene, for the steady criterion.
        const Scene published = load_scene(kCoulombScene);
        const double length = published.channel_flow->outlet_x * scale.shrink;
        const double steady_from = kSteadyTransits * length / published.channel_flow->speed;
        for (RunSpec& spec : specs) spec.steady_from = steady_from;

        // The four runs are independent: two at a time on the machine's two cores. Each run's
        // own parallel regions then take one thread; neither md_blend (its result depends on
        // its partitions, not on threads) nor the detector depends on the thread count.
        std::vector<Outcome> runs(specs.size());
        std::vector<std::exception_ptr> failure(specs.size());
        const int threads = args.threads > 0 ? args.threads : 2;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
        for (std::size_t i = 0; i < specs.size(); ++i) {
          try {
            // Each run's progress lines through its own LineStream: two runs write at once.
            std::unique_ptr<resumable::LineStream> progress;
            RunSpec spec = specs[i];
            spec.persistence = resumable::piece_persistence(persistence, run_name(spec), progress);
            runs[i] = run(spec);
          } catch (...) {
            failure[i] = std::current_exception();
          }
        }
        for (const std::exception_ptr& e : failure)
          if (e) std::rethrow_exception(e);
        write_tables(results, args.output_directory, runs);

        // Per run: the figures of Table 2 and the costs.
        std::vector<Figures> f;
        for (const Outcome& o : runs) {
          f.push_back(figures(o, steady_from));
          const Means m = steady_means(o, steady_from);
          const std::string r = o.label + ": ";
          results.measure(r + "average particles", m.particles, "",
                          "mean over the steady samples (every 10 ms)");
          results.measure(r + "average contacts", m.contacts, "");
          results.measure(r + "contacts per particle", m.contacts_per_particle, "");
          results.measure(r + "solid fraction", m.solid_fraction, "", "bed_solid_fraction");
          results.measure(r + "largest penetration (samples)", m.penetration_max * 1e6, "um");
          results.measure(r + "largest penetration (every step)",
                          o.largest_penetration_any_step * 1e6, "um");
          results.measure(r + "peak cell speed, last frame", f.back().peak_speed, "m/s");
          results.measure(r + "steady samples", static_cast<double>(m.samples), "");
          results.measure(r + "inflow rate",
                          static_cast<double>(o.particles_added - o.initial_particles) / o.duration,
                          "1/s",
                          "particles of the layers over the run; Preclik et al. state roughly "
                          "1.4e6 particles/s");
          results.measure(r + "wall time", o.wall_seconds, "s");
          results.measure(r + "particle-steps per second", o.particle_steps / o.wall_seconds, "1/s",
                          "one thread, alongside another run");
          results.measure(r + "contact sweeps per second", o.contact_sweeps / o.wall_seconds, "1/s",
                          "contacts x solver sweeps over the run's wall time");
          results.measure(r + "collision detection per step",
                          o.collision_seconds / static_cast<double>(o.steps), "s");
          results.measure(r + "contact solve per step",
                          o.solve_seconds / static_cast<double>(o.steps), "s");
        }
        long fewest = std::numeric_limits<long>::max();
        for (const Outcome& o : runs)
          fewest = std::min(fewest, steady_means(o, steady_from).samples);
        if (fewest < 2) {
          // A run shorter than the steady criterion (--duration) has no steady part to judge.
          for (const ReferenceValue& value : results.reference().values())
            if (value.name != "inflow_rate")
              results.not_evaluated(value.name,
                                    "fewer than two samples after t = " + text(steady_from) +
                                        " s (--duration " + text(specs.front().duration) + " s)");
        } else {
          check_figures(results, runs, f, steady_from);
        }
        // The layers' rate over every run (the seeds change velocities, not counts).
        double layers = 0.0;
        for (const Outcome& o : runs)
          layers += static_cast<double>(o.particles_added - o.initial_particles) / o.duration;
        const double rate = layers / static_cast<double>(runs.size());
        results.measure("inflow rate, mean of the runs", rate, "1/s");
        // The stated rate is of the published cross-section.
        if (args.full())
          results.check("inflow_rate", rate,
                        "particles of the generated layers per second of simulated time");
        // Drawn by scripts/figures/channel_flow.py from the CSV files.
        for (const char* figure :
             {"velocity_profile.png", "angular_velocity_profile.png", "rdf.png", "samples.png"})
          results.add_file(figure, "figure");
        return RunEnd::checked;
      });
}
