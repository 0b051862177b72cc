#pragma once
// The frame of an experiment's main: its arguments, its reference, its results, and the
// results.json and exit status at the end, so that the experiment's own code is its scenes,
// methods, tables and checks.
#include <functional>
#include <string>

#include "moreau/harness/reference.hpp"
#include "moreau/harness/results.hpp"
#include "moreau/harness/table.hpp"

namespace moreau {

// How a run of an experiment ends.
enum class RunEnd {
  checked,               // results.json written; the exit status is ExperimentResults::exit_code
  part,                  // a part of the experiment (e.g. a preparation): results.json written,
                         // exit status 0, its checks left to the run that uses it
  part_without_results,  // a selection of the experiment's runs (runs in parallel, merged
                         // afterwards): no results.json, exit status 0
};

using ExperimentBody = std::function<RunEnd(const ExperimentArguments&, ExperimentResults&)>;

// Parses the command line (the common options and `own`), loads the reference of `experiment`
// from --reference, runs `body` and writes results.json into --output as `body`'s end asks.
// Returns the exit status: an error (bad arguments, input the run refuses) is reported on
// stderr as "<experiment>: error: ..." with status 2; a run stopped at a checkpoint before its end
// (resumable::Interrupted: a stop signal, the --interrupt-after test hook), which --resume
// continues, as "<experiment>: stopped: ..." with kStoppedExitStatus.
constexpr int kStoppedExitStatus = 4;
int run_experiment(int argc, char** argv, const std::string& experiment,
                   const ExperimentOptions& own, const ExperimentBody& body);
int run_experiment(int argc, char** argv, const std::string& experiment,
                   const ExperimentBody& body);

}  // namespace moreau
