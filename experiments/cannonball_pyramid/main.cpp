// Cannonball pyramid, Olsen & Kamrin Sec. 8.2-8.3: a square-based close-packed pyramid of spheres
// on a fixed base layer, dropped and settled. Classic CD (APGD, PGS), compatible CD after each, and
// penalty DEM are compared through the floor reaction under the base (Table 1). Scene choices are
// in README.md.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "moreau/core/error.hpp"
#include "moreau/dem/dem_stepper.hpp"
#include "moreau/harness/results.hpp"
#include "moreau/harness/table.hpp"
#include "moreau/integrator/semi_implicit_euler.hpp"
#include "moreau/registry/solver_registry.hpp"

namespace {

using namespace moreau;
using Clock = std::chrono::steady_clock;

constexpr double kRadius = 1.25e-3;         // 2.5 mm diameter, Olsen & Kamrin Sec. 8.2
constexpr double kDensity = 2000.0;         // kg/m^3
constexpr double kModulus = 50e9;           // Pa, E0 (glass beads)
constexpr double kPoisson = 0.22;           // soda-lime glass; not given in the paper
constexpr double kGravity = 9.81;           // m/s^2
constexpr double kCdTimeStep = 1e-3;        // s, Olsen & Kamrin Sec. 8.2
constexpr double kPublishedDemStep = 5e-7;  // s, Olsen & Kamrin Sec. 8.2

enum class Variant { uniform_hookean, multi_species_hookean, uniform_hertzian };
const char* variant_name(Variant v) {
  switch (v) {
    case Variant::uniform_hookean:
      return "uniform Hookean";
    case Variant::multi_species_hookean:
      return "multi-species Hookean";
    case Variant::uniform_hertzian:
      return "uniform Hertzian";
  }
  return "";
}
const char* variant_key(Variant v) {
  switch (v) {
    case Variant::uniform_hookean:
      return "hookean";
    case Variant::multi_species_hookean:
      return "multispecies";
    case Variant::uniform_hertzian:
      return "hertzian";
  }
  return "";
}

// Layer L (0 = fixed base) holds (n - L)^2 spheres in the hollows of the layer below, a
// centre distance d/sqrt(2) higher; every layer starts 5% of a radius further up than at rest
// (the spheres are "separated vertically from their neighbors by 5% of a radius").
World pyramid_world(int base, Variant variant, std::vector<int>& base_bodies) {
  World world;
  world.dimension = Dimension::three;
  world.gravity = Vec3(0.0, -kGravity, 0.0);
  world.materials.clear();
  // Relative stiffness k~ = E / E0; pair values follow in series (compatible_cd.hpp).
  world.add_material({"E0", kDensity, kModulus, kPoisson, 1.0, 0.0});
  world.add_material({"E1 = 5 E0", kDensity, 5.0 * kModulus, kPoisson, 5.0, 0.0});
  const double d = 2.0 * kRadius;
  const double mass = kDensity * 4.0 / 3.0 * M_PI * std::pow(kRadius, 3);
  base_bodies.clear();
  int index = 0;
  for (int layer = 0; layer < base; ++layer) {
    const int n = base - layer;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j, ++index) {
        RigidBody sphere;
        char name[48];
        std::snprintf(name, sizeof name, "L%d_%d_%d", layer, i, j);
        sphere.name = name;
        sphere.motion = layer == 0 ? Motion::fixed : Motion::dynamic;
        sphere.position =
            Vec3((i + 0.5 * layer) * d, kRadius + layer * (d / std::sqrt(2.0) + 0.05 * kRadius),
                 (j + 0.5 * layer) * d);
        sphere.mass = mass;
        sphere.inertia_body = Mat3::Identity() * 0.4 * mass * kRadius * kRadius;
        sphere.shape.geometry = Sphere{kRadius};
        // Olsen & Kamrin Sec. 8.2.2: even global index E0, odd E1 = 5 E0.
        sphere.material = (variant == Variant::multi_species_hookean && index % 2 == 1) ? 1 : 0;
        world.add_body(sphere);
        if (layer == 0) base_bodies.push_back(index);
      }
  }
  return world;
}

// A contact force as the forces on body b (on a: the opposite).
struct ForceRecord {
  int body_a, body_b;
  Vec3 point;
  Vec3 force_on_b;
};

struct MethodResult {
  std::string name;
  std::vector<ForceRecord> forces;
  VecX floor;  // transmitted vertical load per base sphere (same order as base_bodies)
  double seconds = 0.0;
  std::string note;
};

