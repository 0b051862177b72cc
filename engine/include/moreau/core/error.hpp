#pragma once
// Exceptions of the engine. Every message names what is wrong and where.
#include <stdexcept>
#include <string>

namespace moreau {

// Bad input: a scene file, an option or a parameter that cannot be used.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A simulation that cannot go on, e.g. a body state that became NaN.
class SimulationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace moreau
