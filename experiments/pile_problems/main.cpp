// Pile test problems of Kleinert, Simeon & Dressler Sec. 5 (Fig. 5-7): piles of non-rotating
// spheres, one nonsmooth SHAKE step's cone complementarity problem (Kleinert eq. 20, 22) with
// potential contacts where the distance is below half the mean radius, solved by PGJ, PGS,
// APGD and the interior point method where this build has one, error against wall time and
// time to reach 5e-2, 1e-2 and 5e-4 against problem size. The paper gives neither the radii,
// the container nor the settling procedure of its piles: README.md documents ours. Settled
// piles are cached (MOREAU_PILE_CACHE) so that later runs skip the settling.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <numbers>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "moreau/contact/contact_system.hpp"
#include "moreau/core/error.hpp"
#include "moreau/fclib/step_export.hpp"
#include "moreau/harness/results.hpp"
#include "moreau/harness/table.hpp"
#include "moreau/integrator/shake_stepper.hpp"
#include "moreau/io/scene.hpp"
#include "moreau/model/shape.hpp"
#include "moreau/registry/solver_registry.hpp"
#include "moreau/solver/interior_point_solver.hpp"
#include "moreau/solver/merit.hpp"
#include "moreau/solver/solver.hpp"

#ifndef MOREAU_PILE_CACHE
#define MOREAU_PILE_CACHE ""
#endif