VecX floor_reaction(const std::vector<ForceRecord>& forces, const World& world,
                    const std::vector<int>& base_bodies) {
  std::map<int, int> slot;
  for (std::size_t k = 0; k < base_bodies.size(); ++k) slot[base_bodies[k]] = static_cast<int>(k);
  VecX floor = VecX::Zero(static_cast<Eigen::Index>(base_bodies.size()));
  for (const ForceRecord& f : forces) {
    // Downward load a dynamic sphere puts on a fixed base sphere.
    if (slot.count(f.body_b) && world.bodies[f.body_a].is_dynamic())
      floor(slot[f.body_b]) -= f.force_on_b.y();
    if (slot.count(f.body_a) && world.bodies[f.body_b].is_dynamic())
      floor(slot[f.body_a]) += f.force_on_b.y();
  }
  return floor;
}

double relative_error(const VecX& x, const VecX& reference) {
  return (x - reference).norm() / reference.norm();
}

double max_force(const std::vector<ForceRecord>& forces) {
  double largest = 0.0;
  for (const ForceRecord& f : forces) largest = std::max(largest, f.force_on_b.norm());
  return largest;
}

// Mirror asymmetry of the floor map about the pyramid's x mid-plane: zero for a symmetric
// force distribution.
double floor_asymmetry(const VecX& floor, int base) {
  double diff = 0.0;
  for (int i = 0; i < base; ++i)
    for (int j = 0; j < base; ++j)
      diff += std::pow(floor(i * base + j) - floor((base - 1 - i) * base + j), 2);
  return std::sqrt(diff) / floor.norm();
}

// How classic CD starts each step's solve and in which order PGS visits the contacts. Olsen &
// Kamrin Sec. 8.2 says nothing of warm starting, and its Fig. 9 ("qualitatively similar" APGD
// network, 14% over-prediction) matches the cold start, so every step starts from r = 0 by default;
// the warm-started runs are a separate, documented result (README.md). Natural order: the collision
// detector's list, sorted by body pair (a, b), i.e. a lexicographic sweep from the base up.
struct ClassicSetting {
  bool warm_start = false;
  ContactOrder order = ContactOrder::natural;
  unsigned seed = 1;  // ContactOrder::random: one fixed shuffle (std::mt19937 seeded with it)
};

struct CdRun {
  MethodResult classic;
  MethodResult compatible;
  NoTensionTrussStats truss;
  // The same last step with the augmented Lagrangian truss solver of Olsen & Kamrin Sec. 7 instead
  // of the interior point method (from a copy of the world before that step).
  NoTensionTrussStats augmented_lagrangian;
  double solver_difference = 0.0;  // ||f_ALM - f_IPM|| / ||f_IPM||
  long iterations = 0;
  double final_speed = 0.0;
  double last_step_solver_seconds = 0.0;  // the classic solve of the step compatible CD follows
};

std::vector<ForceRecord> cd_forces(const StepReport& report, const VecX& impulses) {
  std::vector<ForceRecord> out;
  for (std::size_t i = 0; i < report.contacts.size(); ++i) {
    const double f = impulses(static_cast<Eigen::Index>(i)) / kCdTimeStep;
    if (f != 0.0)
      out.push_back({report.contacts[i].body_a, report.contacts[i].body_b, report.contacts[i].point,
                     f * report.contacts[i].normal});
  }
  return out;
}

