#pragma once
// The registry that maps solver names to solvers: a layer above solver/ (interfaces and
// algorithms), nlgs/ and impact/, so that no solver family depends on another through it.
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "moreau/impact/block_solvers.hpp"
#include "moreau/nlgs/nlgs_solver.hpp"
#include "moreau/solver/admm.hpp"
#include "moreau/solver/apgd.hpp"
#include "moreau/solver/interior_point_solver.hpp"
#include "moreau/solver/projected_gauss_jacobi.hpp"
#include "moreau/solver/projected_gauss_seidel.hpp"
#include "moreau/solver/semismooth_newton.hpp"
#include "moreau/solver/solver.hpp"

namespace moreau {

// Names: "pgs", "pgj", "apgd", "md_gs", "md_jacobi", "md_blend", "nlgs-sbp", "nlgs-ebp",
// "nlgs-sal", "nlgs-eal", "newton", "admm", "ipm", "ipm-direct".
std::vector<std::string> solver_names();

// The options of any registered solver: each solver takes its own struct, holding only what it
// reads (pgs PgsOptions, pgj PgjOptions, apgd ApgdOptions, md_gs MdGaussSeidelOptions,
// md_jacobi MdJacobiOptions, md_blend MdBlendOptions, nlgs-* NlgsOptions, newton
// SemismoothNewtonOptions, admm AdmmOptions, ipm and ipm-direct IpmOptions). The common
// SolverOptions alone is none of them: a caller that sets only those takes
// default_solver_options(name, common).
using AnySolverOptions = std::variant<IpmOptions, PgsOptions, PgjOptions, ApgdOptions,
                                      MdGaussSeidelOptions, MdJacobiOptions, MdBlendOptions,
                                      NlgsOptions, SemismoothNewtonOptions, AdmmOptions>;

// The options struct of solver `name` with its defaults; the common fields (tolerance,
// max_iterations, warm_start, record_history) are SolverOptions' defaults for every solver,
// the nlgs-* method is the name's. Throws InputError for an unknown name.
AnySolverOptions default_solver_options(const std::string& name);
// The same with the common fields of `common`.
AnySolverOptions default_solver_options(const std::string& name, const SolverOptions& common);

// The solver of that name with `options`, which must be its struct (InputError naming the
// struct it takes otherwise), for an unknown name (listing the known ones) and for options the
// solver cannot use.
std::unique_ptr<ContactSolver> make_solver(const std::string& name,
                                           const AnySolverOptions& options);
// The same with default_solver_options(name).
std::unique_ptr<ContactSolver> make_solver(const std::string& name);

// The common fields of any solver's options, read and written.
SolverOptions common_options(const AnySolverOptions& options);
void set_common_options(AnySolverOptions& options, const SolverOptions& common);

// The struct's name ("PgsOptions"), for messages.
std::string options_type_name(const AnySolverOptions& options);

}  // namespace moreau
