#pragma once
// The CSV and VTK output of a Simulation, as one of its observers.
#include <filesystem>
#include <optional>

#include "moreau/io/csv_writer.hpp"
#include "moreau/io/vtk_writer.hpp"
#include "moreau/simulation/simulation.hpp"

namespace moreau {

// CSV (bodies.csv, contacts.csv) and VTK output every `every` steps, the initial state, the
// last step, and the step that a "stop" failure policy ends the run at.
struct OutputSchedule {
  long every = 1;
  bool csv = true;
  bool vtk = false;
  bool compatible_column = false;    // contacts.csv gets f_n_compatible
  bool write_stopping_step = false;  // the failure policy is "stop"
};

class OutputWriter final : public StepObserver {
 public:
  OutputWriter(const std::filesystem::path& directory, Dimension dimension,
               OutputSchedule schedule);
  void on_start(const Stepper& stepper, long total_steps) override;
  bool wants_contacts(long step) const override;
  void on_step(const Stepper& stepper, const StepReport& report) override;
  void on_finish(const Stepper&, const RunOutcome&) override;

 private:
  OutputSchedule schedule_;
  long total_steps_ = 0;
  std::optional<CsvWriter> csv_;
  std::optional<VtkWriter> vtk_;
};

}  // namespace moreau