CdRun run_cd(int base, Variant variant, const std::string& solver, long steps, double tolerance,
             double truss_tolerance, const std::vector<int>& base_bodies,
             bool compare_truss_solvers = false, const ClassicSetting& setting = {}) {
  std::vector<int> ignored;
  World world = pyramid_world(base, variant, ignored);
  SemiImplicitEulerOptions options;
  options.time_step = kCdTimeStep;
  options.frictional = false;
  options.collision.margin = 0.1 * kRadius;  // nearest neighbours only (next ones are 0.41 d away)
  SolverOptions common;
  common.tolerance = tolerance;
  common.max_iterations = 200000;
  common.record_history = false;
  common.warm_start = setting.warm_start;
  AnySolverOptions solver_options = default_solver_options(solver, common);
  // The visiting order is PGS's (APGD has none).
  if (auto* pgs = std::get_if<PgsOptions>(&solver_options)) {
    pgs->order = setting.order;
    pgs->seed = setting.seed;
  }
  SemiImplicitEulerStepper stepper(world, options, make_solver(solver, solver_options));
  CdRun run;
  const auto start = Clock::now();
  for (long s = 0; s + 1 < steps; ++s) run.iterations += stepper.step().solver_stats.iterations;
  const double classic_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  World before_last_step = world;
  // Forces are read at the last step, with the compatible post-processing switched on there.
  CompatibleOptions compatible;
  compatible.enabled = true;
  compatible.law =
      variant == Variant::uniform_hertzian ? ContactLaw::hertzian : ContactLaw::hookean;
  compatible.truss.equilibrium_tolerance = truss_tolerance;
  compatible.truss.optimality_tolerance = truss_tolerance;
  // The interior point method: 8 to 2,400 times faster than the augmented Lagrangian at the
  // quick scale and the same forces to 4e-10 (compared below on every variant).
  compatible.truss.method = TrussMethod::interior_point;
  stepper.set_compatible(compatible);
  const StepReport& report = stepper.step();
  run.iterations += report.solver_stats.iterations;
  run.last_step_solver_seconds = report.solver_stats.wall_seconds;
  if (!report.solver_stats.converged)
    std::cerr << solver << ": last step stopped (" << to_string(report.solver_stats.termination)
              << ") at merit " << report.solver_stats.merit << "\n";
  run.truss = report.compatible_stats;
  run.classic.name = solver == "apgd" ? "APGD" : "PGS";
  run.classic.forces = cd_forces(report, report.impulses);
  run.classic.floor = floor_reaction(run.classic.forces, world, base_bodies);
  run.classic.seconds = classic_seconds;
  run.compatible.name = "compatible CD after " + run.classic.name;
  run.compatible.forces = cd_forces(report, report.compatible_impulses);
  run.compatible.floor = floor_reaction(run.compatible.forces, world, base_bodies);
  run.compatible.seconds = report.compatible_stats.wall_seconds;
  if (compare_truss_solvers) {
    SemiImplicitEulerStepper probe(before_last_step, options, make_solver(solver, solver_options));
    compatible.truss.method = TrussMethod::augmented_lagrangian;
    probe.set_compatible(compatible);
    const StepReport& alm = probe.step();
    run.augmented_lagrangian = alm.compatible_stats;
    run.solver_difference = alm.compatible_impulses.size() == report.compatible_impulses.size()
                                ? (alm.compatible_impulses - report.compatible_impulses).norm() /
                                      report.compatible_impulses.norm()
                                : std::numeric_limits<double>::infinity();
  }
  for (const RigidBody& b : world.bodies)
    run.final_speed = std::max(run.final_speed, b.linear_velocity.norm());
  return run;
}

struct DemRun {
  MethodResult result;
  double time_step = 0.0;
  double stable_estimate = 0.0;
  long steps = 0;
  double final_speed = 0.0;
  double steps_per_second = 0.0;
};

DemRun run_dem(int base, Variant variant, const std::vector<int>& base_bodies) {
  std::vector<int> ignored;
  World world = pyramid_world(base, variant, ignored);
  DemOptions options;
  options.law.law = variant == Variant::uniform_hertzian ? NormalLaw::hertzian : NormalLaw::hookean;
  options.law.damping_ratio = 1.0;  // gamma = 2 sqrt(k m), e_n = 0
  options.law.tangential = false;   // frictionless, as the CD runs
  DemRun run;
  options.time_step = 1.0;
  run.stable_estimate = estimate_stable_time_step(world, options);
  // The published 5e-7 s where it is stable for our stiffness; otherwise 90% of the estimate.
  options.time_step = std::min(kPublishedDemStep, 0.9 * run.stable_estimate);
  run.time_step = options.time_step;
  DemStepper dem(world, options);
  // Settled when the floor reaction has stopped changing: checked every 1e-3 s of simulated
  // time, to 1e-10 relative, after the top layer has had time to land.
  const long check = static_cast<long>(std::ceil(1e-3 / options.time_step));
  VecX previous;
  const auto start = Clock::now();
  for (;;) {
    for (long s = 0; s < check; ++s) dem.step();
    std::vector<ForceRecord> forces;
    for (const DemContact& c : dem.contacts())
      forces.push_back({c.body_a, c.body_b, c.point, c.elastic_force * c.normal});
    const VecX floor = floor_reaction(forces, world, base_bodies);
    const double change = previous.size() == floor.size() ? relative_error(floor, previous) : 1.0;
    const bool settled = change < 1e-10;
    previous = floor;
    // A progress line every 5 ms of simulated time: the published-scale run takes minutes.
    if (dem.steps_taken() % (5 * check) == 0)
      std::cerr << "   DEM t = " << world.time << " s, floor change " << change << "\n";
    if ((settled && world.time > 0.02) || world.time > 1.0) {
      run.result.forces = std::move(forces);
      run.result.floor = floor;
      break;
    }
  }
  run.result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  run.result.name = "DEM";
  run.steps = dem.steps_taken();
  run.steps_per_second = run.steps / run.result.seconds;
  run.final_speed = dem.max_speed();
  return run;
}

void write_forces(CsvTable& out, const std::string& variant, const MethodResult& m,
                  const World& world) {
  for (const ForceRecord& f : m.forces) {
    const Vec3& a = world.bodies[f.body_a].position;
    const Vec3& b = world.bodies[f.body_b].position;
    out.row(variant, m.name, f.body_a, f.body_b, a.x(), a.y(), a.z(), b.x(), b.y(), b.z(),
            f.force_on_b.norm());
  }
}

