#include "persistence.hpp"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <vector>

#include "moreau/core/error.hpp"
#include "moreau/io/checkpoint.hpp"

namespace moreau::resumable {

namespace fs = std::filesystem;
using json = nlohmann::json;
using moreau::InputError;

namespace {

constexpr const char* kFormat = "moreau resumable checkpoint";
constexpr int kVersion = 1;
constexpr const char* kState = "state.json";

std::string world_name(long step) { return "world_" + std::to_string(step) + ".json"; }
std::string history_name(long step) { return "shear_" + std::to_string(step) + ".json"; }

// Moves a finished file into place: a rename within a directory replaces the target whole.
void publish(const fs::path& written, const fs::path& target) {
  std::error_code error;
  fs::rename(written, target, error);
  if (error)
    throw InputError(target.string() + ": cannot write the checkpoint: " + error.message());
}

// Removes the state files of other steps than `keep` (the previous checkpoints).
void remove_stale(const fs::path& directory, long keep) {
  for (const fs::directory_entry& entry : fs::directory_iterator(directory)) {
    const std::string name = entry.path().filename().string();
    const bool state_file = name.starts_with("world_") || name.starts_with("shear_");
    if (state_file && name != world_name(keep) && name != history_name(keep))
      fs::remove(entry.path());
  }
}

json read_state_file(const fs::path& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path.string() + ": cannot open the checkpoint");
  try {
    return json::parse(in);
  } catch (const json::exception& e) {
    throw InputError(path.string() + ": malformed checkpoint: " + e.what());
  }
}

// The header of state.json against what the resuming run expects.
void check_header(const fs::path& path, const json& state, const std::string& kind,
                  const json& identity) {
  const auto fail = [&](const std::string& what) {
    throw InputError(path.string() + ": " + what +
                     " (delete the directory to start this piece afresh)");
  };
  if (!state.is_object() || state.value("format", "") != kFormat)
    fail(std::string("not a checkpoint of a resumable run (no \"format\": \"") + kFormat + "\")");
  if (state.value("version", 0) != kVersion) fail("version: expected " + std::to_string(kVersion));
  if (state.value("kind", "") != kind)
    fail("kind: the checkpoint is a " + state.value("kind", json()).dump() + ", expected " + kind);
  if (!state.contains("identity") || state["identity"] != identity)
    fail("written with other options: " + state.value("identity", json()).dump() +
         ", this run has " + identity.dump());
  if (!state.contains("step") || !state["step"].is_number_integer() ||
      state["step"].get<long>() < 0)
    fail("step: expected an integer >= 0");
  if (!state.contains("fields") || !state["fields"].is_object()) fail("fields: expected an object");
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

void write_checkpoint(const fs::path& directory, const Checkpoint& checkpoint,
                      const moreau::World& world,
                      const moreau::variational::ShearHistory& history) {
  fs::create_directories(directory);
  const std::string world_file = world_name(checkpoint.step);
  const std::string history_file = history_name(checkpoint.step);
  moreau::write_checkpoint(directory / (world_file + ".tmp"), world, checkpoint.step,
                           checkpoint.kind);
  publish(directory / (world_file + ".tmp"), directory / world_file);
  moreau::variational::write_shear_history(directory / (history_file + ".tmp"), history,
                                           static_cast<int>(world.bodies.size()));
  publish(directory / (history_file + ".tmp"), directory / history_file);
  const json state = {{"format", kFormat},
                      {"version", kVersion},
                      {"kind", checkpoint.kind},
                      {"identity", checkpoint.identity},
                      {"step", checkpoint.step},
                      {"world", world_file},
                      {"shear_history", history_file},
                      {"fields", checkpoint.fields}};
  const fs::path written = directory / (std::string(kState) + ".tmp");
  {
    std::ofstream out(written);
    out << state.dump(1) << '\n';  // doubles with round-trip precision
    out.flush();
    if (!out) throw InputError(written.string() + ": cannot write the checkpoint");
  }
  publish(written, directory / kState);
  remove_stale(directory, checkpoint.step);
}

std::optional<Checkpoint> peek_checkpoint(const fs::path& directory, const std::string& kind,
                                          const json& identity) {
  const fs::path path = directory / kState;
  if (directory.empty() || !fs::exists(path)) return std::nullopt;
  const json state = read_state_file(path);
  check_header(path, state, kind, identity);
  if (state.value("world", "") != world_name(state["step"].get<long>()) ||
      state.value("shear_history", "") != history_name(state["step"].get<long>()))
    throw InputError(path.string() + ": world, shear_history: expected the files of step " +
                     state["step"].dump());
  return Checkpoint{kind, identity, state["fields"], state["step"].get<long>()};
}

std::optional<Checkpoint> read_checkpoint(const fs::path& directory, const std::string& kind,
                                          const json& identity, moreau::World& world,
                                          moreau::variational::ShearHistory& history) {
  std::optional<Checkpoint> checkpoint = peek_checkpoint(directory, kind, identity);
  if (!checkpoint) return std::nullopt;
  const long world_step = moreau::read_checkpoint(directory / world_name(checkpoint->step), world);
  if (world_step != checkpoint->step)
    throw InputError((directory / world_name(checkpoint->step)).string() + ": step " +
                     std::to_string(world_step) + ", state.json says " +
                     std::to_string(checkpoint->step));
  history = moreau::variational::read_shear_history(directory / history_name(checkpoint->step),
                                                    static_cast<int>(world.bodies.size()));
  return checkpoint;
}

void parse_fields(const fs::path& directory, const std::function<void()>& parse) {
  try {
    parse();
  } catch (const json::exception& e) {
    throw InputError((directory / kState).string() + ": fields: " + e.what());
  }
}

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
