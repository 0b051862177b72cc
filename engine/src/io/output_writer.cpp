#include "moreau/io/output_writer.hpp"

#include "moreau/simulation/observers.hpp"

namespace moreau {

OutputWriter::OutputWriter(const std::filesystem::path& directory, Dimension dimension,
                           OutputSchedule schedule)
    : schedule_(schedule) {
  if (schedule_.csv) csv_.emplace(directory, dimension, schedule_.compatible_column);
  if (schedule_.vtk) vtk_.emplace(directory);
}

void OutputWriter::on_start(const Stepper& stepper, long total_steps) {
  total_steps_ = stepper.steps_taken() + total_steps;
  const long step = stepper.steps_taken();
  if (csv_) csv_->write_bodies(stepper.world(), step);
  if (vtk_) vtk_->write(stepper.world(), step, nullptr, stepper.time_step());
}

bool OutputWriter::wants_contacts(long step) const {
  return step % schedule_.every == 0 || step == total_steps_;
}

void OutputWriter::on_step(const Stepper& stepper, const StepReport& report) {
  const bool stopping = schedule_.write_stopping_step && !step_succeeded(report);
  // The state of a step that stops the run is written too: it is the one to look at.
  if (!wants_contacts(report.step) && !stopping) return;
  if (csv_) {
    csv_->write_bodies(stepper.world(), report.step);
    csv_->write_contacts(report, stepper.time_step());
  }
  if (vtk_) vtk_->write(stepper.world(), report.step, &report, stepper.time_step());
}

void OutputWriter::on_finish(const Stepper&, const RunOutcome&) {
  if (csv_) csv_->flush();
}

}  // namespace moreau
