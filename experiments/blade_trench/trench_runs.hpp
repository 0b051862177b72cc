#pragma once
// The ploughing runs of the blade trench: any Stepper over the settled trench, the draft force
// (horizontal reaction on the blade, Kleinert Sec. 5: reaction impulse / step size) and the
// solver's cost averaged over windows of 10 ms (the CD step of the paper), progress lines
// (step, simulated time, Krylov iterations, ETA), checkpoints and resume.
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "moreau/dem/dem_stepper.hpp"
#include "moreau/integrator/stepper.hpp"

namespace blade_trench {

constexpr double kWindow = 1e-2;  // s: the paper's CD step; every series is kept per window
// A grain faster than ten blade speeds has been thrown, not pushed: the separation of
// particles the paper reports at tolerance 1e-2 (README.md); a run is unphysical once more
// than kSeparatedShare of the grains are that fast.
constexpr double kSeparationSpeed = 2.0;  // m/s
constexpr double kSeparatedShare = 0.01;
// A grain faster than this has exploded out of the trench: the run stops.
constexpr double kExplodedSpeed = 100.0;  // m/s

struct WindowRow {
  double time = 0.0;    // end of the window, s
  double draft = 0.0;   // mean horizontal force of the grains on the blade against its motion, N
  double krylov = 0.0;  // Krylov iterations in the window (IPM)
  double solver_iterations = 0.0;
  double merit = 0.0;              // largest merit of a step in the window
  double error = 0.0;              // mean of the IPM's error(gamma, u) over the window's steps
  double seconds = 0.0;            // wall time of the window
  double cpu_seconds = 0.0;        // CPU time of the process (all threads) in the window
  double solver_seconds = 0.0;     // of the contact solves (0 for the DEM)
  double collision_seconds = 0.0;  // broad and narrow phase (0 for the DEM)
  double contacts = 0.0;           // mean contacts per step
  int fast_grains = 0;             // faster than kSeparationSpeed at the window's end
  double max_speed = 0.0;          // m/s, at the window's end
  int not_converged = 0;           // steps whose solve stopped above the tolerance
};

struct RunSpec {
  std::string label;                           // "IPM 1e-5", "DEM", "PGJ"
  std::string slug;                            // folder name of its checkpoints
  double duration = 0.0;                       // simulated, s
  std::filesystem::path checkpoint_directory;  // empty: no checkpoints
  long checkpoint_every = 0;                   // windows between checkpoints
  bool resume = false;  // start from the latest checkpoint of this run, if any
  // Test hook (--interrupt-after): the windows this process may still run, over all its runs;
  // at zero it stops as if killed (resumable::Interrupted). Null: no limit.
  long* windows_left = nullptr;
};

struct RunResult {
  std::string label;
  std::vector<WindowRow> windows;
  long steps = 0;
  double time_step = 0.0;
  double wall_seconds = 0.0;         // of the steps run now and before a resume
  double simulated = 0.0;            // s
  long resumed_from_step = 0;        // 0: from the settled packing
  long first_separated_window = -1;  // first window with more than kSeparatedShare fast grains
  std::string failure;               // why the run stopped early (empty if it ran to the end)
  double real_time_factor() const { return simulated > 0.0 ? wall_seconds / simulated : 0.0; }
};

// CPU time of this process, all threads, s: on a loaded machine the cost that wall time hides.
double process_cpu_seconds();

// The horizontal (x) impulse of the grains on the blade in the last step, against the blade's
// motion (+x), from the report's contacts and impulses.
double blade_impulse_against_motion(const moreau::StepReport& report, int blade);
// The same from the DEM's touching pairs: the force, N.
double blade_force_against_motion(const moreau::DemStepper& dem, int blade);

// Runs `stepper` for spec.duration; `draft` gives the draft force of the step just taken
// (called every `sample_every` steps and averaged), from the report's contacts where
// `draft_reads_contacts`. Non-finite states and exploded runs are caught and reported in
// RunResult::failure, never thrown.
RunResult run_windows(const RunSpec& spec, std::unique_ptr<moreau::Stepper> stepper, int grains,
                      const std::function<double(const moreau::StepReport&)>& draft,
                      long sample_every, bool draft_reads_contacts);

}  // namespace blade_trench
