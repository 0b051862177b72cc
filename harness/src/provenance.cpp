#include "moreau/harness/provenance.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <fstream>
#include <string>
#include <thread>

#include "moreau/harness/build_commit.hpp"

namespace moreau {
namespace {

std::chrono::steady_clock::time_point run_start = std::chrono::steady_clock::now();
std::string run_command;

// A path inside the repository is written relative to its root: the record names no folder of
// a particular machine.
std::string relative_to_repository(std::string argument) {
  const std::string root = std::string(MOREAU_SOURCE_ROOT) + "/";
  for (std::size_t at = argument.find(root); at != std::string::npos; at = argument.find(root))
    argument.erase(at, root.size());
  return argument;
}

std::string processor_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "unknown processor";
}

std::string memory() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  double kib = 0.0;
  if (meminfo >> key >> kib && key == "MemTotal:") {
    char text[32];
    std::snprintf(text, sizeof text, "%.0f GiB", kib / (1024.0 * 1024.0));
    return text;
  }
  return "unknown memory";
}

}  // namespace

void start_run(int argc, char** argv) {
  run_start = std::chrono::steady_clock::now();
  run_command.clear();
  for (int i = 0; i < argc; ++i) {
    std::string argument = relative_to_repository(argv[i]);
    if (i == 0) argument = argument.substr(argument.find_last_of('/') + 1);
    if (!run_command.empty()) run_command += ' ';
    run_command += argument;
  }
}

RunProvenance current_run() {
  RunProvenance run;
  run.commit = MOREAU_BUILD_COMMIT;
  const std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  run.date = date;
  run.machine = processor_model() + ", " + std::to_string(std::thread::hardware_concurrency()) +
                " logical cores, " + memory();
  // OMP_THREAD_LIMIT (the single-thread variational experiments) caps every parallel region
  // without lowering omp_get_max_threads().
  run.threads = std::min(omp_get_max_threads(), omp_get_thread_limit());
  run.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start).count();
  run.command = run_command;
  return run;
}

}  // namespace moreau
