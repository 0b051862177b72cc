#include "moreau/harness/stepping.hpp"

#include <utility>

namespace moreau {
namespace {

class ReadingObserver final : public StepObserver {
 public:
  explicit ReadingObserver(StepReading read) : read_(std::move(read)) {}
  // The reading may look at the contacts of every step (the DEM fills them only on request).
  bool wants_contacts(long) const override { return true; }
  void on_step(const Stepper& stepper, const StepReport& report) override {
    read_(stepper, report);
  }

 private:
  StepReading read_;
};

}  // namespace

RunOutcome run_steps(std::unique_ptr<Stepper> stepper, long steps, StepReading read) {
  Simulation simulation(std::move(stepper));
  ReadingObserver observer(std::move(read));
  simulation.add_observer(observer);
  return simulation.run(steps);
}

}  // namespace moreau
