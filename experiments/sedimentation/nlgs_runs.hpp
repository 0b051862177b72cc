#pragma once
// The runs of Dumont Sec. 4.2-4.4: the theta-method with an NLGS local solver over a part's
// steps, each step's NLGS statistics, the contact problem of one step solved again, and the runs
// as tables.
#include <string>
#include <vector>

#include "moreau/harness/table.hpp"
#include "moreau/model/world.hpp"
#include "moreau/nlgs/nlgs_solver.hpp"

namespace sedimentation {

using moreau::CsvTable;
using moreau::LocalMethod;
using moreau::NlgsStats;
using moreau::World;

constexpr int kMaxIterations = 5000;  // Dumont Sec. 4.2-4.3

struct Settings {
  double time_step;
  long steps;
  double epsilon_glob;
  double margin;  // collision margin, m
  // Local Newton (EBP, EAL): Dumont's absolute stop eps_Newt <= 1e-5, and the Armijo line
  // search the suite adds (not in Dumont; false = the paper's plain Newton step).
  double newton_tolerance = 1e-5;
  bool newton_line_search = true;
};

struct StepRow {
  long step;
  long contacts;
  int iterations;
  double epsilon_glob, max_penetration, cpu_seconds;
  std::string termination;
};

struct Outcome {
  std::string label;
  LocalMethod method = LocalMethod::ebp;
  std::vector<StepRow> rows;
  NlgsStats last;     // the measured (last) step
  World before_last;  // state at the start of the last step
  World final_world;
  double cpu_seconds = 0.0;  // whole run
  long unconverged_steps = 0;
};

Outcome run(const std::string& label, const World& initial, LocalMethod method, double alpha,
            const Settings& s);

// The contact problem of one step solved from the same state by another solver: the world at
// the start of the step, one step with `method` and `alpha`.
NlgsStats probe(const World& state, LocalMethod method, double alpha, const Settings& s);

// Largest overlap of two shapes at the end of the run, m (geometric penetration).
double max_overlap(const World& world);

int iterations_of(const std::vector<Outcome>& outcomes, LocalMethod method);

double penetration_of(const std::vector<Outcome>& outcomes, LocalMethod method);

void write_steps(CsvTable& out, const std::string& part, const Outcome& o);

void write_history(CsvTable& out, const std::string& part, const Outcome& o);

void write_positions(CsvTable& out, const std::string& part, const std::string& label,
                     const World& world);

}  // namespace sedimentation
