#pragma once
// `moreau fclib info|solve`: FCLIB problem files (engine/include/moreau/fclib/fclib.hpp).
#include <CLI/CLI.hpp>

namespace moreau::cli {

// Adds the `fclib` subcommand to `app`. Its commands run as CLI11 callbacks during
// app.parse(); an error prints "moreau: error: ..." and ends parse() with a CLI::RuntimeError
// whose exit code is 2 for bad input (InputError) and 1 otherwise.
void add_fclib_command(CLI::App& app);

}  // namespace moreau::cli
