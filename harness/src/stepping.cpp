#include "moreau/harness/stepping.hpp"

#include <utility>

namespace moreau {

SteppingRun::SteppingRun(std::unique_ptr<Stepper> stepper, StepReading read)
    : simulation_(std::move(stepper)), reading_(std::move(read)) {
  simulation_.add_observer(reading_);
}

RunOutcome SteppingRun::advance(long steps) { return simulation_.run(steps); }

RunOutcome SteppingRun::advance_while(const std::function<bool(Stepper&)>& next) {
  RunOutcome outcome;
  while (next(stepper())) {
    outcome.wall_seconds += simulation_.run(1).wall_seconds;
    ++outcome.steps_completed;
  }
  outcome.steps_requested = outcome.steps_completed;
  return outcome;
}

RunOutcome run_steps(std::unique_ptr<Stepper> stepper, long steps, StepReading read) {
  SteppingRun run(std::move(stepper), std::move(read));
  return run.advance(steps);
}

}  // namespace moreau
