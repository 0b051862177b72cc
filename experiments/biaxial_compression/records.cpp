#include "records.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "moreau/harness/table.hpp"

namespace biaxial {

using moreau::ExperimentResults;

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

}  // namespace biaxial
