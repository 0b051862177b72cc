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

// A stepper run in pieces (settle, then read; check every so many steps) with one reading.
class SteppingRun {
 public:
  explicit SteppingRun(std::unique_ptr<Stepper> stepper, StepReading read = {});
  SteppingRun(const SteppingRun&) = delete;
  SteppingRun& operator=(const SteppingRun&) = delete;

  // `steps` more steps, each handed to the reading. A SimulationError (a non-finite state) is
  // passed on, after the reading has seen every step done.
  RunOutcome advance(long steps);
  Stepper& stepper() { return simulation_.stepper(); }
  const StepReport& last_report() const { return simulation_.stepper().last_report(); }

 private:
  class Reading final : public StepObserver {
   public:
    explicit Reading(StepReading read) : read_(std::move(read)) {}
    // The reading may look at the contacts of every step (the DEM fills them only on request).
    bool wants_contacts(long) const override { return static_cast<bool>(read_); }
    void on_step(const Stepper& stepper, const StepReport& report) override {
      if (read_) read_(stepper, report);
    }

   private:
    StepReading read_;
  };
  Simulation simulation_;
  Reading reading_;
};

// Runs `steps` steps of `stepper` and hands each one to `read`.
RunOutcome run_steps(std::unique_ptr<Stepper> stepper, long steps, StepReading read);

}  // namespace moreau