// ---- Fidelity analysis of Table 1: readings, warm start, PGS orders ----

double sphere_weight() { return kDensity * 4.0 / 3.0 * M_PI * std::pow(kRadius, 3) * kGravity; }

// The readings of "the reaction force distribution supporting the base of the pyramid" (Olsen &
// Kamrin Sec. 8.3) that the paper leaves open: the vertical load or the full force vector, with or
// without the base spheres' own weight, per base sphere or per contact between the base and the
// first layer. The suite's checked reading is the first one.
struct FloorReading {
  const char* name;
  bool full_vector;
  bool with_base_weight;
  bool per_contact;
};
constexpr FloorReading kFloorReadings[] = {
    {"vertical load per base sphere, without the base weight (checked)", false, false, false},
    {"vertical load per base sphere, with the base weight", false, true, false},
    {"force vector per base sphere, without the base weight", true, false, false},
    {"force vector per base sphere, with the base weight", true, true, false},
    {"vertical load per base-layer contact", false, false, true},
    {"force vector per base-layer contact", true, false, true},
};

// Force on each base sphere from the dynamic spheres, keyed by (base body, dynamic body) for a
// contact and by (base body, -1) for the sum over its contacts; the weight entry (if asked) is
// the floor carrying the base sphere too.
std::map<std::pair<int, int>, Vec3> floor_forces(const std::vector<ForceRecord>& forces,
                                                 const World& world,
                                                 const std::vector<int>& base_bodies,
                                                 const FloorReading& reading) {
  std::map<std::pair<int, int>, Vec3> out;
  for (int b : base_bodies)
    if (!reading.per_contact)
      out[{b, -1}] = reading.with_base_weight ? Vec3(0.0, sphere_weight(), 0.0) : Vec3::Zero();
  std::map<int, bool> is_base;
  for (int b : base_bodies) is_base[b] = true;
  for (const ForceRecord& f : forces) {
    // Reaction of the base on the pile (upwards for a load): minus the force on the base body.
    Vec3 reaction;
    int base_body, other;
    if (is_base.count(f.body_b) && world.bodies[f.body_a].is_dynamic()) {
      reaction = -f.force_on_b, base_body = f.body_b, other = f.body_a;
    } else if (is_base.count(f.body_a) && world.bodies[f.body_b].is_dynamic()) {
      reaction = f.force_on_b, base_body = f.body_a, other = f.body_b;
    } else {
      continue;
    }
    // emplace: a default-constructed Eigen vector is uninitialized.
    out.emplace(std::make_pair(base_body, reading.per_contact ? other : -1), Vec3::Zero())
        .first->second += reaction;
  }
  return out;
}

double reading_error(const std::vector<ForceRecord>& method, const std::vector<ForceRecord>& dem,
                     const World& world, const std::vector<int>& base_bodies,
                     const FloorReading& reading) {
  auto x = floor_forces(method, world, base_bodies, reading);
  auto ref = floor_forces(dem, world, base_bodies, reading);
  for (const auto& [key, value] : ref) x.emplace(key, Vec3::Zero());  // union of contacts
  double diff = 0.0, norm = 0.0;
  for (const auto& [key, value] : x) {
    const auto it = ref.find(key);
    const Vec3 r = it == ref.end() ? Vec3::Zero() : it->second;
    const Vec3 d = value - r;
    diff += reading.full_vector ? d.squaredNorm() : d.y() * d.y();
    norm += reading.full_vector ? r.squaredNorm() : r.y() * r.y();
  }
  return std::sqrt(diff / norm);
}

// Load locked into contacts between spheres of the same layer (the in-plane contacts), in
// sphere weights: the self-stress warm-started classic CD keeps from the impacts (README.md).
struct InPlaneLoad {
  int contacts = 0;   // in-plane contacts carrying a nonzero force
  double load = 0.0;  // sum of their forces / one sphere's weight
};
InPlaneLoad in_plane_load(const std::vector<ForceRecord>& forces, const World& reference_world) {
  InPlaneLoad out;
  for (const ForceRecord& f : forces) {
    const double dy = reference_world.bodies[f.body_a].position.y() -
                      reference_world.bodies[f.body_b].position.y();
    if (std::abs(dy) > 0.01 * kRadius || f.force_on_b.norm() == 0.0) continue;
    ++out.contacts;
    out.load += f.force_on_b.norm() / sphere_weight();
  }
  return out;
}

// One classic-CD result as the analysis reports it (floor error in every reading, largest force,
// symmetry, in-plane load), written to readings.csv and results.json.
struct ClassicSummary {
  std::string name;
  double floor_error = 0.0;  // the checked reading
  double max_force_excess = 0.0;
  double asymmetry = 0.0;
  InPlaneLoad in_plane;
  std::vector<double> readings;  // floor error in each of kFloorReadings
};

