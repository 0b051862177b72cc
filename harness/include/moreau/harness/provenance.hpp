#pragma once
// Where a result comes from: the commit of the sources, the date, the machine, the threads,
// the wall time and the command of the run. Written into results.json, so that a recorded
// published-scale result can be told apart from a fresh one and traced back to its run.
#include <string>

namespace moreau {

struct RunProvenance {
  std::string commit;   // the sources' commit, "+modified" where the work tree differed
  std::string date;     // UTC, ISO 8601, when the run ended
  std::string machine;  // processor model, logical cores, memory
  int threads = 0;      // OpenMP threads the run used
  double wall_seconds = 0.0;
  std::string command;  // paths relative to the repository root where they lie inside it
};

// Starts the run's wall clock and keeps its command line (ExperimentArguments::parse calls it).
void start_run(int argc, char** argv);
// The provenance of the run so far.
RunProvenance current_run();

}  // namespace moreau