namespace {

using namespace moreau;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

constexpr const char* kExperiment = "pile_problems";

// Material of Kleinert Sec. 5 (the trench of the blade test, the only particles the paper
// describes): radii uniform in [8, 16] mm, mu = 0.25. The bulk density 1,382 kg/m^3 over a
// random packing fraction of about 0.6 gives the particle density.
constexpr double kRadiusMin = 0.008, kRadiusMax = 0.016;  // m
constexpr double kMeanRadius = 0.5 * (kRadiusMin + kRadiusMax);
constexpr double kDensity = 1382.0 / 0.6;  // kg/m^3
constexpr double kMu = 0.25;
constexpr double kGravity = 9.81;
// Kleinert Sec. 5: "potentially in contact if the minimum distance between them is less than
// half of the mean radius".
constexpr double kPotentialContactDistance = 0.5 * kMeanRadius;
// Time step of the measured SHAKE step: Kleinert's simulations use h = 1e-2 s (Sec. 5).
constexpr double kMeasureStep = 1e-2;
// Settling (README.md): SHAKE with APGD, h = 2 ms; the pile is settled when no sphere moves
// faster than kSettledSpeed (2 mm per 10 ms step, 1/6 of the smallest radius per second).
constexpr double kSettleStep = 2e-3;
constexpr double kSettleTolerance = 1e-3;
constexpr int kSettleIterations = 150;
constexpr double kSettledSpeed = 0.02;    // m/s
constexpr double kPackingFraction = 0.6;  // to size the container: height ~ side
constexpr unsigned kSeed = 2015;          // std::mt19937, + pile size
constexpr int kCacheVersion = 3;          // bump when the generator or the settling changes

const std::vector<double> kTolerances = {5e-2, 1e-2, 5e-4};  // Kleinert Fig. 7
constexpr double kPgjRelaxation = 0.3;  // as the other experiments (projected_gauss_jacobi.hpp)

struct PileSpec {
  int spheres;
  double published_contacts;  // Kleinert Sec. 5
};

struct Sphere3 {
  Vec3 position;
  Vec3 velocity;
  double radius;
};

struct Pile {
  int spheres = 0;
  double side = 0.0;  // container side, m
  std::vector<Sphere3> grains;
  long settle_steps = 0;
  double settle_seconds = 0.0;  // wall time of the settling (0 when read from the cache)
  double final_max_speed = 0.0;
  bool from_cache = false;
};

// E[r^3] of r uniform in [a, b], for the mean sphere volume.
double mean_cubed_radius() {
  return (std::pow(kRadiusMax, 4) - std::pow(kRadiusMin, 4)) / (4.0 * (kRadiusMax - kRadiusMin));
}

// Square box with open top whose settled pile is about as high as it is wide.
double container_side(int spheres) {
  const double volume = spheres * 4.0 / 3.0 * std::numbers::pi * mean_cubed_radius();
  return std::cbrt(volume / kPackingFraction);
}

// Square box with open top (the scene format's container generator: five fixed half-spaces),
// gravity and mu = 0.25 between every pair of bodies.
World empty_box(double side) {
  const nlohmann::json box = {
      {"steps", 0},
      {"gravity", {0.0, -kGravity, 0.0}},
      {"friction", {{"default", kMu}}},
      {"generators",
       {{{"type", "container"}, {"min", {0.0, 0.0, 0.0}}, {"max", {side, side, side}}}}}};
  return parse_scene(box, "pile container").world;
}

World pile_world(const Pile& pile) {
  World world = empty_box(pile.side);
  for (const Sphere3& g : pile.grains) {
    const MassProperties mass = mass_properties(Sphere{g.radius}, kDensity, Dimension::three);
    RigidBody body;
    body.name = "grain";
    body.rotation_locked = true;  // Kleinert's non-rotating spheres
    body.shape.geometry = Sphere{g.radius};
    body.mass = mass.mass;
    body.inertia_body = mass.inertia;
    body.position = g.position;
    body.linear_velocity = g.velocity;
    world.add_body(body);
  }
  return world;
}

// Initial state: radii uniform in [8, 16] mm on a square lattice that fills the box from the
// floor up, spacing at least one largest diameter plus 1 mm, every other layer shifted by half
// a spacing (so that spheres fall into the gaps below, not onto the sphere below), each sphere
// moved at random within its cell's clearance and given a random horizontal velocity of up to
// 0.5 m/s per component: without it the lattice falls as one block and lands as stable
// columns of non-rotating spheres instead of a random packing.
Pile initial_pile(int spheres) {
  Pile pile;
  pile.spheres = spheres;
  pile.side = container_side(spheres);
  const double pitch = 2.0 * kRadiusMax + 1e-3;
  const int per_row = std::max(1, static_cast<int>(pile.side / pitch - 0.5));
  const double spacing = pile.side / (per_row + 0.5);
  std::mt19937 generator(kSeed + static_cast<unsigned>(spheres));
  std::uniform_real_distribution<double> radius(kRadiusMin, kRadiusMax);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  const double clearance = 0.5 * (spacing - 2.0 * kRadiusMax);
  for (int k = 0; k < spheres; ++k) {
    const int layer = k / (per_row * per_row), i = (k / per_row) % per_row, j = k % per_row;
    const double shift = layer % 2 == 0 ? 0.5 : 1.0;
    const double r = radius(generator);
    const double x = (i + shift) * spacing + clearance * unit(generator);
    const double z = (j + shift) * spacing + clearance * unit(generator);
    const Vec3 velocity(0.5 * unit(generator), 0.0, 0.5 * unit(generator));
    pile.grains.push_back({Vec3(x, kRadiusMax + 5e-4 + layer * pitch, z), velocity, r});
  }
  return pile;
}

std::unique_ptr<ContactSolver> settle_solver() {
  ApgdOptions options;
  options.tolerance = kSettleTolerance;
  options.max_iterations = kSettleIterations;
  options.record_history = false;
  return make_solver("apgd", options);
}

double max_speed(const World& world) {
  double worst = 0.0;
  for (const RigidBody& b : world.bodies)
    if (b.is_dynamic()) worst = std::max(worst, b.linear_velocity.norm());
  return worst;
}

// Settles the pile under gravity with nonsmooth SHAKE. The collision margin covers one step's
// approach at the largest fall speed sqrt(2 g H0), so that no pair closes unseen.
void settle(Pile& pile) {
  World world = pile_world(pile);
  double top = 0.0;
  for (const Sphere3& g : pile.grains) top = std::max(top, g.position.y());
  const double fall_speed = std::sqrt(2.0 * kGravity * top);
  ShakeOptions options;
  options.time_step = kSettleStep;
  options.collision.margin = std::max(kPotentialContactDistance, 1.2 * kSettleStep * fall_speed);
  ShakeStepper stepper(world, options, settle_solver());
  const long min_steps = static_cast<long>(1.5 * std::sqrt(2.0 * top / kGravity) / kSettleStep);
  const long max_steps = min_steps + static_cast<long>(2.0 / kSettleStep);  // 2 s more at most
  const Clock::time_point start = Clock::now();
  long step = 0;
  while (step < max_steps) {
    stepper.step();
    ++step;
    if (step >= min_steps && max_speed(world) < kSettledSpeed) break;
  }
  pile.settle_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  pile.settle_steps = step;
  pile.final_max_speed = max_speed(world);
  int k = 0;
  for (const RigidBody& b : world.bodies) {
    if (!b.is_dynamic()) continue;
    pile.grains[k].position = b.position;
    pile.grains[k].velocity = b.linear_velocity;
    ++k;
  }
}

fs::path cache_path(int spheres) {
  const std::string directory = MOREAU_PILE_CACHE;
  if (directory.empty()) return {};
  return fs::path(directory) /
         ("pile_" + std::to_string(spheres) + "_seed" + std::to_string(kSeed) + "_v" +
          std::to_string(kCacheVersion) + ".txt");
}

std::optional<Pile> read_cache(int spheres) {
  const fs::path path = cache_path(spheres);
  if (path.empty() || !fs::exists(path)) return std::nullopt;
  std::ifstream in(path);
  Pile pile;
  in >> pile.spheres >> pile.side >> pile.settle_steps >> pile.settle_seconds >>
      pile.final_max_speed;
  for (int k = 0; in && k < spheres; ++k) {
    Sphere3 g;
    in >> g.position.x() >> g.position.y() >> g.position.z() >> g.velocity.x() >> g.velocity.y() >>
        g.velocity.z() >> g.radius;
    pile.grains.push_back(g);
  }
  if (!in || pile.spheres != spheres || static_cast<int>(pile.grains.size()) != spheres) {
    std::cerr << kExperiment << ": ignoring the unreadable cache file " << path << "\n";
    return std::nullopt;
  }
  pile.from_cache = true;
  return pile;
}

void write_cache(const Pile& pile) {
  const fs::path path = cache_path(pile.spheres);
  if (path.empty()) return;
  fs::create_directories(path.parent_path());
  std::ofstream out(path);
  out << std::setprecision(17) << pile.spheres << " " << pile.side << " " << pile.settle_steps
      << " " << pile.settle_seconds << " " << pile.final_max_speed << "\n";
  for (const Sphere3& g : pile.grains)
    out << g.position.x() << " " << g.position.y() << " " << g.position.z() << " " << g.velocity.x()
        << " " << g.velocity.y() << " " << g.velocity.z() << " " << g.radius << "\n";
}

Pile settled_pile(int spheres) {
  if (std::optional<Pile> cached = read_cache(spheres)) return *cached;
  Pile pile = initial_pile(spheres);
  settle(pile);
  write_cache(pile);
  return pile;
}

// The CCP of one SHAKE step (Kleinert eq. 20) as the stepper built it, copied from its
// problem observer so that every solver gets the very same problem.
struct MeasuredProblem {
  World world;  // state at the start of the step
  std::vector<Contact> contacts;
  VecX free_velocity, normal_offset, mu;
  std::unique_ptr<ContactSystem> system;
  ConeProblem problem;
};

MeasuredProblem measured_problem(const Pile& pile) {
  World world = pile_world(pile);
  ShakeOptions options;
  options.time_step = kMeasureStep;
  options.collision.margin = kPotentialContactDistance;
  PgjOptions cheap;  // the stepper's own solve is not used: one iteration
  cheap.max_iterations = 1;
  cheap.record_history = false;
  ShakeStepper stepper(world, options, make_solver("pgj", cheap));
  MeasuredProblem m;
  stepper.set_problem_observer([&m](const StepProblem& step) {
    m.world = *step.world;
    m.contacts = *step.contacts;
    m.free_velocity = *step.free_velocity;
    m.normal_offset = *step.normal_offset;
    m.mu = *step.friction;
  });
  stepper.step();
  if (m.contacts.empty())
    throw SimulationError("pile of " + std::to_string(pile.spheres) +
                          " spheres: the measured step has no contacts");
  m.system = std::make_unique<ContactSystem>(m.world, m.contacts, 3);
  m.problem.delassus = m.system.get();
  m.problem.friction_model = FrictionModel::convex_relaxation;  // Kleinert eq. 22
  m.problem.q = local_velocities(m.world, m.contacts, m.free_velocity, 3);
  for (int i = 0; i < static_cast<int>(m.contacts.size()); ++i)
    m.problem.q(3 * i) += m.normal_offset(i);
  m.problem.mu = m.mu;
  return m;
}

bool is_ipm(const std::string& name) { return name.rfind("ipm", 0) == 0; }

struct SolverRun {
  std::string label;
  bool ipm = false;
  SolverStats stats;
  VecX impulses;
  std::vector<double> time_to_tolerance;  // per kTolerances entry; NaN where not reached
  // Runs read at checkpoints (paper_error_run): iteration and seconds of each history entry.
  std::vector<int> checkpoint_iterations;
  std::vector<double> checkpoint_seconds;
  // Iterate k of merit_history: every solver records its starting point (r = 0, or the IPM's
  // interior starting point) first, then every iteration or Newton step.
  int iteration_of(std::size_t k) const {
    return checkpoint_iterations.empty() ? static_cast<int>(k) : checkpoint_iterations[k];
  }
  // Seconds at merit_history[k]. PGJ, PGS and APGD cost the same per iteration (one Delassus
  // product and one merit), so time is spread evenly. An IPM Newton step costs its Krylov
  // iterations (one product each) plus about two products (residual and merit): time is
  // spread in proportion to 2 + Krylov iterations per step (uniform for the direct back-end,
  // which reports none).
  double seconds_at(std::size_t k) const {
    if (!checkpoint_seconds.empty()) return checkpoint_seconds[k];
    if (stats.iterations <= 0) return 0.0;
    if (!ipm) return stats.wall_seconds * iteration_of(k) / stats.iterations;
    return stats.wall_seconds * krylov_cost(static_cast<int>(k)) / krylov_cost(stats.iterations);
  }
  // Products of the first `steps` Newton steps (2 + Krylov iterations each).
  double krylov_cost(int steps) const {
    const std::vector<int>& krylov = stats.krylov_iterations_per_step;
    double cost = 0.0;
    for (int i = 0; i < steps; ++i)
      cost += 2.0 + (i < static_cast<int>(krylov.size()) ? krylov[i] : 0);
    return cost;
  }
  // Krylov iterations of the first k Newton steps (the IPM's iterate k).
  int krylov_at(std::size_t k) const {
    const std::vector<int>& krylov = stats.krylov_iterations_per_step;
    int sum = 0;
    for (std::size_t i = 0; i < k && i < krylov.size(); ++i) sum += krylov[i];
    return sum;
  }
  // First history index with a value <= tolerance.
  std::optional<std::size_t> first_below(double tolerance) const {
    for (std::size_t k = 0; k < stats.merit_history.size(); ++k)
      if (stats.merit_history[k] <= tolerance) return k;
    return std::nullopt;
  }
  // First time the history (merit or the paper's error) is <= tolerance; nullopt when never.
  std::optional<double> time_to(double tolerance) const {
    const std::optional<std::size_t> k = first_below(tolerance);
    return k ? std::optional<double>(seconds_at(*k)) : std::nullopt;
  }
};

// Histories on the paper's error(gamma, u) carry this suffix in their label (the suite's merit
// has none), in the CSV files and the results.
const std::string kErrorSuffix = " [error]";
// Kleinert Fig. 7(c): PGJ's time over the IPM's to 5e-4 on the largest pile. At the published
// scale PGJ runs for the bound times the IPM's time (ratio_budget); the quick run stops it at
// its cap, which leaves a lower bound (a separate reference entry, a known difference).
std::string ratio_check(bool full) {
  return full ? "pgj_over_ipm_time_at_5e-4_largest" : "pgj_over_ipm_time_at_5e-4_largest_quick";
}

struct SolverSpec {
  std::string label;
  std::string name;
  AnySolverOptions options;
  bool paper_error = false;  // IPM: stop on and record kleinert_error (the paper's error)
};

bool is_error_run(const SolverRun& run) {
  return run.label.size() > kErrorSuffix.size() &&
         run.label.compare(run.label.size() - kErrorSuffix.size(), kErrorSuffix.size(),
                           kErrorSuffix) == 0;
}
std::string measure_name(const SolverRun& run) { return is_error_run(run) ? "error" : "merit"; }
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::unique_ptr<ContactSolver> make_spec_solver(const SolverSpec& spec) {
  if (!spec.paper_error) return make_solver(spec.name, spec.options);
  InteriorPointSolverOptions ipm;
  if (spec.name == "ipm-direct") ipm.backend = conic::LinearBackend::cholmod;
  ipm.stop_on_paper_error = true;
  return std::make_unique<InteriorPointSolver>(std::get<IpmOptions>(spec.options), ipm);
}

// PGJ's paper's error(gamma, u) over its iterations: PGJ keeps no state but r, so a run
// continued from its own r in chunks is the same run; between chunks the error is evaluated.
// Checkpoints grow geometrically (about 150 up to the cap). Each chunk is a solve with its own
// setup (step sizes, first product, merit), which on the small piles would cost as much as the
// iterations themselves: iterate k is timed at k times the per-iteration time of PGJ's
// uninterrupted merit run (seconds_per_iteration), as every PGJ curve is.
// Past the spec's cap the run goes on, up to `budget` iterations, only while its error is above
// `target`: how the ratio check of the largest pile gives PGJ the time the bound needs.
SolverRun paper_error_run(const ConeProblem& problem, const SolverSpec& spec,
                          double seconds_per_iteration, int budget = 0, double target = 0.0) {
  SolverRun run;
  run.label = spec.label + kErrorSuffix;
  run.impulses = VecX::Zero(problem.size());
  AnySolverOptions options = spec.options;
  SolverOptions common = common_options(options);
  common.warm_start = true;
  common.record_history = false;
  common.tolerance = 0.0;
  const int max_iterations = common.max_iterations;
  VecX u(problem.size());
  int done = 0;
  const auto record = [&] {
    problem.delassus->apply(run.impulses, u);
    u += problem.q;
    run.stats.merit_history.push_back(kleinert_error(problem, run.impulses, u));
    run.checkpoint_iterations.push_back(done);
    run.checkpoint_seconds.push_back(done * seconds_per_iteration);
  };
  record();
  const int last = std::max(max_iterations, budget);
  while (done < max_iterations || (done < last && run.stats.merit_history.back() > target)) {
    const int next = std::min(last, std::max(done + 1, static_cast<int>(done * 1.06)));
    common.max_iterations = next - done;
    set_common_options(options, common);
    make_solver(spec.name, options)->solve(problem, run.impulses);
    done = next;
    record();
  }
  run.stats.solver = spec.name;
  run.stats.iterations = done;
  run.stats.wall_seconds = done * seconds_per_iteration;
  run.stats.merit = merit(problem, run.impulses);
  run.stats.kleinert_error = run.stats.merit_history.back();
  run.stats.termination = Termination::iteration_limit;
  return run;
}

// PGJ's iterations on the largest published pile: until 5e-4 or `bound` times the IPM's time to
// it (Kleinert Fig. 7c; the paper's 200), so that the checks "PGJ needs at least 100 / 200 times
// the IPM's time" are decided by the run, not left undecided by a cap. 0 where the IPM did not
// reach 5e-4.
int ratio_budget(const std::vector<SolverRun>& runs, double seconds_per_iteration, double bound) {
  for (const SolverRun& r : runs)
    if (r.label == "IPM" + kErrorSuffix && !std::isnan(r.time_to_tolerance.back()))
      // 1% above the bound, so that rounding of the chunked iteration count cannot fall short.
      return static_cast<int>(
          std::ceil(1.01 * bound * r.time_to_tolerance.back() / seconds_per_iteration));
  return 0;
}

std::vector<SolverSpec> solver_specs(bool full) {
  const std::vector<std::string> known = solver_names();
  const auto has = [&](const std::string& name) {
    return std::find(known.begin(), known.end(), name) != known.end();
  };
  std::vector<SolverSpec> specs;
  const auto add = [&](const std::string& label, const std::string& name, int iterations,
                       double relaxation) {
    SolverOptions common;
    common.tolerance = 1e-4;  // below the tightest tolerance of Fig. 7 (5e-4)
    common.max_iterations = iterations;
    common.record_history = true;
    common.warm_start = false;
    AnySolverOptions o = default_solver_options(name, common);
    std::visit(
        [relaxation](auto& options) {
          if constexpr (requires { options.relaxation; }) options.relaxation = relaxation;
        },
        o);
    specs.push_back({label, name, o});
  };
  // Iteration caps (README.md): what two cores can run within the budget (PGJ on the largest
  // published pile: ~15 ms per iteration on one thread). Kleinert's PGJ needed 73,600
  // iterations to reach 5e-4 on problem 3; a PGJ run stopped at its cap short of 5e-4 gives a
  // lower bound of its time to 5e-4.
  add("PGJ", "pgj", full ? 30000 : 10000, kPgjRelaxation);
  add("PGS", "pgs", full ? 5000 : 3000, 1.0);
  add("APGD", "apgd", full ? 10000 : 5000, 1.0);
  for (const std::string& name : known)
    if (is_ipm(name) && has(name)) add(name == "ipm" ? "IPM" : "IPM-direct", name, 200, 1.0);
  // The IPM once more, stopped on the paper's error(gamma, u) at 1e-6 (Kleinert Table 1's
  // tightest tolerance): the paper's measure for Fig. 6-7 and the 1e-4 / 1e-5 / 1e-6 report.
  for (const std::string& name : known)
    if (is_ipm(name) && has(name)) {
      add((name == "ipm" ? "IPM" : "IPM-direct") + kErrorSuffix, name, 200, 1.0);
      SolverOptions common = common_options(specs.back().options);
      common.tolerance = 1e-6;
      set_common_options(specs.back().options, common);
      specs.back().paper_error = true;
    }
  return specs;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const ExperimentArguments args = ExperimentArguments::parse(argc, argv, kExperiment);
    const Reference reference = Reference::load(args.reference_directory);
    ExperimentResults results(kExperiment, args.scale, reference);
    const fs::path dir = args.output_directory;
    const bool full = args.full();
    // Published piles (Kleinert Sec. 5, expected.json "test_problems"); quick: an eighth of each.
    const PublishedData& problems = reference.data("test_problems");
    std::vector<PileSpec> published;
    for (const std::string& row : problems.row_names)
      published.push_back(
          {static_cast<int>(problems.at(row, "spheres")), problems.at(row, "potential_contacts")});
    std::vector<PileSpec> piles = published;
    if (!full)
      for (PileSpec& p : piles) p.spheres /= 8;

    // At the default 6 digits, as the figures read them.
    CsvTable pile_csv(
        results, dir, "piles.csv",
        {"pile", "spheres", "container_side", "settle_steps", "settle_seconds", "settle_max_speed",
         "from_cache", "contacts", "unknowns", "published_spheres", "published_contacts"},
        6);
    CsvTable curve_csv(results, dir, "convergence.csv",
                       {"pile", "spheres", "contacts", "solver", "iteration", "seconds", "merit"},
                       6);
    CsvTable time_csv(
        results, dir, "time_to_tolerance.csv",
        {"pile", "spheres", "contacts", "solver", "tolerance", "seconds", "iterations"}, 6);

    const std::vector<SolverSpec> specs = solver_specs(full);
    const bool have_ipm =
        std::any_of(specs.begin(), specs.end(), [](const SolverSpec& s) { return is_ipm(s.name); });
    bool ipm_faster_at_1e2 = have_ipm;
    std::string ipm_note;
    double largest_ratio = std::numeric_limits<double>::quiet_NaN();
    // PGJ that has not reached 5e-4 when its run ends (its cap, or the budget of ratio_budget)
    // leaves only a lower bound of the ratio: the run measured its own budget, not the ratio.
    Measured ratio_is = Measured::exact;
    std::string ratio_note = "no IPM solver in this build";
    bool larger_piles_stall = true;
    std::string stall_note;

    // All piles are settled (or read from the cache) before any solver runs, so that a first
    // run can be stopped once the cache is filled.
    std::vector<Pile> settled;
    for (const PileSpec& spec : piles) {
      settled.push_back(settled_pile(spec.spheres));
      std::cout << spec.spheres << " spheres settled in " << settled.back().settle_seconds << " s"
                << (settled.back().from_cache ? " (cached)" : "") << std::endl;
    }
    for (std::size_t p = 0; p < piles.size(); ++p) {
      const PileSpec& spec = piles[p];
      const std::string tag = "pile " + std::to_string(p + 1);
      const Pile& pile = settled[p];
      MeasuredProblem measured = measured_problem(pile);
      const int contacts = measured.problem.contact_count();
      std::cout << tag << ": " << spec.spheres << " spheres, " << contacts << " contacts"
                << (pile.from_cache ? " (settled pile from the cache)" : "") << std::endl;
      pile_csv.row(p + 1, spec.spheres, pile.side, pile.settle_steps, pile.settle_seconds,
                   pile.final_max_speed, pile.from_cache, contacts, 3 * contacts,
                   published[p].spheres, published[p].published_contacts);
      results.check("contacts_per_sphere_" + std::to_string(p + 1),
                    static_cast<double>(contacts) / spec.spheres,
                    std::to_string(contacts) + " potential contacts for " +
                        std::to_string(spec.spheres) + " spheres");
      results.measure(tag + ": spheres", spec.spheres, "");
      results.measure(tag + ": potential contacts", contacts, "",
                      "published " +
                          std::to_string(static_cast<int>(published[p].published_contacts)) +
                          " for " + std::to_string(published[p].spheres) + " spheres");
      results.measure(tag + ": settling wall time", pile.settle_seconds, "s",
                      pile.from_cache ? "measured when the cached pile was built"
                                      : std::to_string(pile.settle_steps) + " SHAKE steps of 2 ms");
      results.measure(tag + ": largest speed after settling", pile.final_max_speed, "m/s");

      std::vector<SolverRun> runs;
      const auto report = [&](SolverRun& run) {
        // Time to each tolerance, read off the history (seconds_at: even per iteration for
        // PGJ, PGS and APGD, Krylov-weighted per Newton step for the IPM); separate IPM runs
        // per tolerance would be exact but cost three more solves each, beyond ctest's budget.
        for (const double tol : kTolerances) {
          const std::optional<double> t = run.time_to(tol);
          run.time_to_tolerance.push_back(t ? *t : std::numeric_limits<double>::quiet_NaN());
        }
        const std::vector<double>& h = run.stats.merit_history;
        // Every iteration up to 100, then about 400 points per run, log-spaced enough for
        // the figure.
        const int stride = std::max(1, static_cast<int>(h.size()) / 400);
        for (std::size_t k = 0; k < h.size(); ++k)
          if (k < 100 || k % stride == 0 || k + 1 == h.size())
            curve_csv.row(p + 1, spec.spheres, contacts, run.label, run.iteration_of(k),
                          run.seconds_at(k), h[k]);
        for (std::size_t k = 0; k < kTolerances.size(); ++k) {
          const double t = run.time_to_tolerance[k];
          time_csv.row(p + 1, spec.spheres, contacts, run.label, kTolerances[k], t,
                       run.stats.iterations);
          results.measure(tag + ": " + run.label + " time to " + measure_name(run) + " " +
                              std::to_string(kTolerances[k]).substr(0, 6),
                          t, "s", std::isnan(t) ? "not reached" : "");
        }
        // The paper's Table 1 tolerances: wall time and Krylov iterations of the IPM to reach
        // its error 1e-4, 1e-5, 1e-6 (read off the run; Krylov iterations are exact).
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
        measured.problem.delassus->apply(run.impulses, u);
        u += measured.problem.q;
        results.measure(tag + ": " + run.label + " final error(gamma, u)",
                        kleinert_error(measured.problem, run.impulses, u), "",
                        "Kleinert's error of the final iterate, beside the suite's merit");
        if (run.ipm)
          results.measure(tag + ": " + run.label + " Krylov iterations",
                          run.stats.krylov_iterations, "",
                          std::to_string(run.stats.iterations) + " Newton steps");
        results.measure(tag + ": " + run.label + " final merit", run.stats.merit, "",
                        std::to_string(run.stats.iterations) + " iterations, " +
                            std::to_string(run.stats.wall_seconds) + " s, " +
                            to_string(run.stats.termination));
        std::cout << "  " << run.label << ": merit " << run.stats.merit << " after "
                  << run.stats.iterations << " iterations, " << run.stats.wall_seconds << " s"
                  << std::endl;
      };
      for (const SolverSpec& s : specs) {
        SolverRun run;
        run.label = s.label;
        run.ipm = is_ipm(s.name);
        run.impulses = VecX::Zero(3 * contacts);
        run.stats = make_spec_solver(s)->solve(measured.problem, run.impulses);
        report(run);
        runs.push_back(std::move(run));
      }
      // PGJ on the paper's error(gamma, u), the measure of Kleinert Fig. 6-7.
      for (const SolverSpec& s : specs) {
        if (s.label != "PGJ") continue;
        const SolverStats& merit_run =
            std::find_if(runs.begin(), runs.end(), [](const SolverRun& r) {
              return r.label == "PGJ";
            })->stats;
        const double per_iteration = merit_run.wall_seconds / std::max(1, merit_run.iterations);
        const int budget =
            full && p + 1 == piles.size()
                ? ratio_budget(
                      runs, per_iteration,
                      reference.get("pgj_over_ipm_time_at_5e-4_largest_published").published)
                : 0;
        if (budget > 0)
          std::cout << "  PGJ [error] may run " << budget << " iterations (until 5e-4)"
                    << std::endl;
        SolverRun run =
            paper_error_run(measured.problem, s, per_iteration, budget, kTolerances.back());
        report(run);
        runs.push_back(std::move(run));
      }

      const auto find = [&](const std::string& label) -> const SolverRun& {
        for (const SolverRun& r : runs)
          if (r.label == label) return r;
        throw InputError("no run " + label);
      };
      const SolverRun& pgj = find("PGJ");
      // The paper's claims are on its error(gamma, u) (Fig. 6-7): PGJ and the IPM compared there.
      const SolverRun& pgj_error = find("PGJ" + kErrorSuffix);
      // PGJ stalls (Kleinert Sec. 5: "its convergence rate stalled almost completely before a
      // reasonably small error was achieved"): above 5e-4 at its cap, and the second half of its
      // iterations reduced the merit by less than a factor 2.
      if (p >= 1) {
        const std::vector<double>& h = pgj.stats.merit_history;
        const double half = h[h.size() / 2], last = h.back();
        const bool stalled = last > kTolerances.back() && last > 0.5 * half;
        larger_piles_stall = larger_piles_stall && stalled;
        stall_note += tag + ": PGJ merit " + std::to_string(half) + " at iteration " +
                      std::to_string(h.size() / 2) + ", " + std::to_string(last) + " at " +
                      std::to_string(h.size() - 1) + "; ";
      }
      // The IPM against PGJ at 1e-2 (Fig. 7b) and, on the largest pile, at 5e-4.
      const auto seconds = [](const SolverRun& r, std::size_t k) -> std::optional<double> {
        const double t = r.time_to_tolerance[k];
        return std::isnan(t) ? std::nullopt : std::optional<double>(t);
      };
      for (const SolverRun& r : runs) {
        if (r.label != "IPM" + kErrorSuffix) continue;  // the paper's IPM-MF
        const std::optional<double> ipm = seconds(r, 1), jacobi = seconds(pgj_error, 1);  // 1e-2
        const bool faster = ipm && (!jacobi || *ipm < *jacobi);
        ipm_faster_at_1e2 = ipm_faster_at_1e2 && faster;
        ipm_note += tag + ": IPM " + (ipm ? std::to_string(*ipm) : std::string("never")) +
                    " s, PGJ " + (jacobi ? std::to_string(*jacobi) : std::string("never")) + " s; ";
        if (p + 1 == piles.size()) {
          const std::optional<double> ipm_tight = seconds(r, 2), pgj_tight = seconds(pgj_error, 2);
          if (ipm_tight) {
            // Not reached by PGJ: its whole run is a lower bound of the time it would need.
            largest_ratio = (pgj_tight ? *pgj_tight : pgj_error.stats.wall_seconds) / *ipm_tight;
            ratio_is = pgj_tight ? Measured::exact : Measured::lower_bound;
            ratio_note =
                "on error(gamma, u): PGJ " +
                (pgj_tight ? std::to_string(*pgj_tight) + " s"
                           : "not reached in " + std::to_string(pgj_error.stats.wall_seconds) +
                                 " s (a lower bound)") +
                ", IPM " + std::to_string(*ipm_tight) + " s";
          } else {
            ratio_note = "the IPM did not reach 5e-4";
          }
        }
      }

      // FCLIB export of the pile's CCP with the most accurate solution found.
      const SolverRun* best = &runs.front();
      for (const SolverRun& r : runs)
        if (r.stats.merit < best->stats.merit) best = &r;
      StepProblem view;
      view.world = &measured.world;
      view.contacts = &measured.contacts;
      view.step = 1;
      view.time_step = kMeasureStep;
      view.rows_per_contact = 3;
      view.friction_model = FrictionModel::convex_relaxation;
      view.free_velocity = &measured.free_velocity;
      view.normal_offset = &measured.normal_offset;
      view.friction = &measured.mu;
      view.impulses = &best->impulses;
      view.solver_stats = &best->stats;
      const fclib::StepExport files = fclib::export_step(
          view, "Kleinert, Simeon & Dressler pile test problem " + std::to_string(p + 1) + " (" +
                    std::to_string(spec.spheres) + " non-rotating spheres), one SHAKE step");
      const std::string stem = "pile_" + std::to_string(spec.spheres);
      fclib::write_file(dir / (stem + "_local.hdf5"), files.local);
      fclib::write_file(dir / (stem + "_global.hdf5"), files.global);
      results.add_file(stem + "_local.hdf5", "raw");
      results.add_file(stem + "_global.hdf5", "raw");
    }

    results.check("pgj_stalls_on_larger_piles", larger_piles_stall, stall_note);
    results.check("ipm_faster_than_pgj_at_1e-2", ipm_faster_at_1e2,
                  have_ipm ? ipm_note : "no IPM solver in this build");
    // Our bound (100, the entry's reason) and the paper's own "more than 200 times" (Kleinert
    // Sec. 5, Fig. 7c), each judged from the same ratio or bound.
    const auto check_ratio = [&](const std::string& name) {
      if (std::isnan(largest_ratio))
        results.not_evaluated(name, ratio_note);
      else
        results.check_bound(name, largest_ratio, ratio_is, ratio_note);
    };
    check_ratio(ratio_check(full));
    if (full) check_ratio("pgj_over_ipm_time_at_5e-4_largest_published");
    results.measure("OpenMP threads", omp_get_max_threads(), "");
    for (const char* figure : {"error_vs_time.png", "time_to_tolerance.png"})
      results.add_file(figure, "figure");
    results.write(dir);
    return results.exit_code();
  } catch (const std::exception& e) {
    std::cerr << kExperiment << ": error: " << e.what() << "\n";
    return 2;
  }
}
