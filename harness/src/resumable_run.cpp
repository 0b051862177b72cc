#include "moreau/harness/resumable_run.hpp"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <system_error>
#include <utility>

#include "moreau/core/error.hpp"
#include "moreau/io/checkpoint.hpp"

namespace moreau::resumable {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// The piece's header of the checkpoint's metadata against what the resuming run expects.
void check_metadata(const fs::path& path, const json& metadata, const std::string& kind,
                    const json& identity) {
  const auto fail = [&](const std::string& what) {
    throw InputError(path.string() + ": metadata" + what +
                     " (delete the directory to start this piece afresh)");
  };
  if (!metadata.is_object()) fail(": missing, not the checkpoint of a resumable run");
  if (metadata.value("kind", "") != kind)
    fail(".kind: the checkpoint is a " + metadata.value("kind", json()).dump() + ", expected " +
         kind);
  if (!metadata.contains("identity") || metadata["identity"] != identity)
    fail(".identity: written with other options: " + metadata.value("identity", json()).dump() +
         ", this run has " + identity.dump());
  if (!metadata.contains("fields") || !metadata["fields"].is_object())
    fail(".fields: expected an object");
}

std::optional<Checkpoint> piece(const fs::path& path, const CheckpointContents& contents,
                                const std::string& kind, const json& identity) {
  check_metadata(path, contents.metadata, kind, identity);
  return Checkpoint{kind, identity, contents.metadata["fields"], contents.step};
}

}  // namespace

Persistence experiment_persistence(const std::string& output_directory, bool full, bool resume,
                                   std::ostream& progress) {
  Persistence p;
  if (full || resume) p.directory = fs::path(output_directory) / "checkpoints";
  p.resume = resume;
  if (full) p.progress = &progress;
  return p;
}

Persistence Persistence::child(const std::string& name) const {
  Persistence p = *this;
  if (!directory.empty()) p.directory = directory / name;
  return p;
}

fs::path checkpoint_file(const fs::path& directory) { return directory / "checkpoint.json"; }

namespace {

void write_piece(const fs::path& directory, const Checkpoint& checkpoint,
                 const moreau::World& world,
                 std::optional<moreau::variational::ShearHistory> history) {
  std::error_code error;
  fs::create_directories(directory, error);
  if (error)
    throw InputError(directory.string() +
                     ": cannot create the checkpoint's directory: " + error.message());
  const json metadata = {
      {"kind", checkpoint.kind}, {"identity", checkpoint.identity}, {"fields", checkpoint.fields}};
  moreau::write_checkpoint(
      checkpoint_file(directory), world,
      CheckpointContents{checkpoint.step, checkpoint.kind, std::move(history), metadata});
}

}  // namespace

void write_checkpoint(const fs::path& directory, const Checkpoint& checkpoint,
                      const moreau::World& world,
                      const moreau::variational::ShearHistory& history) {
  write_piece(directory, checkpoint, world, history);
}

void write_checkpoint(const fs::path& directory, const Checkpoint& checkpoint,
                      const moreau::World& world) {
  write_piece(directory, checkpoint, world, std::nullopt);
}

std::optional<Checkpoint> peek_checkpoint(const fs::path& directory, const std::string& kind,
                                          const json& identity) {
  const fs::path path = checkpoint_file(directory);
  if (directory.empty() || !fs::exists(path)) return std::nullopt;
  return piece(path, read_checkpoint_header(path), kind, identity);
}

std::optional<Checkpoint> read_checkpoint(const fs::path& directory, const std::string& kind,
                                          const json& identity, moreau::World& world,
                                          moreau::variational::ShearHistory& history) {
  const fs::path path = checkpoint_file(directory);
  if (directory.empty() || !fs::exists(path)) return std::nullopt;
  CheckpointContents contents = read_checkpoint_contents(path, world);
  std::optional<Checkpoint> checkpoint = piece(path, contents, kind, identity);
  // Every piece is a variational run: a checkpoint without the history would resume with
  // Delta q = 0 at every contact (eq. 4.8) and give other numbers than the run that wrote it.
  if (!contents.shear_history)
    throw InputError(path.string() + ": scheme_state.shear_history: missing");
  history = std::move(*contents.shear_history);
  return checkpoint;
}

std::optional<Checkpoint> read_checkpoint(const fs::path& directory, const std::string& kind,
                                          const json& identity, moreau::World& world) {
  const fs::path path = checkpoint_file(directory);
  if (directory.empty() || !fs::exists(path)) return std::nullopt;
  CheckpointContents contents = read_checkpoint_contents(path, world);
  std::optional<Checkpoint> checkpoint = piece(path, contents, kind, identity);
  if (contents.shear_history)
    throw InputError(path.string() +
                     ": scheme_state: this piece's scheme carries no state from step to step");
  return checkpoint;
}

void parse_fields(const fs::path& directory, const std::function<void()>& parse) {
  try {
    parse();
  } catch (const json::exception& e) {
    throw InputError(checkpoint_file(directory).string() + ": metadata.fields: " + e.what());
  }
}

namespace {

volatile std::sig_atomic_t stop_signal = 0;

extern "C" void note_stop(int signal) {
  stop_signal = signal;
  // The next one takes the default action: a run that does not reach its next step can still be
  // ended.
  std::signal(signal, SIG_DFL);
}

}  // namespace

void stop_on_signals() {
  std::signal(SIGINT, note_stop);
  std::signal(SIGTERM, note_stop);
}

bool stop_requested() { return stop_signal != 0; }

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string duration_text(double seconds) {
  char text[48];
  if (seconds >= 3600.0)
    std::snprintf(text, sizeof text, "%d h %02d min", static_cast<int>(seconds / 3600.0),
                  static_cast<int>(seconds / 60.0) % 60);
  else if (seconds >= 60.0)
    std::snprintf(text, sizeof text, "%.1f min", seconds / 60.0);
  else
    std::snprintf(text, sizeof text, "%.1f s", seconds);
  return text;
}

}  // namespace moreau::resumable
