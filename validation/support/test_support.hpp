#pragma once
// Fixtures shared by the unit tests.
#include <memory>
#include <string>

#include "moreau/integrator/semi_implicit_euler.hpp"
#include "moreau/solver/solver.hpp"

namespace moreau::test {

// Semi-implicit Euler options together with the contact solver the test runs them with.
struct EulerSetup : SemiImplicitEulerOptions {
  std::string solver = "pgs";
  SolverOptions solver_options;
};

inline std::unique_ptr<ContactSolver> solver_of(const EulerSetup& setup) {
  return make_solver(setup.solver, setup.solver_options);
}

// The stepper of `setup` (returned by guaranteed copy elision: steppers do not move).
inline SemiImplicitEulerStepper euler_stepper(World& world, const EulerSetup& setup) {
  return SemiImplicitEulerStepper(world, setup, solver_of(setup));
}

}  // namespace moreau::test
