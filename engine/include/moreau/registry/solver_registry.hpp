#pragma once
// The registry that maps solver names to solvers: a layer above solver/ (interfaces and
// algorithms), nlgs/ and impact/, so that no solver family depends on another through it.
#include <memory>
#include <string>
#include <vector>

#include "moreau/solver/solver.hpp"

namespace moreau {

// Names: "pgs", "pgj", "apgd", "md_gs", "md_jacobi", "md_blend", "nlgs-sbp", "nlgs-ebp",
// "nlgs-sal", "nlgs-eal", "newton", "admm", "ipm", "ipm-direct".
std::vector<std::string> solver_names();

// The solver of that name with `options` (the NLGS solvers with their method's defaults, see
// make_nlgs_solver for the NLGS options). Throws InputError for an unknown name, listing the
// known ones, and for options the solver cannot use.
std::unique_ptr<ContactSolver> make_solver(const std::string& name, const SolverOptions& options);

// The SolverOptions members (by their scene key names, docs/scene-format.md) that solver `name`
// reads; "nlgs" stands for the NlgsOptions of the nlgs-* solvers. A key outside this list
// would be ignored by that solver, so the scene parser rejects it. Throws InputError for an
// unknown name.
std::vector<std::string> solver_option_keys(const std::string& name);

}  // namespace moreau
