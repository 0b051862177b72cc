// The `moreau` program: runs scene files (docs/scene-format.md) and lists the solvers.
// Exit status: 0 success, 2 bad input (scene file or command line), 3 the simulation failed,
// 1 anything else.
#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>

#include "fclib_command.hpp"
#include "moreau/core/allocator.hpp"
#include "moreau/core/error.hpp"
#include "run.hpp"

// The project version; cli/CMakeLists.txt may pass PROJECT_VERSION instead.
#ifndef MOREAU_VERSION
#define MOREAU_VERSION "0.1.0"
#endif

int main(int argc, char** argv) {
  moreau::keep_freed_memory();
  CLI::App app{"Moreau: nonsmooth contact dynamics of rigid bodies and granular matter.", "moreau"};
  app.set_version_flag("--version", "moreau " MOREAU_VERSION);
  app.require_subcommand(1);
  app.footer(
      "Exit status: 0 success, 2 bad input (scene file or options), 3 simulation error "
      "(non-finite state, or a solver failure with solver.on_failure = \"stop\"), 1 other.\n"
      "Scene file format: docs/scene-format.md.");

  std::string scene_path;
  moreau::cli::RunOverrides overrides;
  CLI::App* run = app.add_subcommand("run", "Run a scene file and write its output");
  run->add_option("SCENE", scene_path, "Scene file (JSON, see docs/scene-format.md)")->required();
  run->add_option_function<std::string>(
      "-o,--output", [&](const std::string& value) { overrides.output_directory = value; },
      "Output directory (replaces output.directory of the scene)");
  run->add_option_function<long>(
      "-n,--steps", [&](long value) { overrides.steps = value; },
      "Number of time steps (replaces steps/duration of the scene)");
  run->add_option_function<std::string>(
      "-s,--solver", [&](const std::string& value) { overrides.solver = value; },
      "Contact solver (replaces solver.name of the scene): " + moreau::cli::known_solver_names() +
          " (`moreau solvers` says what each solves)");
  run->add_option_function<std::string>(
      "--scheme", [&](const std::string& value) { overrides.scheme = value; },
      "Time-stepping scheme (replaces integrator.scheme of the scene): " +
          moreau::cli::known_scheme_names() + " (`moreau schemes` says what each is)");
  run->add_option_function<std::string>(
      "-m,--method", [&](const std::string& value) { overrides.method = value; },
      "The older spelling of --scheme: cd (semi_implicit_euler) or dem");
  run->add_option_function<std::string>(
      "--export-fclib", [&](const std::string& value) { overrides.export_fclib = value; },
      "Write the contact problem of these steps to FCLIB files in <output>/fclib/ (local "
      "and global form, each with the step's solution): a comma list of steps N, ranges "
      "A:B and strided ranges A:B:S, or all");
  run->add_option_function<std::string>(
      "--restart", [&](const std::string& value) { overrides.restart = value; },
      "Start from this checkpoint_<step>.json (output.checkpoint_every) of the same scene and run "
      "to "
      "the scene's last step");
  run->add_flag("-q,--quiet", overrides.quiet,
                "No progress lines and no final summary line (warnings and errors still "
                "print)");
  run->footer(
      "Writes bodies.csv and contacts.csv (output.csv), particles_*.vtp, contacts_*.vtp and "
      ".pvd collections (output.vtk) every output.every steps, and summary.json at the end; "
      "with --export-fclib, fclib/step_<N>_local.hdf5 and fclib/step_<N>_global.hdf5.");

  std::string check_path;
  CLI::App* check =
      app.add_subcommand("check", "Load and validate a scene file and say what it holds");
  check->add_option("SCENE", check_path, "Scene file (JSON)")->required();

  CLI::App* solvers = app.add_subcommand("solvers", "List the contact solvers by name");
  CLI::App* schemes = app.add_subcommand("schemes", "List the time-stepping schemes by name");
  CLI::App* schema = app.add_subcommand(
      "schema", "Print every scene key with its type, unit and default (docs/scene-format.md)");
  moreau::cli::add_fclib_command(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version end here with status 0; a usage error is bad input.
    return app.exit(e) == 0 ? 0 : 2;
  }

  try {
    if (*run) return moreau::cli::run_scene(scene_path, overrides);
    if (*check) moreau::cli::check_scene(check_path);
    if (*solvers) moreau::cli::list_solvers();
    if (*schemes) moreau::cli::list_schemes();
    if (*schema) moreau::cli::print_schema();
  } catch (const moreau::InputError& e) {
    std::cerr << "moreau: error: " << e.what() << '\n';
    return 2;
  } catch (const moreau::SimulationError& e) {
    std::cerr << "moreau: error: " << e.what() << '\n';
    return 3;
  } catch (const std::exception& e) {
    std::cerr << "moreau: error: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
