#pragma once
// For semismooth Newton and ADMM, whose options structs add divergence_factor to the common
// fields without the rest of the iteration control: those fields copied into the iteration
// control the shared monitor reads (private to the engine).
#include "moreau/solver/solver.hpp"

namespace moreau::detail {

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
