#include "fclib_command.hpp"

#include <chrono>
#include <cmath>
#include <exception>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "moreau/core/error.hpp"
#include "moreau/fclib/fclib.hpp"
#include "moreau/nlgs/nlgs_solver.hpp"
#include "moreau/solver/merit.hpp"
#include "moreau/solver/solver.hpp"
#include "moreau/solver/solver_registry.hpp"

namespace moreau::cli {
namespace {

struct SolveArguments {
  std::string file;
  std::string solver = "pgs";
  double tolerance = 1e-8;
  int max_iterations = 10000;
  std::string output;
  // NLGS options (Dumont; nlgs_solver.hpp), only for the nlgs-* solvers.
  std::optional<double> nlgs_alpha;
  std::optional<double> nlgs_newton_tolerance;
  std::optional<int> nlgs_newton_max_iterations;
  bool nlgs_no_line_search = false;
};

// The solver of `fclib solve`: the registry's, or an NLGS with the --nlgs-* options (an error
// naming the option for any other solver).
std::unique_ptr<ContactSolver> make_fclib_solver(const SolveArguments& arguments) {
  AnySolverOptions options = default_solver_options(arguments.solver);
  SolverOptions common;
  common.tolerance = arguments.tolerance;
  common.max_iterations = arguments.max_iterations;
  common.record_history = false;
  set_common_options(options, common);
  // The --nlgs-* options are the keys of the solver's section solver.nlgs, set through the
  // registry's table: bounds checked, and an error naming the option for another solver.
  const auto set = [&](const char* option, const char* key, auto value) {
    try {
      set_solver_option(arguments.solver, options, key, value);
    } catch (const InputError& e) {
      throw InputError(std::string(option) + ": " + e.what());
    }
  };
  if (arguments.nlgs_alpha) set("--nlgs-alpha", "alpha", *arguments.nlgs_alpha);
  if (arguments.nlgs_newton_tolerance)
    set("--nlgs-newton-tol", "newton_tolerance", *arguments.nlgs_newton_tolerance);
  if (arguments.nlgs_newton_max_iterations)
    set("--nlgs-newton-max-iter", "newton_max_iterations",
        static_cast<double>(*arguments.nlgs_newton_max_iterations));
  if (arguments.nlgs_no_line_search) set("--nlgs-no-line-search", "newton_line_search", false);
  return make_solver(arguments.solver, options);
}

// Runs a command, turning its exceptions into the exit codes of main.cpp (2 bad input,
// 1 other) since CLI11 callbacks may only leave parse() through a CLI::Error.
template <typename Command>
void guarded(Command command) {
  try {
    command();
  } catch (const InputError& e) {
    std::cerr << "moreau: error: " << e.what() << '\n';
    throw CLI::RuntimeError(2);
  } catch (const std::exception& e) {
    std::cerr << "moreau: error: " << e.what() << '\n';
    throw CLI::RuntimeError(1);
  }
}

void print_info(const std::string& path) {
  const fclib::File file = fclib::read_file(path);
  const bool local = file.local.has_value();
  const VecX& mu = local ? file.local->mu : file.global->mu;
  const std::optional<fclib::Info>& info = local ? file.local->info : file.global->info;
  std::cout << "file:       " << path << '\n'
            << "kind:       " << (local ? "local" : "global") << '\n'
            << "dimension:  " << (local ? file.local->spacedim : file.global->spacedim) << '\n'
            << "contacts:   " << mu.size() << '\n';
  if (local) {
    std::cout << "dofs:       -\n"
              << "W:          " << to_string(file.local->W.storage) << ", "
              << file.local->W.matrix.nonZeros() << " entries\n";
  } else {
    std::cout << "dofs:       " << file.global->dofs() << '\n'
              << "M, H:       " << to_string(file.global->M.storage) << ", "
              << to_string(file.global->H.storage) << '\n';
  }
  if (mu.size() > 0) {
    std::cout << "mu:         " << mu.minCoeff() << " .. " << mu.maxCoeff() << '\n';
  }
  std::cout << "title:      " << (info ? info->title : std::string()) << '\n'
            << "solution:   " << (file.solution ? "yes" : "no") << '\n'
            << "guesses:    " << file.guesses.size() << '\n';
}

// What a solve of an FCLIB file achieved, judged on the file's own terms: the FCLIB
// natural-map merit (Acary, Bremond & Huber 2018) of the returned r against the tolerance the
// user asked for. A solver's own stopping test (the suite's scaled merit, Dumont's eps_glob,
// the IPM's criterion) can hold while the FCLIB merit does not; the maximum-dissipation
// solvers (Preclik et al.) solve another impact model than the Coulomb problem the file poses.
struct SolveStatus {
  std::string model;   // "coulomb" or "maximum_dissipation"
  std::string status;  // converged, fclib_merit_above_tolerance, not_converged, other_model
  bool converged = false;
};

SolveStatus judge_solve(const std::string& solver, const SolverStats& stats, double fclib_merit,
                        double tolerance) {
  SolveStatus result;
  result.model = find_solver(solver).laws.coulomb ? "coulomb" : "maximum_dissipation";
  if (result.model != "coulomb") {
    result.status = "other_model";
  } else if (std::isfinite(fclib_merit) && fclib_merit <= tolerance) {
    result.status = "converged";
    result.converged = true;
  } else {
    result.status = stats.converged ? "fclib_merit_above_tolerance" : "not_converged";
  }
  return result;
}

// JSON has no NaN or infinity: a non-finite merit is written as "nan", "inf" or "-inf".
nlohmann::json finite_or_text(double value) {
  if (std::isfinite(value)) return value;
  if (std::isnan(value)) return "nan";
  return value > 0 ? "inf" : "-inf";
}

void solve(const SolveArguments& arguments) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  fclib::File file = fclib::read_file(arguments.file);

