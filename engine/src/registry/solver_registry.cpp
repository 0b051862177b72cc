#include "moreau/registry/solver_registry.hpp"

#include <array>

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

// In the order of the alternatives of AnySolverOptions.
constexpr std::array<const char*, std::variant_size_v<AnySolverOptions>> kOptionsNames{
    "IpmOptions",     "PgsOptions",           "PgjOptions",
    "ApgdOptions",    "MdGaussSeidelOptions", "MdJacobiOptions",
    "MdBlendOptions", "NlgsOptions",          "SemismoothNewtonOptions",
    "AdmmOptions"};

template <typename Options>
AnySolverOptions with_common_defaults(Options options) {
  AnySolverOptions any = std::move(options);
  set_common_options(any, SolverOptions{});
  return any;
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

AnySolverOptions default_solver_options(const std::string& name) {
  if (name == "pgs") return PgsOptions{};
  if (name == "pgj") return PgjOptions{};
  if (name == "apgd") return ApgdOptions{};
  if (name == "md_gs") return MdGaussSeidelOptions{};
  if (name == "md_jacobi") return MdJacobiOptions{};
  if (name == "md_blend") return MdBlendOptions{};
  if (name.rfind("nlgs-", 0) == 0 && make_nlgs_solver(name)) {
    NlgsOptions nlgs;
    nlgs.method = nlgs_method(name);
    return nlgs;
  }
  // Newton's and ADMM's own structs default to their own iteration limits; through the
  // registry (scenes, `moreau fclib solve`) every solver starts from SolverOptions' defaults.
  if (name == "newton") return with_common_defaults(SemismoothNewtonOptions{});
  if (name == "admm") return with_common_defaults(AdmmOptions{});
  if (name == "ipm" || name == "ipm-direct") return IpmOptions{};
  throw InputError("unknown solver '" + name + "'; known solvers: " + known_solvers());
}

AnySolverOptions default_solver_options(const std::string& name, const SolverOptions& common) {
  AnySolverOptions options = default_solver_options(name);
  set_common_options(options, common);
  return options;
}

std::unique_ptr<ContactSolver> make_solver(const std::string& name,
                                           const AnySolverOptions& options) {
  const AnySolverOptions expected = default_solver_options(name);
  if (expected.index() != options.index())
    throw InputError("solver '" + name + "' takes " + options_type_name(expected) + ", got " +
                     options_type_name(options));
  if (name == "pgs") return std::make_unique<ProjectedGaussSeidel>(std::get<PgsOptions>(options));
  if (name == "pgj") return std::make_unique<ProjectedGaussJacobi>(std::get<PgjOptions>(options));
  if (name == "apgd") return std::make_unique<Apgd>(std::get<ApgdOptions>(options));
  // Maximum-dissipation impact model (Preclik et al.): block solvers over the analytic
  // single-contact solver; they take the cone problem's W, q and mu and ignore its friction model.
  if (name == "md_gs")
    return std::make_unique<MaxDissipationGaussSeidel>(std::get<MdGaussSeidelOptions>(options));
  if (name == "md_jacobi")
    return std::make_unique<MaxDissipationJacobi>(std::get<MdJacobiOptions>(options));
  if (name == "md_blend")
    return std::make_unique<MaxDissipationBlend>(std::get<MdBlendOptions>(options));
  // NLGS with the local solvers of Dumont (nlgs-sbp, nlgs-ebp, nlgs-sal, nlgs-eal).
  if (const auto* nlgs = std::get_if<NlgsOptions>(&options)) return make_nlgs_solver(name, *nlgs);
  // Semismooth Newton on Alart-Curnier (semismooth_newton.hpp).
  if (name == "newton")
    return std::make_unique<SemismoothNewton>(std::get<SemismoothNewtonOptions>(options));
  // ADMM with residual balancing and the De Saxce fixed point (admm.hpp).
  if (name == "admm") return std::make_unique<Admm>(std::get<AdmmOptions>(options));
  // Interior point method of Kleinert et al. (matrix-free CG / CHOLMOD back-end).
  const IpmOptions& common = std::get<IpmOptions>(options);
  InteriorPointSolverOptions ipm;
  if (name == "ipm-direct") ipm.backend = conic::LinearBackend::cholmod;
  ipm.stop_on_paper_error = common.stopping == IpmStopping::kleinert_error;
  ipm.body_space_preconditioner = common.preconditioner;
  return std::make_unique<InteriorPointSolver>(common, ipm);
}

std::unique_ptr<ContactSolver> make_solver(const std::string& name) {
  return make_solver(name, default_solver_options(name));
}

SolverOptions common_options(const AnySolverOptions& options) {
  return std::visit(
      [](const auto& o) {
        SolverOptions common;
        common.tolerance = o.tolerance;
        common.max_iterations = o.max_iterations;
        common.warm_start = o.warm_start;
        common.record_history = o.record_history;
        return common;
      },
      options);
}

void set_common_options(AnySolverOptions& options, const SolverOptions& common) {
  std::visit(
      [&common](auto& o) {
        o.tolerance = common.tolerance;
        o.max_iterations = common.max_iterations;
        o.warm_start = common.warm_start;
        o.record_history = common.record_history;
      },
      options);
}

std::string options_type_name(const AnySolverOptions& options) {
  return kOptionsNames[options.index()];
}

}  // namespace moreau
