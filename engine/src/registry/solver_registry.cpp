#include "moreau/registry/solver_registry.hpp"

#include "moreau/core/error.hpp"
#include "moreau/impact/block_solvers.hpp"
#include "moreau/nlgs/nlgs_solver.hpp"
#include "moreau/solver/admm.hpp"
#include "moreau/solver/apgd.hpp"
#include "moreau/solver/interior_point_solver.hpp"
#include "moreau/solver/projected_gauss_jacobi.hpp"
#include "moreau/solver/projected_gauss_seidel.hpp"
#include "moreau/solver/semismooth_newton.hpp"

namespace moreau {
namespace {

std::string known_solvers() {
  std::string known;
  for (const std::string& candidate : solver_names()) {
    known += (known.empty() ? "" : ", ") + candidate;
  }
  return known;
}

}  // namespace

std::vector<std::string> solver_names() {
  std::vector<std::string> names{"pgs", "pgj", "apgd", "md_gs", "md_jacobi", "md_blend"};
  for (const std::string& nlgs : nlgs_solver_names()) names.push_back(nlgs);
  names.push_back("newton");
  names.push_back("admm");
  names.insert(names.end(), {"ipm", "ipm-direct"});
  return names;
}

std::unique_ptr<ContactSolver> make_solver(const std::string& name, const SolverOptions& options) {
  if (name == "pgs") return std::make_unique<ProjectedGaussSeidel>(options);
  if (name == "pgj") return std::make_unique<ProjectedGaussJacobi>(options);
  if (name == "apgd") return std::make_unique<Apgd>(options);
  // Maximum-dissipation impact model (Preclik et al.): block solvers over the analytic
  // single-contact solver; they take the cone problem's W, q and mu and ignore its friction model.
  if (name == "md_gs") return std::make_unique<MaxDissipationGaussSeidel>(options);
  if (name == "md_jacobi") return std::make_unique<MaxDissipationJacobi>(options);
  if (name == "md_blend") return std::make_unique<MaxDissipationBlend>(options);
  // NLGS with the local solvers of Dumont (nlgs-sbp, nlgs-ebp, nlgs-sal, nlgs-eal).
  if (auto nlgs = make_nlgs_solver(name, options)) return nlgs;
  // Semismooth Newton on Alart-Curnier (semismooth_newton.hpp): SolverOptions' tolerance,
  // limit, warm start, history and divergence factor; its own options keep their defaults.
  if (name == "newton") {
    return std::make_unique<SemismoothNewton>(semismooth_newton_options(options));
  }
  // ADMM with residual balancing and the De Saxce fixed point (admm.hpp), same mapping.
  if (name == "admm") return std::make_unique<Admm>(admm_options(options));
  // Interior point method of Kleinert et al. (matrix-free CG / CHOLMOD back-end).
  if (name == "ipm" || name == "ipm-direct") {
    InteriorPointSolverOptions ipm;
    if (name == "ipm-direct") ipm.backend = conic::LinearBackend::cholmod;
    return std::make_unique<InteriorPointSolver>(options, ipm);
  }
  throw InputError("unknown solver '" + name + "'; known solvers: " + known_solvers());
}

std::vector<std::string> solver_option_keys(const std::string& name) {
  // Every solver reads these.
  std::vector<std::string> keys{"tolerance", "max_iterations", "warm_start", "record_history"};
  const auto add = [&keys](std::initializer_list<const char*> more) {
    keys.insert(keys.end(), more.begin(), more.end());
  };
  if (name == "pgs" || name == "md_gs") {
    add({"check_every", "divergence_factor", "relaxation", "order", "seed"});
  } else if (name == "pgj" || name == "md_blend") {
    add({"check_every", "divergence_factor", "relaxation"});
  } else if (name == "md_jacobi") {
    // Its one pass gives the residual of every iterate: it checks each one.
    add({"divergence_factor", "relaxation"});
  } else if (name == "apgd") {
    add({"check_every", "divergence_factor", "adaptive_restart", "initial_lipschitz"});
  } else if (name.rfind("nlgs-", 0) == 0 && make_nlgs_solver(name, SolverOptions{})) {
    add({"check_every", "divergence_factor", "nlgs"});
  } else if (name == "newton" || name == "admm") {
    // semismooth_newton_options / admm_options copy these common fields only.
    add({"divergence_factor"});
  } else if (name != "ipm" && name != "ipm-direct") {
    throw InputError("unknown solver '" + name + "'; known solvers: " + known_solvers());
  }
  return keys;
}

}  // namespace moreau
