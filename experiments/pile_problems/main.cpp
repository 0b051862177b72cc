// Pile test problems of Kleinert, Simeon & Dressler Sec. 5 (Fig. 5-7): piles of non-rotating
// spheres, one nonsmooth SHAKE step's cone complementarity problem (Kleinert eq. 20, 22) with
// potential contacts where the distance is below half the mean radius, solved by PGJ, PGS,
// APGD and the interior point method where this build has one, error against wall time and
// time to reach 5e-2, 1e-2 and 5e-4 against problem size. The paper gives neither the radii,
// the container nor the settling procedure of its piles: README.md documents ours. Settled
// piles are cached (MOREAU_PILE_CACHE, engine checkpoints) so that later runs skip the settling.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "claims.hpp"
#include "measured_problem.hpp"
#include "moreau/core/error.hpp"
#include "moreau/harness/experiment.hpp"
#include "moreau/solver/interior_point_solver.hpp"
#include "moreau/solver/merit.hpp"
#include "pile.hpp"
#include "solver_runs.hpp"

namespace {

using namespace moreau;
using namespace pile_problems;
namespace fs = std::filesystem;

constexpr const char* kExperiment = "pile_problems";
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct PileSpec {
  int spheres;
  double published_contacts;  // Kleinert Sec. 5
};

// The published piles (Kleinert Sec. 5, expected.json "test_problems").
std::vector<PileSpec> published_piles(const Reference& reference) {
  const PublishedData& problems = reference.data("test_problems");
  std::vector<PileSpec> published;
  for (const std::string& row : problems.row_names)
    published.push_back(
        {static_cast<int>(problems.at(row, "spheres")), problems.at(row, "potential_contacts")});
  return published;
}

// The raw data, at the default 6 digits, as the figures read them.
struct Tables {
  CsvTable piles, convergence, time_to_tolerance;
};

Tables open_tables(ExperimentResults& results, const std::string& dir) {
  return {
      CsvTable(results, dir, "piles.csv",
               {"pile", "spheres", "container_side", "settle_steps", "settle_seconds",
                "settle_max_speed", "from_cache", "contacts", "unknowns", "published_spheres",
                "published_contacts"},
               6),
      CsvTable(results, dir, "convergence.csv",
               {"pile", "spheres", "contacts", "solver", "iteration", "seconds", "merit"}, 6),
      CsvTable(results, dir, "time_to_tolerance.csv",
               {"pile", "spheres", "contacts", "solver", "tolerance", "seconds", "iterations"}, 6)};
}

// Pile p's settled state and test problem: its row, its contacts per sphere against the
// paper's and its measures.
void record_pile(ExperimentResults& results, CsvTable& table, std::size_t p, const PileSpec& spec,
                 const PileSpec& published, const Pile& pile, int contacts) {
  const std::string tag = "pile " + std::to_string(p + 1);
  table.row(p + 1, spec.spheres, pile.side, pile.settle_steps, pile.settle_seconds,
            pile.final_max_speed, pile.from_cache, contacts, 3 * contacts, published.spheres,
            published.published_contacts);
  results.check("contacts_per_sphere_" + std::to_string(p + 1),
                static_cast<double>(contacts) / spec.spheres,
                std::to_string(contacts) + " potential contacts for " +
                    std::to_string(spec.spheres) + " spheres");
  results.measure(tag + ": spheres", spec.spheres, "");
  results.measure(tag + ": potential contacts", contacts, "",
                  "published " + std::to_string(static_cast<int>(published.published_contacts)) +
                      " for " + std::to_string(published.spheres) + " spheres");
  results.measure(tag + ": settling wall time", pile.settle_seconds, "s",
                  pile.from_cache ? "measured when the cached pile was built"
                                  : std::to_string(pile.settle_steps) + " SHAKE steps of 2 ms");
  results.measure(tag + ": largest speed after settling", pile.final_max_speed, "m/s");
}

// One solver run on pile p: its curve and times to tolerance in the tables, its measures.
void record_run(ExperimentResults& results, Tables& tables, std::size_t p, const PileSpec& spec,
                const ConeProblem& problem, const SolverRun& run) {
  const std::string tag = "pile " + std::to_string(p + 1);
  const int contacts = problem.contact_count();
  const std::vector<double>& h = run.stats.merit_history;
  // Every iteration up to 100, then about 400 points per run, log-spaced enough for the figure.
  const int stride = std::max(1, static_cast<int>(h.size()) / 400);
  for (std::size_t k = 0; k < h.size(); ++k)
    if (k < 100 || k % stride == 0 || k + 1 == h.size())
      tables.convergence.row(p + 1, spec.spheres, contacts, run.label, run.iteration_of(k),
                             run.seconds_at(k), h[k]);
  for (std::size_t k = 0; k < kTolerances.size(); ++k) {
    const double t = run.time_to_tolerance[k];
    tables.time_to_tolerance.row(p + 1, spec.spheres, contacts, run.label, kTolerances[k], t,
                                 run.stats.iterations);
    results.measure(tag + ": " + run.label + " time to " + measure_name(run) + " " +
                        std::to_string(kTolerances[k]).substr(0, 6),
                    t, "s", std::isnan(t) ? "not reached" : "");
  }
  // The paper's Table 1 tolerances: wall time and Krylov iterations of the IPM to reach its
  // error 1e-4, 1e-5, 1e-6 (read off the run; Krylov iterations are exact).
  if (run.ipm && is_error_run(run))
    for (const double tol : {1e-4, 1e-5, 1e-6}) {
      const std::optional<std::size_t> k = run.first_below(tol);
      const std::string name =
          tag + ": " + run.label + " to error " + std::to_string(tol).substr(0, 8);
      results.measure(name + " seconds", k ? run.seconds_at(*k) : kNaN, "s",
                      k ? std::to_string(*k) + " Newton steps" : "not reached");
      results.measure(name + " Krylov iterations", k ? run.krylov_at(*k) : kNaN, "");
    }
  // The paper's error(gamma, u) of the final iterate (kleinert_error, the IPM's measure).
  VecX u(3 * contacts);
  problem.delassus->apply(run.impulses, u);
  u += problem.q;
  results.measure(tag + ": " + run.label + " final error(gamma, u)",
                  kleinert_error(problem, run.impulses, u), "",
                  "Kleinert's error of the final iterate, beside the suite's merit");
  if (run.ipm)
    results.measure(tag + ": " + run.label + " Krylov iterations", run.stats.krylov_iterations, "",
                    std::to_string(run.stats.iterations) + " Newton steps");
  results.measure(tag + ": " + run.label + " final merit", run.stats.merit, "",
                  std::to_string(run.stats.iterations) + " iterations, " +
                      std::to_string(run.stats.wall_seconds) + " s, " +
                      to_string(run.stats.termination));
  std::cout << "  " << run.label << ": merit " << run.stats.merit << " after "
            << run.stats.iterations << " iterations, " << run.stats.wall_seconds << " s"
            << std::endl;
}

// The FCLIB export of pile `number`'s problem with the most accurate solution found.
void export_best(ExperimentResults& results, const MeasuredProblem& measured,
                 const std::vector<SolverRun>& runs, std::size_t number, int spheres,
                 const fs::path& dir) {
  const SolverRun* best = &runs.front();
  for (const SolverRun& r : runs)
    if (r.stats.merit < best->stats.merit) best = &r;
  const std::string stem = "pile_" + std::to_string(spheres);
  export_fclib(measured, best->impulses, best->stats,
               "Kleinert, Simeon & Dressler pile test problem " + std::to_string(number) + " (" +
                   std::to_string(spheres) + " non-rotating spheres), one SHAKE step",
               dir, stem);
  results.add_file(stem + "_local.hdf5", "raw");
  results.add_file(stem + "_global.hdf5", "raw");
}

}  // namespace

