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
  // Steps one at a time while `next`, asked before each step, says to take one; each step is
  // handed to the reading. For runs whose end depends on the state (settled, at rest, balanced
  // by a servo) and whose steps are set up from it (a time step limited by the speeds, a wall's
  // velocity): `next` may do that through the stepper. Returns the steps taken as one outcome;
  // a SimulationError is passed on as by advance().
  RunOutcome advance_while(const std::function<bool(Stepper&)>& next);
  // Whether the reading looks at StepReport::contacts (it does unless told otherwise): the DEM
  // converts its contacts only on request, which costs more than its step on large packings.
  void read_contacts(bool wanted) { reading_.read_contacts(wanted); }
  Stepper& stepper() { return simulation_.stepper(); }
  const StepReport& last_report() const { return simulation_.stepper().last_report(); }

 private:
  class Reading final : public StepObserver {
   public:
    explicit Reading(StepReading read) : read_(std::move(read)), contacts_(read_ != nullptr) {}
    void read_contacts(bool wanted) { contacts_ = wanted && read_ != nullptr; }
    // The reading may look at the contacts of every step (the DEM fills them only on request).
    bool wants_contacts(long) const override { return contacts_; }
    void on_step(const Stepper& stepper, const StepReport& report) override {
      if (read_) read_(stepper, report);
    }

   private:
    StepReading read_;
    bool contacts_;
  };
  Simulation simulation_;
  Reading reading_;
};

// Runs `steps` steps of `stepper` and hands each one to `read`.
RunOutcome run_steps(std::unique_ptr<Stepper> stepper, long steps, StepReading read);

}  // namespace moreau
