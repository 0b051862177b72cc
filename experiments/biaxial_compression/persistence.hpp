#pragma once
// Checkpoints of the long runs of the variational experiments (biaxial_compression, whose
// directory holds this file, and column_drop, which compiles it too), so that a published-scale
// run (hours to days of one core) continues across processes: `--resume` starts every piece (a
// preparation, a test, a release) from the latest checkpoint of its own and reads back the
// pieces already finished (README.md of each, "Resuming from checkpoints").
//
// A checkpoint is a directory (one per sample preparation, one per test of a family at one
// k_N) holding state.json, written last and renamed into place, which names the world state
// (moreau/io/checkpoint.hpp: every body's position, orientation, velocities and the time) and
// the shear history Delta q of the persistent contacts (moreau/variational/shear_history.hpp)
// of the same step. With these, the driver's or stepper's step count and the experiment's own
// counters, a continued run repeats the numbers of an uninterrupted one bit for bit
// (persistence_test.cpp). Everything read is validated: a missing, corrupt or mismatching file
// is an InputError naming the file, never a silent fresh start.
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>

#include "moreau/model/world.hpp"
#include "moreau/variational/shear_history.hpp"

namespace moreau::resumable {

struct Persistence {
  std::filesystem::path directory;  // of this piece's checkpoint; empty: none written or read
  bool resume = false;              // continue from the checkpoint in `directory`, if any
  double every_seconds = 300.0;     // wall clock between two checkpoints (0: after every step)
  // Test hook: return after this many steps of the piece as if the process had been killed
  // then (after its checkpoint). -1: never.
  long interrupt_after = -1;
  std::ostream* progress = nullptr;  // progress lines, one per step
  Persistence child(const std::string& name) const;
};

// Thrown where Persistence::interrupt_after stops a piece (the test of resuming).
struct Interrupted : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The persistence of an experiment's output directory: checkpoints under
// <output>/checkpoints/<piece>/ (Persistence::child) at the full scale always, at the quick scale
// when resuming; progress lines on `progress` at the full scale.
Persistence experiment_persistence(const std::string& output_directory, bool full, bool resume,
                                   std::ostream& progress);

// One checkpoint: the experiment's own fields (`fields`, an object), the world state and the
// shear history of its step. `kind` and `identity` (the options that must match on resume)
// are checked on reading.
struct Checkpoint {
  std::string kind;         // e.g. "biaxial sample", "biaxial test", "column release"
  nlohmann::json identity;  // options of the piece; a checkpoint of other options is refused
  nlohmann::json fields;
  long step = 0;  // steps taken (names the state files)
};

// Writes the world state, the history and then state.json (renamed into place, so a process
// killed while writing leaves the previous checkpoint whole) into `directory`, and removes the
// state files of the previous checkpoint. Throws InputError naming a file it cannot write.
void write_checkpoint(const std::filesystem::path& directory, const Checkpoint& checkpoint,
                      const moreau::World& world, const moreau::variational::ShearHistory& history);

// The header and fields of the checkpoint in `directory` without its world (nullopt when it
// holds no state.json), to learn how to build the world it continues.
std::optional<Checkpoint> peek_checkpoint(const std::filesystem::path& directory,
                                          const std::string& kind, const nlohmann::json& identity);

// The checkpoint in `directory` (nullopt when it holds no state.json): replaces the states of
// `world` (built as the run that wrote it) and returns the history in `history`. Throws
// InputError naming the file for a corrupt file, another kind or identity, or another world.
std::optional<Checkpoint> read_checkpoint(const std::filesystem::path& directory,
                                          const std::string& kind, const nlohmann::json& identity,
                                          moreau::World& world,
                                          moreau::variational::ShearHistory& history);

// Runs `parse` (which reads the fields with json::at and get<T>); a missing or mistyped field is
// an InputError naming the checkpoint's state file.
void parse_fields(const std::filesystem::path& directory, const std::function<void()>& parse);

// Seconds on a steady clock, and a duration as "2 h 05 min", "3.4 min", "12.0 s".
double now_seconds();
std::string duration_text(double seconds);

}  // namespace moreau::resumable
