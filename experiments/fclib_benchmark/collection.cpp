#include "collection.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>

#include "moreau/core/error.hpp"
#include "moreau/solver/merit.hpp"
#include "moreau/solver/solver_registry.hpp"

namespace moreau::fclib_benchmark {

using namespace moreau;
using Clock = std::chrono::steady_clock;

namespace {

// The local problem of a file read into `problem.file`, as `moreau fclib solve` builds it: a
// global problem is reduced with CHOLMOD first. `local` points into `problem`.
void prepare_local_problem(Problem& problem) {
  if (problem.file.global) {
    problem.kind = "global";
    problem.dofs = problem.file.global->dofs();
    const auto start = Clock::now();
    problem.reduction = std::make_unique<fclib::GlobalReduction>(*problem.file.global);
    problem.reduction_seconds = std::chrono::duration<double>(Clock::now() - start).count();
    problem.local = &problem.reduction->local();
  } else {
    problem.kind = "local";
    problem.local = &*problem.file.local;
  }
  problem.system = std::make_unique<fclib::LocalSystem>(*problem.local);
  problem.symmetric_w = problem.system->symmetric();
  problem.contacts = problem.local->contact_count();
  if (problem.contacts > 0) {
    problem.mu_min = problem.local->mu.minCoeff();
    problem.mu_max = problem.local->mu.maxCoeff();
  }
  problem.supported = true;
}

}  // namespace

void load_problem(const fs::path& path, Problem& problem) {
  problem.name = path.stem().string();
  try {
    problem.file = fclib::read_file(path);
    prepare_local_problem(problem);
  } catch (const InputError& e) {
    problem.refusal = e.what();
    problem.supported = false;
    problem.system.reset();
    problem.reduction.reset();
    problem.local = nullptr;
  }
}

std::vector<fs::path> collection_files(const std::string& directory) {
  if (directory.empty()) throw InputError(std::string("fclib_benchmark: --data DIR is required"));
  if (!fs::is_directory(directory))
    throw InputError("fclib_benchmark: --data " + directory + " is not a directory");
  std::vector<fs::path> files;
  for (const fs::directory_entry& entry : fs::directory_iterator(directory)) {
    if (entry.is_regular_file() && entry.path().extension() == ".hdf5")
      files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());  // a fixed order: the run does not depend on readdir
  return files;
}

}  // namespace moreau::fclib_benchmark
