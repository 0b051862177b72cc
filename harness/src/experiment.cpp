#include "moreau/harness/experiment.hpp"

#include <exception>
#include <iostream>

#include "moreau/core/allocator.hpp"
#include "moreau/harness/resumable_run.hpp"

namespace moreau {

int run_experiment(int argc, char** argv, const std::string& experiment,
                   const ExperimentOptions& own, const ExperimentBody& body) {
  keep_freed_memory();
  try {
    const ExperimentArguments args = ExperimentArguments::parse(argc, argv, experiment, own);
    ExperimentResults results(experiment, args.scale, Reference::load(args.reference_directory));
    const RunEnd end = body(args, results);
    if (end == RunEnd::part_without_results) return 0;
    results.write(args.output_directory);
    return end == RunEnd::part ? 0 : results.exit_code();
  } catch (const resumable::Interrupted& e) {
    std::cerr << experiment << ": stopped: " << e.what() << "\n";
    return kStoppedExitStatus;
  } catch (const std::exception& e) {
    std::cerr << experiment << ": error: " << e.what() << "\n";
    return 2;
  }
}

int run_experiment(int argc, char** argv, const std::string& experiment,
                   const ExperimentBody& body) {
  return run_experiment(argc, argv, experiment, ExperimentOptions{}, body);
}

}  // namespace moreau