int main(int argc, char** argv) {
  return run_experiment(
      argc, argv, kExperiment, [](const ExperimentArguments& args, ExperimentResults& results) {
        const fs::path dir = args.output_directory;
        const bool full = args.full();
        // Quick: an eighth of each published pile.
        const std::vector<PileSpec> published = published_piles(results.reference());
        std::vector<PileSpec> piles = published;
        if (!full)
          for (PileSpec& p : piles) p.spheres /= 8;
        Tables tables = open_tables(results, dir);
        const std::vector<SolverSpec> specs = solver_specs(full);
        const bool have_ipm = std::any_of(specs.begin(), specs.end(),
                                          [](const SolverSpec& s) { return is_ipm(s.name); });
        Claims claims;
        claims.ipm_faster_at_1e2 = have_ipm;

        // All piles are settled (or read from the cache) before any solver runs, so that a first
        // run can be stopped once the cache is filled.
        std::vector<Pile> settled;
        for (const PileSpec& spec : piles) {
          settled.push_back(settled_pile(spec.spheres));
          std::cout << spec.spheres << " spheres settled in " << settled.back().settle_seconds
                    << " s" << (settled.back().from_cache ? " (cached)" : "") << std::endl;
        }
        for (std::size_t p = 0; p < piles.size(); ++p) {
          const PileSpec& spec = piles[p];
          const Pile& pile = settled[p];
          const bool largest = p + 1 == piles.size();
          const MeasuredProblem measured = measured_problem(pile);
          const int contacts = measured.problem.contact_count();
          std::cout << "pile " << p + 1 << ": " << spec.spheres << " spheres, " << contacts
                    << " contacts" << (pile.from_cache ? " (settled pile from the cache)" : "")
                    << std::endl;
          record_pile(results, tables.piles, p, spec, published[p], pile, contacts);
          const double ratio_bound =
              full && largest
                  ? results.reference().get("pgj_over_ipm_time_at_5e-4_largest_published").published
                  : 0.0;
          const std::vector<SolverRun> runs = run_solvers(measured.problem, specs, ratio_bound);
          for (const SolverRun& run : runs)
            record_run(results, tables, p, spec, measured.problem, run);
          judge_pile(claims, runs, p, largest);
          export_best(results, measured, runs, p + 1, spec.spheres, dir);
        }
        check_claims(results, claims, full, have_ipm);
        results.measure("OpenMP threads", omp_get_max_threads(), "");
        for (const char* figure : {"error_vs_time.png", "time_to_tolerance.png"})
          results.add_file(figure, "figure");
        return RunEnd::checked;
      });
}
