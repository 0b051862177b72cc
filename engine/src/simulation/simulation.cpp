#include "moreau/simulation/simulation.hpp"

#include <chrono>
#include <utility>

namespace moreau {

Simulation::Simulation(std::unique_ptr<Stepper> stepper) : stepper_(std::move(stepper)) {
  if (!stepper_) throw InputError("Simulation: no stepper given");
}

void Simulation::add_observer(StepObserver& observer) { observers_.push_back(&observer); }

RunOutcome Simulation::run(long steps) {
  if (steps < 0) throw InputError("Simulation: steps must be >= 0, got " + std::to_string(steps));
  const auto start = std::chrono::steady_clock::now();
  RunOutcome outcome;
  outcome.steps_requested = steps;
  auto finish = [&] {
    outcome.wall_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    for (StepObserver* observer : observers_) observer->on_finish(*stepper_, outcome);
  };
  bool problems = false;
  for (StepObserver* observer : observers_) observer->on_start(*stepper_, steps);
  if (stepper_->exports_problems()) {
    problems = true;
    stepper_->set_problem_observer([this](const StepProblem& problem) {
      for (StepObserver* observer : observers_) observer->on_problem(problem);
    });
  }
  try {
    for (long step = stepper_->steps_taken() + 1, last = stepper_->steps_taken() + steps;
         step <= last; ++step) {
      bool contacts = false;
      for (const StepObserver* observer : observers_)
        contacts = contacts || observer->wants_contacts(step);
      stepper_->request_contacts(contacts);
      const StepReport& report = stepper_->step();
      outcome.steps_completed = step - (last - steps);
      for (StepObserver* observer : observers_) observer->on_step(*stepper_, report);
      for (const auto& update : world_updates_) update(*stepper_);
    }
  } catch (const SimulationError& e) {
    outcome.status = dynamic_cast<const RunStopped*>(&e) ? "stopped" : "failed";
    outcome.error = e.what();
    if (problems) stepper_->set_problem_observer({});
    finish();
    throw;
  }
  if (problems) stepper_->set_problem_observer({});
  finish();
  return outcome;
}

void Simulation::add_world_update(std::function<void(Stepper&)> update) {
  world_updates_.push_back(std::move(update));
}

}  // namespace moreau
