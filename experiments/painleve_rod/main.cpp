// Painleve rod and the academic six-mass problem, Preclik et al. Sec. 4.1-4.2: the
// maximum-dissipation impact model has one solution where the Coulomb-like one has several. See
// README.md for the scenes, the choices made and what each part shows.
#include "moreau/harness/experiment.hpp"
#include "parts.hpp"

namespace {

using namespace moreau;
using namespace painleve_rod;

Scale scale_for(bool full) {
  return full ? Scale{200, 200, 241, 200000} : Scale{24, 24, 121, 20000};
}

}  // namespace

int main(int argc, char** argv) {
  return run_experiment(argc, argv, "painleve_rod",
                        [](const ExperimentArguments& args, ExperimentResults& results) {
                          const Scale scale = scale_for(args.full());
                          run_academic(args, scale, results);
                          run_rod_impact(args, scale, results);
                          run_time_stepping(args, results);
                          run_timing(args, scale, results);
                          return RunEnd::checked;
                        });
}
