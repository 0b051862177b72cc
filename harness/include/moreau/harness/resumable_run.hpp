#pragma once
// Resumable runs: the long runs of an experiment (hours to days of one core at the published
// scale) continue across processes. A run is cut into pieces (a preparation, a test, a release);
// `--resume` starts every piece from the latest checkpoint of its own and reads back the pieces
// already finished (each experiment's README.md, "Resuming from checkpoints").
//
// A piece's checkpoint is one engine checkpoint (moreau/io/checkpoint.hpp),
// <directory>/checkpoint.json, written through a partial file renamed into place, so that a
// process killed while writing leaves the previous checkpoint whole. It holds the world state,
// the shear history Delta q of the persistent contacts (moreau/variational/shear_history.hpp)
// and, as its metadata, {"kind", "identity", "fields"}: what the piece is, the options that must
// match on resuming and the experiment's own counters. With these and the driver's or stepper's
// step count, a continued run repeats the numbers of an uninterrupted one bit for bit
// (biaxial_compression's persistence_test.cpp, harness/cmake/resumed_run_test.cmake). Everything
// read is validated: a corrupt or mismatching file is an InputError naming the file, never a silent
// fresh start.
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

// A piece's checkpoint beside its world and shear history. `kind` and `identity` are checked on
// reading.
struct Checkpoint {
  std::string kind;         // e.g. "biaxial sample", "biaxial test", "column release"
  nlohmann::json identity;  // options of the piece; a checkpoint of other options is refused
  nlohmann::json fields;    // the experiment's own counters, an object
  long step = 0;            // steps taken
};

// The file of the checkpoint in `directory`.
std::filesystem::path checkpoint_file(const std::filesystem::path& directory);

// Writes the checkpoint into `directory` (created if need be). Throws InputError naming a file
// it cannot write.
void write_checkpoint(const std::filesystem::path& directory, const Checkpoint& checkpoint,
                      const moreau::World& world, const moreau::variational::ShearHistory& history);

// The checkpoint in `directory` without its world (nullopt when there is none), to learn how to
// build the world it continues.
std::optional<Checkpoint> peek_checkpoint(const std::filesystem::path& directory,
                                          const std::string& kind, const nlohmann::json& identity);

// The checkpoint in `directory` (nullopt when there is none): replaces the states of `world`
// (built as the run that wrote it) and returns the history in `history`. Throws InputError
// naming the file for a corrupt file, another kind or identity, another world, or a checkpoint
// without a shear history.
std::optional<Checkpoint> read_checkpoint(const std::filesystem::path& directory,
                                          const std::string& kind, const nlohmann::json& identity,
                                          moreau::World& world,
                                          moreau::variational::ShearHistory& history);

// The same for a piece whose scheme carries no state from step to step (the impulse-velocity
// scheme without warm start): the checkpoint holds the world and the piece's metadata, and
// reading refuses one that carries a scheme state, whose run would not continue as it was.
void write_checkpoint(const std::filesystem::path& directory, const Checkpoint& checkpoint,
                      const moreau::World& world);
std::optional<Checkpoint> read_checkpoint(const std::filesystem::path& directory,
                                          const std::string& kind, const nlohmann::json& identity,
                                          moreau::World& world);

// Runs `parse` (which reads the fields with json::at and get<T>); a missing or mistyped field is
// an InputError naming the checkpoint file and metadata.fields.
void parse_fields(const std::filesystem::path& directory, const std::function<void()>& parse);

// A stop asked of the process from outside (SIGINT, SIGTERM: Ctrl-C, `kill`, a job scheduler's
// end of allotment): after stop_on_signals(), the first such signal sets stop_requested() and is
// otherwise ignored, so that a long run writes a checkpoint at its next whole step and ends
// (resumable::Interrupted) instead of losing the work since its last periodic one; a second
// signal ends the process at once, as without the handler.
void stop_on_signals();
bool stop_requested();

// Seconds on a steady clock, and a duration as "2 h 05 min", "3.4 min", "12.0 s".
double now_seconds();
std::string duration_text(double seconds);

}  // namespace moreau::resumable