  std::unique_ptr<fclib::GlobalReduction> reduction;
  if (file.global) reduction = std::make_unique<fclib::GlobalReduction>(*file.global);
  const fclib::LocalProblem& local = reduction ? reduction->local() : *file.local;
  const fclib::LocalSystem system(local);

  const auto solver = make_fclib_solver(arguments);
  VecX r = VecX::Zero(local.q.size());
  const SolverStats stats = solver->solve(system.problem(), r);

  fclib::Solution solution;
  solution.r = r;
  solution.u = local.W.matrix * r + local.q;
  if (reduction) {
    solution.v = reduction->velocity(r);
    solution.l = reduction->multipliers(r);
  }
  const double fclib_merit = fclib::natural_map_merit(local, r);
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const SolveStatus status = judge_solve(arguments.solver, stats, fclib_merit, arguments.tolerance);

  const nlohmann::json summary = {
      {"file", arguments.file},
      {"kind", file.local ? "local" : "global"},
      {"solver", stats.solver},
      {"model", status.model},
      {"status", status.status},
      {"converged", status.converged},
      {"solver_converged", stats.converged},
      {"termination", to_string(stats.termination)},
      {"iterations", stats.iterations},
      {"tolerance", stats.tolerance},
      {"merit", finite_or_text(fclib_merit)},
      {"suite_merit", finite_or_text(stats.merit)},
      {"solver_seconds", stats.wall_seconds},
      {"time_seconds", seconds},
  };
  std::cout << summary.dump(2) << '\n';

  if (!arguments.output.empty()) {
    file.solution = solution;
    fclib::write_file(arguments.output, file);
  }
}

}  // namespace

void add_fclib_command(CLI::App& app) {
  CLI::App* fclib = app.add_subcommand("fclib", "FCLIB frictional contact problems (HDF5)");
  fclib->require_subcommand(1);
  fclib->footer(
      "FCLIB: the HDF5 collection of discrete frictional contact problems (Acary, Bremond, "
      "Huber). Global problems M v = H r + f, u = H^T v + w are reduced to W = H^T M^-1 H, "
      "q = H^T M^-1 f + w.");

  auto info_path = std::make_shared<std::string>();
  CLI::App* info = fclib->add_subcommand("info", "Read, validate and describe an FCLIB file");
  info->add_option("FILE", *info_path, "FCLIB file (.hdf5)")->required();
  info->callback([info_path] { guarded([&] { print_info(*info_path); }); });

  auto arguments = std::make_shared<SolveArguments>();
  CLI::App* solve_command =
      fclib->add_subcommand("solve", "Solve an FCLIB problem and print a JSON summary on stdout");
  solve_command->add_option("FILE", arguments->file, "FCLIB file (.hdf5)")->required();
  solve_command->add_option("--solver", arguments->solver, "Solver (see `moreau solvers`)")
      ->capture_default_str();
  solve_command
      ->add_option("--tol", arguments->tolerance,
                   "Tolerance: the solver stops on its own criterion at it, and \"converged\" "
                   "means the FCLIB merit of the returned r meets it")
      ->capture_default_str();
  solve_command->add_option("--max-iter", arguments->max_iterations, "Iteration limit")
      ->capture_default_str();
  solve_command->add_option_function<double>(
      "--nlgs-alpha", [arguments](double value) { arguments->nlgs_alpha = value; },
      "nlgs-*: rho = alpha rho_bar (Dumont Sec. 4); 0 = the local solver's default");
  solve_command->add_option_function<double>(
      "--nlgs-newton-tol", [arguments](double value) { arguments->nlgs_newton_tolerance = value; },
      "nlgs-ebp, nlgs-eal: local Newton tolerance eps_Newt (default 1e-5)");
  solve_command->add_option_function<int>(
      "--nlgs-newton-max-iter",
      [arguments](int value) { arguments->nlgs_newton_max_iterations = value; },
      "nlgs-ebp, nlgs-eal: local Newton iteration limit (default 100)");
  solve_command->add_flag("--nlgs-no-line-search", arguments->nlgs_no_line_search,
                          "nlgs-ebp, nlgs-eal: local Newton without the line search");
  solve_command->add_option("--output", arguments->output,
                            "Write the problem with /solution/r, u (and v for a global problem)");
  solve_command->callback([arguments] { guarded([&] { solve(*arguments); }); });
}

}  // namespace moreau::cli
