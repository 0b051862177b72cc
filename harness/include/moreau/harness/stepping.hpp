#pragma once
// An experiment's time stepping as a Simulation (moreau/simulation/simulation.hpp): the engine's
// run loop with the experiment's measurements as an observer, so that an experiment states what
// it reads after each step instead of writing its own loop.
#include <functional>
#include <memory>

#include "moreau/simulation/simulation.hpp"

namespace moreau {

// What an experiment reads after a step: the stepper (its world, its scheme's own state) and the
// step's report.
using StepReading = std::function<void(const Stepper&, const StepReport&)>;

// Runs `steps` steps of `stepper` and hands each one to `read`. A SimulationError (a non-finite
// state) is passed on, after `read` has seen every step done.
RunOutcome run_steps(std::unique_ptr<Stepper> stepper, long steps, StepReading read);

}  // namespace moreau
