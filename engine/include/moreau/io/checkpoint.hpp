#pragma once
// Checkpoints: the state of a world after a step, and what a run needs beside it to continue,
// as one JSON file, so that a run can be restarted from it (`moreau run --restart FILE`) or
// continued across processes bit for bit (moreau/harness/resumable_run.hpp), and so that a
// settled packing can be kept and reused (docs/scene-format.md, "Checkpoints"). A file holds
//  - "format": "moreau checkpoint", "version": 1 or 2, "scene" (a label), "step", "time";
//  - "bodies": per body its name, position, orientation (w, x, y, z), velocity, angular
//    velocity, and what it is (motion, rotation lock, shape), which reading checks against the
//    world so that a checkpoint of another scene is refused;
//  - version 2 only, each optional: "scheme_state", the scheme's own state carried from step to
//    step: the variational scheme's shear history Delta q of the persistent contacts
//    (Krabbenhoft eq. 4.8, moreau/variational/shear_history.hpp) as "shear_history": [[body_a,
//    body_b, order, fx, fy, fz], ...], or the DEM's (moreau/dem/dem_state.hpp), the
//    Cundall-Strack springs of the touching pairs as "tangential_springs": [[body_a, body_b,
//    sx, sy, sz], ...] and the last step's force and torque per body as "forces": [[fx, fy, fz,
//    tx, ty, tz], ...]; and "metadata", an object the caller owns (an experiment's counters,
//    what the state was computed with).
// A checkpoint without scheme state or metadata is written as version 1, so that it is byte for
// byte what a reader of version 1 reads. Every number is written with 17 significant digits,
// so it reads back exactly. A scheme whose state is not carried (the solver's warm start)
// starts it afresh from a restart, and the restarted run's numbers differ from an uninterrupted
// run's by that much.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "moreau/dem/dem_state.hpp"
#include "moreau/model/world.hpp"
#include "moreau/simulation/simulation.hpp"
#include "moreau/variational/shear_history.hpp"

namespace moreau {

// What a checkpoint holds beside the bodies' states and the time.
struct CheckpointContents {
  long step = 0;      // steps taken
  std::string scene;  // what the world was built from (a label; not checked on reading)
  // The scheme's own state, if any: the variational scheme's shear history or the DEM's
  // (last, after the metadata).
  std::optional<variational::ShearHistory> shear_history;
  nlohmann::json metadata;  // an object, or null for none
  std::optional<DemState> dem_state = std::nullopt;
};

// Writes the world and `contents` to `path` (through `path`.partial<pid>, the process's own,
// renamed into place, so that a process killed while writing leaves the previous file at `path`
// whole and two processes writing `path` do not mix their files). Throws InputError
// naming the file if it cannot be written, or if the metadata is neither null nor an object.
void write_checkpoint(const std::filesystem::path& path, const World& world,
                      const CheckpointContents& contents);
// The state of `world` after `step`, nothing beside it.
void write_checkpoint(const std::filesystem::path& path, const World& world, long step,
                      const std::string& scene);

// Replaces the time and body states of `world` (built from the same scene) by those of the
// checkpoint and returns the rest of it. Throws InputError naming the file and the JSON path
// when the file is missing or not a checkpoint, a value is missing, not finite or of the wrong
// size, the bodies (count, names, what they are) are not those of the world, a shear history
// or a spring names a body outside the world or a contact twice, a spring's bodies are not in
// ascending order, the DEM's forces are not one row per body, or the metadata is not an
// object.
CheckpointContents read_checkpoint_contents(const std::filesystem::path& path, World& world);
// The checkpoint's step, scene and scheme state and metadata without reading its bodies (to
// learn how to build the world it continues); validated as above, bar the bodies and the
// scheme state's upper bound on body indices.
CheckpointContents read_checkpoint_header(const std::filesystem::path& path);
// read_checkpoint_contents for a caller that restores no scheme state: returns the step, and
// refuses (InputError naming the file) a checkpoint that carries one, whose run would not
// continue as it was.
long read_checkpoint(const std::filesystem::path& path, World& world);

// write_checkpoint of the stepper's world with `contents` completed by the stepper's own state
// (the variational scheme's shear history, the DEM's springs and forces), so that a restart
// continues the same run.
void write_stepper_checkpoint(const std::filesystem::path& path, const Stepper& stepper,
                              CheckpointContents contents);

// Gives `stepper` the scheme state of a checkpoint read by read_checkpoint_contents (the
// variational scheme's shear history; the DEM's springs and forces, its neighbour list made
// anew at the restored state, which a DEM restarted from a checkpoint needs even without a
// state); InputError naming the file when the checkpoint carries a state of another scheme
// than the stepper's.
void restore_scheme_state(const CheckpointContents& contents, Stepper& stepper,
                          const std::filesystem::path& path);

// Writes <directory>/checkpoint_<step>.json every `every` steps and at the end of a run that
// did not fail, with the scheme's own state (the variational scheme's shear history, the DEM's
// springs and forces).
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