ClassicSummary summarize(const std::string& label, const std::string& name,
                         const MethodResult& classic, const MethodResult& dem,
                         const World& reference_world, const std::vector<int>& base_bodies,
                         int base, CsvTable& readings_csv) {
  ClassicSummary s;
  s.name = name;
  s.floor_error = relative_error(classic.floor, dem.floor);
  s.max_force_excess = max_force(classic.forces) / max_force(dem.forces) - 1.0;
  s.asymmetry = floor_asymmetry(classic.floor, base);
  s.in_plane = in_plane_load(classic.forces, reference_world);
  for (const FloorReading& reading : kFloorReadings) {
    s.readings.push_back(
        reading_error(classic.forces, dem.forces, reference_world, base_bodies, reading));
    readings_csv.row(label, name, reading.name, s.readings.back());
  }
  return s;
}

void measure_summary(ExperimentResults& results, const std::string& label, const ClassicSummary& s,
                     const std::string& note) {
  results.measure(label + ": " + s.name + " floor error", s.floor_error, "", note);
  results.measure(label + ": " + s.name + " largest force / DEM's - 1", s.max_force_excess, "",
                  note);
  results.measure(label + ": " + s.name + " floor asymmetry", s.asymmetry, "", note);
  results.measure(label + ": " + s.name + " in-plane contacts carrying force", s.in_plane.contacts,
                  "", note);
  results.measure(label + ": " + s.name + " in-plane load", s.in_plane.load, "sphere weights",
                  note);
  // The readings of the floor reaction (README.md) for the uniform Hookean variant; all are in
  // readings.csv.
  if (label != variant_name(Variant::uniform_hookean)) return;
  for (std::size_t k = 1; k < s.readings.size(); ++k)
    results.measure(label + ": " + s.name + " floor error, " + kFloorReadings[k].name,
                    s.readings[k], "", note);
}

// The second result: classic CD warm-started through the drop (each step's solve starts from the
// previous step's impulses). The impacts lock load into the in-plane contacts, which inverts the
// floor map; the forces go to contacts.csv for the in-plane figure.
std::vector<ClassicSummary> warm_started_rows(int base, Variant variant, const MethodResult& dem,
                                              const World& reference_world,
                                              const std::vector<int>& base_bodies, long steps,
                                              double tolerance, CsvTable& readings_csv,
                                              CsvTable& contact_csv) {
  std::vector<ClassicSummary> out;
  ClassicSetting warm;
  warm.warm_start = true;
  for (const char* solver : {"apgd", "pgs"}) {
    CdRun run =
        run_cd(base, variant, solver, steps, tolerance, tolerance, base_bodies, false, warm);
    run.classic.name += " warm-started";
    out.push_back(summarize(variant_name(variant), run.classic.name, run.classic, dem,
                            reference_world, base_bodies, base, readings_csv));
    write_forces(contact_csv, variant_name(variant), run.classic, reference_world);
  }
  return out;
}

// PGS cold-started in several fixed random visiting orders: the spread that the paper's
// "sensitivity on contact ordering" (Sec. 8.2.1) implies, since it does not state its order.
std::vector<ClassicSummary> pgs_random_orders(int base, Variant variant, int orders,
                                              const MethodResult& dem, const World& reference_world,
                                              const std::vector<int>& base_bodies, long steps,
                                              double tolerance, CsvTable& readings_csv) {
  std::vector<ClassicSummary> out;
  for (int k = 1; k <= orders; ++k) {
    ClassicSetting setting;
    setting.order = ContactOrder::random;
    setting.seed = static_cast<unsigned>(k);
    const CdRun run =
        run_cd(base, variant, "pgs", steps, tolerance, tolerance, base_bodies, false, setting);
    out.push_back(summarize(variant_name(variant), "PGS random order " + std::to_string(k),
                            run.classic, dem, reference_world, base_bodies, base, readings_csv));
  }
  return out;
}

