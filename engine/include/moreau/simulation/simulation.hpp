#pragma once
// The run loop shared by `moreau run`, the experiments and the benchmark: a Stepper advanced
// for a number of steps, with observers that see the start, every step (and, for the schemes
// that build one, every step's contact problem) and the end. Writers, FCLIB export, progress
// lines, the solver-failure policy and run statistics are observers (observers.hpp).
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "moreau/core/error.hpp"
#include "moreau/integrator/stepper.hpp"

namespace moreau {

// How a run ended.
struct RunOutcome {
  long steps_requested = 0;
  long steps_completed = 0;
  std::string status = "completed";  // "completed", "stopped" (failure policy) or "failed"
  std::string error;                 // the message of the SimulationError that ended it
  double wall_seconds = 0.0;
};

class StepObserver {
 public:
  virtual ~StepObserver() = default;
  // Before the first step; `total_steps` is the number of steps the run will take.
  virtual void on_start(const Stepper&, long /*total_steps*/) {}
  // Whether the observer reads StepReport::contacts of step `step` (the DEM fills them only
  // when one does).
  virtual bool wants_contacts(long /*step*/) const { return false; }
  // After the solve of a step whose scheme exports its problem (Stepper::exports_problems).
  virtual void on_problem(const StepProblem&) {}
  // After each step. May throw SimulationError to end the run (RunStopped: status "stopped").
  virtual void on_step(const Stepper&, const StepReport&) {}
  // At the end, also of a run that a SimulationError ended (before it is rethrown).
  virtual void on_finish(const Stepper&, const RunOutcome&) {}
};

// Thrown by an observer that stops the run on purpose (a solver failure under "stop").
class RunStopped : public SimulationError {
 public:
  using SimulationError::SimulationError;
};

class Simulation {
 public:
  explicit Simulation(std::unique_ptr<Stepper> stepper);

  // Observers are called in the order they were added; they must outlive run().
  void add_observer(StepObserver& observer);
  // Changes the world between steps (bodies entering and leaving: ChannelInflow of
  // channel_flow.hpp), called after each step once the observers have read it.
  void add_world_update(std::function<void(Stepper&)> update);
  // Runs `steps` steps. A SimulationError (non-finite state, an observer's stop) is passed on
  // after every observer's on_finish has seen the outcome.
  RunOutcome run(long steps);

  Stepper& stepper() { return *stepper_; }
  const Stepper& stepper() const { return *stepper_; }

 private:
  std::unique_ptr<Stepper> stepper_;
  std::vector<StepObserver*> observers_;
  std::vector<std::function<void(Stepper&)>> world_updates_;
};

}  // namespace moreau
