#pragma once
// The FCLIB collection (README.md, "What one run is"): its files in name order, each read as
// `moreau fclib solve` reads it, a global problem reduced to the local one, or refused with the
// engine's message.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "moreau/fclib/fclib.hpp"
#include "moreau/solver/solver.hpp"

namespace moreau::fclib_benchmark {

namespace fs = std::filesystem;

// One file of the collection and the local problem the solvers take.
struct Problem {
  std::string name;        // file name without .hdf5
  std::string kind = "-";  // local or global
  bool supported = false;
  std::string refusal;  // InputError message of a refused file
  int contacts = 0;
  int dofs = 0;  // global problems only
  double mu_min = 0.0, mu_max = 0.0;
  bool symmetric_w = true;
  double reduction_seconds = 0.0;  // CHOLMOD reduction of a global problem (not solver time)
  fclib::File file;
  std::unique_ptr<fclib::GlobalReduction> reduction;
  std::unique_ptr<fclib::LocalSystem> system;
  const fclib::LocalProblem* local = nullptr;
};

// Reads a file and prepares its local problem, filling `problem` in place. A file the engine
// refuses with an InputError (the reader refuses rolling friction) is kept as unsupported with
// the engine's message: reported, never skipped.
void load_problem(const fs::path& path, Problem& problem);

std::vector<fs::path> collection_files(const std::string& directory);

}  // namespace moreau::fclib_benchmark