// Median of one field over the random orders.
double median_of(const std::vector<ClassicSummary>& rows, double ClassicSummary::*field) {
  std::vector<double> v;
  for (const ClassicSummary& s : rows) v.push_back(s.*field);
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// CHOLMOD timings of the interior point truss solve: per factorization of the
// normal equations and per triangular solve, and the symbolic analysis.
void measure_truss_timings(ExperimentResults& results, const std::string& label,
                           const std::string& name, const NoTensionTrussStats& truss) {
  const std::string at = label + ": compatible CD after " + name + ", ";
  results.measure(at + "time per CHOLMOD factorization",
                  truss.factorization_seconds / std::max(1, truss.factorizations), "s");
  results.measure(at + "time per CHOLMOD solve", truss.solve_seconds / std::max(1, truss.solves),
                  "s");
  results.measure(at + "CHOLMOD symbolic analysis", truss.analysis_seconds, "s");
  results.measure(at + "forming the normal matrices", truss.normal_matrix_seconds, "s");
}

// Classic CD at larger bases than the quick scale, uniform Hookean, against compatible CD after
// APGD on the same run as the reference (it matches the DEM to ~1e-6 at every scale measured
// here, see the checks), which avoids the DEM runs that dominate the cost. Written to
// base_sweep.csv: floor error in every reading and the largest force against the reference's.
void base_sweep(ExperimentResults& results, const std::vector<int>& bases, long steps,
                double tolerance, CsvTable& csv) {
  for (const int b : bases) {
    std::vector<int> base_bodies;
    const World reference_world = pyramid_world(b, Variant::uniform_hookean, base_bodies);
    const CdRun apgd =
        run_cd(b, Variant::uniform_hookean, "apgd", steps, tolerance, tolerance, base_bodies);
    const MethodResult& reference = apgd.compatible;
    std::vector<std::pair<std::string, MethodResult>> rows{{"APGD", apgd.classic}};
    ClassicSetting setting;
    rows.emplace_back("PGS", run_cd(b, Variant::uniform_hookean, "pgs", steps, tolerance, tolerance,
                                    base_bodies, false, setting)
                                 .classic);
    setting.order = ContactOrder::random;
    for (unsigned seed = 1; seed <= 3; ++seed) {
      setting.seed = seed;
      rows.emplace_back("PGS random order " + std::to_string(seed),
                        run_cd(b, Variant::uniform_hookean, "pgs", steps, tolerance, tolerance,
                               base_bodies, false, setting)
                            .classic);
    }
    setting = ClassicSetting{};
    setting.warm_start = true;
    for (const char* solver : {"apgd", "pgs"})
      rows.emplace_back(
          std::string(solver == std::string("apgd") ? "APGD" : "PGS") + " warm-started",
          run_cd(b, Variant::uniform_hookean, solver, steps, tolerance, tolerance, base_bodies,
                 false, setting)
              .classic);
    const std::string at = "base " + std::to_string(b) + ", uniform Hookean, ";
    const std::string note = "reference: compatible CD after cold APGD (not the DEM)";
    for (const auto& [name, m] : rows) {
      const double excess = max_force(m.forces) / max_force(reference.forces) - 1.0;
      const InPlaneLoad in_plane = in_plane_load(m.forces, reference_world);
      for (const FloorReading& reading : kFloorReadings)
        csv.row(b, name, reading.name,
                reading_error(m.forces, reference.forces, reference_world, base_bodies, reading),
                excess, in_plane.load);
      results.measure(at + name + ": floor error", relative_error(m.floor, reference.floor), "",
                      note);
      results.measure(at + name + ": largest force / reference's - 1", excess, "", note);
      results.measure(at + name + ": in-plane load", in_plane.load, "sphere weights", note);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const ExperimentArguments args = ExperimentArguments::parse(argc, argv, "cannonball_pyramid");
    ExperimentResults results("cannonball_pyramid", args.scale,
                              Reference::load(args.reference_directory));
    // Published scale: 20 spheres along the base (2,870 spheres); quick: 6 (91 spheres).
    const int base = args.full() ? 20 : 6;
    // Settling: the top layer falls ~(base - 1) * 0.05 r; 0.1 s of CD leaves every scale at rest.
    const long cd_steps = 100;
    const double cd_tolerance = 1e-10;
    const double truss_tolerance = 1e-10;
    std::vector<int> base_bodies;
    const World reference_world = pyramid_world(base, Variant::uniform_hookean, base_bodies);
    results.measure("spheres", static_cast<double>(reference_world.bodies.size()), "");
    results.measure("base edge", base, "spheres");

    const std::string& dir = args.output_directory;
    CsvTable floor_csv(results, dir, "floor.csv",
                       {"variant", "method", "base_index", "x", "z", "load"});
    CsvTable tolerance_csv(results, dir, "tolerance_error.csv", {"variant", "tolerance", "error"},
                           10);
    CsvTable readings_csv(results, dir, "readings.csv",
                          {"variant", "method", CsvTable::quoted("reading"), "error"}, 10);
    CsvTable contact_csv(
        results, dir, "contacts.csv",
        {"variant", "method", "body_a", "body_b", "ax", "ay", "az", "bx", "by", "bz", "force"}, 10);

    for (Variant variant :
         {Variant::uniform_hookean, Variant::uniform_hertzian, Variant::multi_species_hookean}) {
      const std::string key = variant_key(variant);
      const std::string label = variant_name(variant);
      const auto variant_start = Clock::now();
      std::cout << "== " << label << "\n" << std::flush;
      const DemRun dem = run_dem(base, variant, base_bodies);
      std::cout << "   DEM: " << dem.steps << " steps of " << dem.time_step << " s, "
                << dem.result.seconds << " s\n"
                << std::flush;
      // The augmented Lagrangian comparison runs at the quick scale only: at the published
      // scale, on the Hookean variant, it does not converge within 25 minutes (within its
      // default limits of 60 x 200,000 APGD iterations), where the interior point method takes
      // seconds.
      const CdRun apgd = run_cd(base, variant, "apgd", cd_steps, cd_tolerance, truss_tolerance,
                                base_bodies, !args.full());
      std::cout << "   APGD: " << apgd.classic.seconds << " s, compatible CD "
                << apgd.truss.wall_seconds << " s\n"
                << std::flush;
      const CdRun pgs =
          run_cd(base, variant, "pgs", cd_steps, cd_tolerance, truss_tolerance, base_bodies);
      std::cout << "   PGS: " << pgs.classic.seconds << " s, compatible CD "
                << pgs.truss.wall_seconds << " s\n"
                << std::flush;

      const VecX& reference = dem.result.floor;
      // Classic CD as Olsen & Kamrin's text supports it (cold start; README.md), the PGS spread
      // over random visiting orders, the warm-started second result, and every floor reading.
      const ClassicSummary apgd_cold = summarize(label, "APGD", apgd.classic, dem.result,
                                                 reference_world, base_bodies, base, readings_csv);
      const ClassicSummary pgs_natural = summarize(
          label, "PGS", pgs.classic, dem.result, reference_world, base_bodies, base, readings_csv);
      summarize(label, "compatible CD after APGD", apgd.compatible, dem.result, reference_world,
                base_bodies, base, readings_csv);
      const int orders = args.full() ? 3 : 5;
      const std::vector<ClassicSummary> random_orders =
          pgs_random_orders(base, variant, orders, dem.result, reference_world, base_bodies,
                            cd_steps, cd_tolerance, readings_csv);
      const std::vector<ClassicSummary> warm =
          warm_started_rows(base, variant, dem.result, reference_world, base_bodies, cd_steps,
                            cd_tolerance, readings_csv, contact_csv);
      const std::string cold_note = "cold start (Olsen & Kamrin's setting, README.md)";
      measure_summary(results, label, apgd_cold, cold_note);
      measure_summary(results, label, pgs_natural, cold_note + ", natural contact order");
      for (const ClassicSummary& s : random_orders)
        measure_summary(results, label, s, cold_note + ", fixed random contact order");
      for (const ClassicSummary& s : warm)
        measure_summary(results, label, s, "warm-started: the documented second result");
      const double pgs_median = median_of(random_orders, &ClassicSummary::floor_error);
      // The published range applies at the published scale (the error grows with the pyramid:
      // README.md); at every scale classic CD must stay far from DEM where compatible CD is not.
      if (args.full())
        results.check(key + "_apgd_floor_error", apgd_cold.floor_error,
                      "||F_APGD - F_DEM|| / ||F_DEM||, cold start");
      results.check(key + "_apgd_differs_from_dem", apgd_cold.floor_error,
                    "||F_APGD - F_DEM|| / ||F_DEM||, cold start");
      results.check(key + "_pgs_floor_error", pgs_median,
                    "median over " + std::to_string(orders) +
                        " random PGS contact orders of ||F_PGS - F_DEM|| / ||F_DEM||, cold start");
      results.check(key + "_pgs_natural_order_floor_error", pgs_natural.floor_error,
                    "||F_PGS - F_DEM|| / ||F_DEM||, cold start, natural contact order");
      results.check(key + "_compatible_floor_error",
                    relative_error(apgd.compatible.floor, reference),
                    "compatible CD after APGD vs DEM");
      results.check(key + "_compatible_after_pgs_floor_error",
                    relative_error(pgs.compatible.floor, reference),
                    "compatible CD after PGS vs DEM");
      results.check(key + "_compatible_pgs_equals_apgd",
                    relative_error(pgs.compatible.floor, apgd.compatible.floor),
                    "||F_compat(PGS) - F_compat(APGD)|| / ||F_compat(APGD)||");
      if (!args.full()) {
        results.check(key + "_interior_point_agrees", apgd.solver_difference,
                      "||f_ALM - f_IPM|| / ||f_IPM||: the two truss solvers on the same step");
        results.measure(label + ": compatible CD, augmented Lagrangian wall time",
                        apgd.augmented_lagrangian.wall_seconds, "s");
        results.measure(label + ": compatible CD, augmented Lagrangian APGD iterations",
                        apgd.augmented_lagrangian.inner_iterations, "");
        results.measure(label + ": compatible CD, augmented Lagrangian / interior point time",
                        apgd.augmented_lagrangian.wall_seconds / apgd.truss.wall_seconds, "");
      }
      if (variant == Variant::uniform_hookean) {
        results.check("apgd_max_force_overprediction", apgd_cold.max_force_excess,
                      "largest APGD contact force / largest DEM contact force - 1, cold start");
        if (args.full())
          results.check("apgd_max_force_published", apgd_cold.max_force_excess,
                        "largest APGD contact force / largest DEM contact force - 1, cold start");
        results.check("pgs_max_force_overprediction",
                      median_of(random_orders, &ClassicSummary::max_force_excess),
                      "median over the random PGS contact orders of largest PGS contact force / "
                      "largest DEM contact force - 1, cold start");
        results.check("pgs_breaks_symmetry", median_of(random_orders, &ClassicSummary::asymmetry),
                      "median over the random PGS contact orders of the floor map's mirror "
                      "asymmetry");
        results.check("dem_floor_symmetric", floor_asymmetry(dem.result.floor, base),
                      "mirror asymmetry of the DEM floor map");
      }
      results.check(key + "_static",
                    dem.final_speed < 1e-6 && apgd.final_speed < 1e-6 && pgs.final_speed < 1e-6,
                    "largest sphere speed below 1e-6 m/s at the end of every run");

      results.measure(label + ": DEM time step", dem.time_step, "s");
      results.measure(label + ": DEM stability estimate", dem.stable_estimate, "s");
      results.measure(label + ": DEM steps to settle", static_cast<double>(dem.steps), "");
      results.measure(label + ": DEM steps per second", dem.steps_per_second, "1/s");
      results.measure(label + ": DEM wall time", dem.result.seconds, "s");
      for (const CdRun* run : {&apgd, &pgs}) {
        results.measure(label + ": " + run->classic.name + " wall time (" +
                            std::to_string(cd_steps) + " steps)",
                        run->classic.seconds, "s");
        results.measure(label + ": " + run->classic.name + " iterations over the run",
                        static_cast<double>(run->iterations), "");
        results.measure(label + ": " + run->classic.name + " solve of the last step",
                        run->last_step_solver_seconds, "s");
        results.measure(label + ": compatible CD after " + run->classic.name + " wall time",
                        run->truss.wall_seconds, "s");
        results.measure(
            label + ": compatible CD after " + run->classic.name + " interior point Newton steps",
            run->truss.inner_iterations, "");
        results.measure(
            label + ": compatible CD after " + run->classic.name + " equilibrium residual",
            run->truss.equilibrium_residual, "");
        measure_truss_timings(results, label, run->classic.name, run->truss);
      }
      // The paper attributes its ~2e-5 to solver tolerances: the same APGD + compatible CD run
      // with both tolerances (CD merit and truss residuals) set to each value.
      for (double tolerance : {1e-2, 1e-3, 1e-4, 1e-6, 1e-8, 1e-10}) {
        const CdRun run =
            run_cd(base, variant, "apgd", cd_steps, tolerance, tolerance, base_bodies);
        const double error = relative_error(run.compatible.floor, reference);
        tolerance_csv.row(label, tolerance, error);
        char name[96];
        std::snprintf(name, sizeof name, "%s: compatible CD error at tolerance %.0e", label.c_str(),
                      tolerance);
        results.measure(name, error, "");
      }
      results.measure(
          label + ": wall time of the variant (DEM, CD, compatible CD, tolerance sweep)",
          std::chrono::duration<double>(Clock::now() - variant_start).count(), "s");
      for (const MethodResult* m :
           {&dem.result, &apgd.classic, &pgs.classic, &apgd.compatible, &pgs.compatible}) {
        for (std::size_t k = 0; k < base_bodies.size(); ++k) {
          const Vec3& p = reference_world.bodies[base_bodies[k]].position;
          floor_csv.row(label, m->name, k, p.x(), p.z(), m->floor(k));
        }
        write_forces(contact_csv, label, *m, reference_world);
      }
    }
    {
      // Bases between the quick and the published scale: 10 at the quick scale, 10
      // and 14 at the published one, where base 20 is the main run above.
      CsvTable sweep_csv(results, dir, "base_sweep.csv",
                         {"base", "method", CsvTable::quoted("reading"), "error",
                          "max_force_excess", "in_plane_load"},
                         10);
      const auto sweep_start = Clock::now();
      base_sweep(results, args.full() ? std::vector<int>{10, 14} : std::vector<int>{10}, cd_steps,
                 cd_tolerance, sweep_csv);
      results.measure("wall time of the base sweep",
                      std::chrono::duration<double>(Clock::now() - sweep_start).count(), "s");
    }
    results.write(args.output_directory);
    return results.exit_code();
  } catch (const std::exception& e) {
    std::cerr << "cannonball_pyramid: error: " << e.what() << "\n";
    return 2;
  }
}
