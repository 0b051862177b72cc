#pragma once
// Helpers shared by the solvers' options structs (private to the engine): the InputError
// naming a bad field, and, for semismooth Newton and ADMM, whose structs repeat the common
// fields (tolerance, max_iterations, warm_start, record_history, divergence_factor) with their
// own defaults, those fields checked and copied into the iteration control.
#include <cmath>
#include <sstream>
#include <string>

#include "moreau/core/error.hpp"
#include "moreau/solver/solver.hpp"

namespace moreau::detail {

template <typename Value>
[[noreturn]] void reject_option(const std::string& options, const std::string& field,
                                const Value& value, const std::string& bound) {
  std::ostringstream message;
  message << options << "." << field << " = " << value << " " << bound;
  throw InputError(message.str());
}

// The checks of the shared fields, named after `options` (the struct's name).
template <typename Options>
void validate_common_options(const std::string& options, const Options& o) {
  if (!(o.tolerance >= 0.0) || !std::isfinite(o.tolerance)) {
    reject_option(options, "tolerance", o.tolerance, "must be finite and >= 0");
  }
  if (o.max_iterations < 0)
    reject_option(options, "max_iterations", o.max_iterations, "must be >= 0");
  if (!(o.divergence_factor > 1.0)) {
    reject_option(options, "divergence_factor", o.divergence_factor, "must be > 1");
  }
}

// Copies the shared fields from `source` to `target` (either may be SolverOptions).
template <typename From, typename To>
To& copy_common_options(const From& source, To& target) {
  target.tolerance = source.tolerance;
  target.max_iterations = source.max_iterations;
  target.warm_start = source.warm_start;
  target.record_history = source.record_history;
  target.divergence_factor = source.divergence_factor;
  return target;
}

}  // namespace moreau::detail
