#pragma once
// Checkpoints: the state of a world (time and every body's position, orientation and
// velocities) after a step, as JSON, so that a run can be restarted from it
// (`moreau run --restart FILE`). A scheme's own state is not in it: a restarted run starts the
// solver's warm start and the DEM's tangential springs and neighbour list afresh, so its
// numbers differ from an uninterrupted run's by that much (docs/scene-format.md).
#include <filesystem>
#include <string>

#include "moreau/model/world.hpp"
#include "moreau/simulation/simulation.hpp"

namespace moreau {

// Writes the state after `step` (numbers with 17 significant digits, so they read back
// exactly). Throws InputError naming the file if it cannot be written.
void write_checkpoint(const std::filesystem::path& path, const World& world, long step,
                      const std::string& scene);

// Replaces the time and body states of `world` (built from the same scene) by those of the
// checkpoint and returns its step. Throws InputError naming the file and the JSON path when
// the file is not a checkpoint, a value is missing, not finite or of the wrong size, or the
// bodies (count and names) are not those of the world.
long read_checkpoint(const std::filesystem::path& path, World& world);

// Writes <directory>/checkpoint_<step>.json every `every` steps and at the end of a run that
// did not fail.
class CheckpointWriter final : public StepObserver {
 public:
  CheckpointWriter(std::filesystem::path directory, long every, std::string scene);
  void on_step(const Stepper& stepper, const StepReport& report) override;
  void on_finish(const Stepper& stepper, const RunOutcome& outcome) override;

 private:
  std::filesystem::path directory_;
  std::filesystem::path path(long step) const;
  long every_;
  std::string scene_;
};

}  // namespace moreau
