// Sedimentation of balls in a box, Dumont (Dumont) Sec. 4.2-4.4: (a) 4 balls, (b) 500 balls,
// (c) the descent-parameter sweep rho = alpha rho_bar on (b). The four NLGS local solvers
// (SBP, SAL, EBP, EAL) run the same scene with the theta-method (theta_stepper.hpp). The paper
// does not give the box, the density or the initial positions: see README.md for ours.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <limits>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "moreau/collision/collision_detector.hpp"
#include "moreau/harness/results.hpp"
#include "moreau/harness/table.hpp"
#include "moreau/integrator/theta_stepper.hpp"
#include "moreau/model/shape.hpp"
#include "moreau/nlgs/nlgs_solver.hpp"

namespace {

using namespace moreau;

constexpr double kGravity = 9.81;     // m/s^2
constexpr double kDensity = 2500.0;   // kg/m^3, glass beads (README.md)
constexpr double kMu = 0.3;           // ball-ball and ball-wall, Dumont Sec. 4.2-4.3
constexpr int kMaxIterations = 5000;  // Dumont Sec. 4.2-4.3
constexpr unsigned kSeed = 4;         // radii and positions (std::mt19937)
// Lattice pitch of the initial positions: larger than the largest diameter (1 mm), so that no
// two balls overlap at t = 0 (README.md).
constexpr double kPitch = 1.1e-3;  // m

const LocalMethod kMethods[] = {LocalMethod::sbp, LocalMethod::sal, LocalMethod::ebp,
                                LocalMethod::eal};

struct Ball {
  Vec3 position;
  double radius;
};

// Box of inner size side x side (x, z) with an open top: five fixed half-spaces.
World box_world(double side) {
  World world;
  world.gravity = Vec3(0.0, -kGravity, 0.0);
  world.friction = FrictionTable(kMu);
  const auto wall = [&](const std::string& name, const Vec3& normal, const Vec3& point) {
    RigidBody body;
    body.name = name;
    body.motion = Motion::fixed;
    body.position = point;
    body.shape.geometry = HalfSpace{normal};
    world.add_body(body);
  };
  wall("floor", Vec3::UnitY(), Vec3::Zero());
  wall("wall x-", Vec3::UnitX(), Vec3::Zero());
  wall("wall x+", -Vec3::UnitX(), Vec3(side, 0.0, 0.0));
  wall("wall z-", Vec3::UnitZ(), Vec3::Zero());
  wall("wall z+", -Vec3::UnitZ(), Vec3(0.0, 0.0, side));
  return world;
}

void add_balls(World& world, const std::vector<Ball>& balls) {
  for (const Ball& b : balls) {
    const MassProperties mass = mass_properties(Sphere{b.radius}, kDensity, Dimension::three);
    RigidBody body;
    body.name = "ball";
    body.shape.geometry = Sphere{b.radius};
    body.mass = mass.mass;
    body.inertia_body = mass.inertia;
    body.position = b.position;
    world.add_body(body);
  }
}

// (a): 4 balls, radii uniform in [4e-4, 5e-4] m, one above the other 1.5 mm apart (more than a
// diameter) at random (x, z) in the box, so that they land one after the other.
std::vector<Ball> four_balls(double side) {
  std::mt19937 generator(kSeed);
  std::uniform_real_distribution<double> radius(4e-4, 5e-4);
  std::vector<Ball> balls;
  for (int k = 0; k < 4; ++k) {
    const double r = radius(generator);
    std::uniform_real_distribution<double> across(r, side - r);
    const double x = across(generator), z = across(generator);
    balls.push_back({Vec3(x, 1.5e-3 * (k + 1), z), r});
  }
  return balls;
}

// (b): n balls, radii uniform in [2.5e-4, 5e-4] m, on a lattice of pitch 1.1 mm with
// `per_row` x `per_row` balls per layer, each moved by up to +-0.04 mm in x and z (the pitch
// leaves 0.1 mm between the largest balls), the lowest layer 0.05 mm above the floor.
std::vector<Ball> ball_column(int n, int per_row) {
  std::mt19937 generator(kSeed + 1);
  std::uniform_real_distribution<double> radius(2.5e-4, 5e-4);
  std::uniform_real_distribution<double> jitter(-4e-5, 4e-5);
  std::vector<Ball> balls;
  for (int k = 0; k < n; ++k) {
    const int layer = k / (per_row * per_row), i = (k / per_row) % per_row, j = k % per_row;
    const double r = radius(generator);
    const double x = (i + 0.5) * kPitch + jitter(generator);
    const double z = (j + 0.5) * kPitch + jitter(generator);
    balls.push_back({Vec3(x, 5.5e-4 + layer * kPitch, z), r});
  }
  return balls;
}

struct Settings {
  double time_step;
  long steps;
  double epsilon_glob;
  double margin;  // collision margin, m
  // Local Newton (EBP, EAL): Dumont's absolute stop eps_Newt <= 1e-5, and the Armijo line
  // search the suite adds (not in Dumont; false = the paper's plain Newton step).
  double newton_tolerance = 1e-5;
  bool newton_line_search = true;
};

struct StepRow {
  long step;
  long contacts;
  int iterations;
  double epsilon_glob, max_penetration, cpu_seconds;
  std::string termination;
};

struct Outcome {
  std::string label;
  LocalMethod method = LocalMethod::ebp;
  std::vector<StepRow> rows;
  NlgsStats last;     // the measured (last) step
  World before_last;  // state at the start of the last step
  World final_world;
  double cpu_seconds = 0.0;  // whole run
  long unconverged_steps = 0;
};

std::unique_ptr<NlgsSolver> make_nlgs(LocalMethod method, double alpha, const Settings& s) {
  NlgsOptions nlgs;
  nlgs.max_iterations = kMaxIterations;
  nlgs.method = method;
  nlgs.rho_factor = alpha;
  nlgs.stopping = NlgsStopping::epsilon_glob;
  nlgs.epsilon_glob_tolerance = s.epsilon_glob;
  nlgs.time_step = s.time_step;  // eps_glob with forces, as Dumont
  nlgs.newton_tolerance = s.newton_tolerance;
  nlgs.newton_line_search = s.newton_line_search;
  return std::make_unique<NlgsSolver>(nlgs);
}

ThetaOptions theta_options(const Settings& s) {
  ThetaOptions options;
  options.time_step = s.time_step;
  options.theta = 0.5;  // Dumont eq. 18 and the final update
  options.collision.margin = s.margin;
  return options;
}

Outcome run(const std::string& label, const World& initial, LocalMethod method, double alpha,
            const Settings& s) {
  World world = initial;
  ThetaStepper stepper(world, theta_options(s), make_nlgs(method, alpha, s));
  Outcome out;
  out.label = label;
  out.method = method;
  const std::clock_t start = std::clock();
  for (long k = 1; k <= s.steps; ++k) {
    const bool last = k == s.steps;
    if (last) out.before_last = world;
    const std::clock_t step_start = std::clock();
    const StepReport& report = stepper.step();
    StepRow row{k,        static_cast<long>(report.contacts.size()),
                0,        0.0,
                0.0,      static_cast<double>(std::clock() - step_start) / CLOCKS_PER_SEC,
                "not_run"};
    if (report.nlgs) {
      row.iterations = report.nlgs->common.iterations;
      row.epsilon_glob = report.nlgs->epsilon_glob;
      row.max_penetration = report.nlgs->max_penetration;
      row.termination = to_string(report.nlgs->common.termination);
      if (!report.nlgs->common.converged) ++out.unconverged_steps;
      if (last) out.last = *report.nlgs;
    }
    out.rows.push_back(row);
  }
  out.cpu_seconds = static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
  out.final_world = world;
  return out;
}

// The contact problem of one step solved from the same state by another solver: the world at
// the start of the step, one step with `method` and `alpha`.
NlgsStats probe(const World& state, LocalMethod method, double alpha, const Settings& s) {
  World world = state;
  ThetaStepper stepper(world, theta_options(s), make_nlgs(method, alpha, s));
  const StepReport& report = stepper.step();
  return report.nlgs ? *report.nlgs : NlgsStats{};
}

// Largest overlap of two shapes at the end of the run, m (geometric penetration).
double max_overlap(const World& world) {
  double worst = 0.0;
  for (const Contact& c : detect_contacts(world, CollisionOptions{}))
    worst = std::max(worst, -c.gap);
  return worst;
}

int iterations_of(const std::vector<Outcome>& outcomes, LocalMethod method) {
  for (const Outcome& o : outcomes)
    if (o.method == method) return o.last.common.iterations;
  return -1;
}

double penetration_of(const std::vector<Outcome>& outcomes, LocalMethod method) {
  for (const Outcome& o : outcomes)
    if (o.method == method) return o.last.max_penetration;
  return std::nan("");
}

void write_steps(CsvTable& out, const std::string& part, const Outcome& o) {
  for (const StepRow& r : o.rows)
    out.row(part, o.label, r.step, r.contacts, r.iterations, r.epsilon_glob, r.max_penetration,
            r.cpu_seconds, r.termination);
}

void write_history(CsvTable& out, const std::string& part, const Outcome& o) {
  for (const NlgsIterate& it : o.last.history)
    out.row(part, o.label, it.iteration, it.terms.motion, it.terms.projection, it.terms.bipotential,
            it.terms.penetration, it.epsilon_glob);
}

void write_positions(CsvTable& out, const std::string& part, const std::string& label,
                     const World& world) {
  for (const RigidBody& b : world.bodies)
    if (b.is_dynamic())
      out.row(part, label, b.position.x(), b.position.y(), b.position.z(),
              std::get<Sphere>(b.shape.geometry).radius);
}

// alpha in labels: 5, 2, 1, 0.5, 0.2, 0.6.
std::string alpha_label(double alpha) {
  std::ostringstream out;
  out << alpha;
  return out.str();
}

// One column of Dumont's Table 2 or 3 by method, for the notes of the measures:
// "Dumont Table 2 (...): SBP 305, SAL 301, EBP 161, EAL 158".
std::string published_column(const PublishedData& table, const std::string& column) {
  std::string text = table.source + ":";
  for (std::size_t k = 0; k < table.row_names.size(); ++k) {
    std::string method = table.row_names[k];
    std::transform(method.begin(), method.end(), method.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    char value[32];
    std::snprintf(value, sizeof value, "%.6g", table.at(table.row_names[k], column));
    text += (k == 0 ? " " : ", ") + method + " " + value;
  }
  return text;
}

// Orderings of Dumont Tables 2-3 on the measured step of one part.
void check_orderings(ExperimentResults& results, const std::string& part,
                     const std::vector<Outcome>& outcomes, bool strictly_fewer) {
  const int standard = std::min(iterations_of(outcomes, LocalMethod::sbp),
                                iterations_of(outcomes, LocalMethod::sal));
  const int newton = std::max(iterations_of(outcomes, LocalMethod::ebp),
                              iterations_of(outcomes, LocalMethod::eal));
  const bool fewer = strictly_fewer ? newton < standard : newton <= standard;
  results.check(part + (strictly_fewer ? "_newton_methods_fewer_iterations"
                                       : "_newton_methods_no_more_iterations"),
                fewer,
                "max(EBP, EAL) = " + std::to_string(newton) +
                    " against min(SBP, SAL) = " + std::to_string(standard));
  double others = std::numeric_limits<double>::infinity();
  for (const LocalMethod m : {LocalMethod::sbp, LocalMethod::sal, LocalMethod::ebp})
    others = std::min(others, penetration_of(outcomes, m));
  // A zero EAL penetration (it is ~1e-19 m/s in the paper) counts as the smallest positive double.
  const double eal =
      std::max(penetration_of(outcomes, LocalMethod::eal), std::numeric_limits<double>::min());
  results.check(part + "_eal_smallest_penetration", others / eal,
                "min(SBP, SAL, EBP) / EAL of the largest penetration term -min(0, u~_n) at the "
                "measured step");
}

// ---- EAL's penetration against EBP's over a whole run, and EBP at alpha = 5 ----

// The penetration statistic, declared before it was measured: over every step of the run, the
// largest per-step penetration term -min(0, u~_n) (m/s; Dumont eq. 37 at the last NLGS
// iteration) and the number of steps in which it exceeds 1e-15 m/s (about ten round-offs of the
// contact velocities here). One measured step (Tables 2-3) can fall in a static stack where
// every method sits at round-off; the statistic over all steps cannot.
struct PenetrationStatistic {
  double largest = 0.0;
  long steps_above = 0;
};
PenetrationStatistic penetration_statistic(const Outcome& o) {
  PenetrationStatistic out;
  for (const StepRow& r : o.rows) {
    out.largest = std::max(out.largest, r.max_penetration);
    if (r.max_penetration > 1e-15) ++out.steps_above;
  }
  return out;
}

// EBP and EAL with the paper's plain local Newton (no line search) over the whole run of a part,
// and the same statistic for the suite's default (Armijo line search) runs already made. Checks
// that EAL's largest penetration is at least 100 times below EBP's under plain Newton.
void penetration_over_all_steps(ExperimentResults& results, const std::string& part,
                                const World& initial, const Settings& settings,
                                const std::vector<Outcome>& line_search_runs, CsvTable& steps) {
  Settings plain = settings;
  plain.newton_line_search = false;
  PenetrationStatistic ebp, eal;
  for (const LocalMethod m : {LocalMethod::ebp, LocalMethod::eal}) {
    const Outcome o = run(to_string(m) + " plain Newton", initial, m, 0.0, plain);
    write_steps(steps, part, o);
    const PenetrationStatistic stat = penetration_statistic(o);
    (m == LocalMethod::ebp ? ebp : eal) = stat;
    const std::string label = "(" + part + ") " + o.label;
    results.measure(label + ": largest penetration term over all steps", stat.largest, "m/s");
    results.measure(label + ": steps with penetration term > 1e-15 m/s",
                    static_cast<double>(stat.steps_above), "");
    results.measure(label + ": steps stopped before eps_glob",
                    static_cast<double>(o.unconverged_steps), "");
  }
  for (const Outcome& o : line_search_runs) {
    if (o.method != LocalMethod::ebp && o.method != LocalMethod::eal) continue;
    const PenetrationStatistic stat = penetration_statistic(o);
    const std::string label = "(" + part + ") " + o.label + " with line search";
    results.measure(label + ": largest penetration term over all steps", stat.largest, "m/s",
                    "the Armijo line search (not in Dumont) leaves v_n = (1 - t) v_n0 on "
                    "damped steps");
    results.measure(label + ": steps with penetration term > 1e-15 m/s",
                    static_cast<double>(stat.steps_above), "");
  }
  results.check(part + "_eal_smallest_penetration_over_all_steps",
                ebp.largest / std::max(eal.largest, std::numeric_limits<double>::min()),
                "EBP / EAL of the largest penetration term over all steps, plain local Newton "
                "(EBP above 1e-15 m/s in " +
                    std::to_string(ebp.steps_above) + " steps, EAL in " +
                    std::to_string(eal.steps_above) + ")");
}

// EBP at alpha = 5 with the local Newton converged (eps_Newt <= 1e-10 instead of the published
// absolute 1e-5 N, which these ~1e-6 N contact forces meet after one Newton step): a diagnostic,
// not a check, of whether the stall at the published scale is EBP's or the local stop's.
void ebp_converged_local_newton(ExperimentResults& results, const World& initial,
                                const Settings& settings) {
  Settings tight = settings;
  tight.newton_tolerance = 1e-10;
  const Outcome o = run("ebp alpha 5 eps_Newt 1e-10", initial, LocalMethod::ebp, 5.0, tight);
  const std::string note = "diagnostic, not the published setting (eps_Newt = 1e-10)";
  const std::string m = "(c) EBP alpha = 5, eps_Newt = 1e-10";
  results.measure(m + ": NLGS iterations at the measured step", o.last.common.iterations, "", note);
  results.measure(m + ": converged at the measured step", o.last.common.converged ? 1.0 : 0.0, "",
                  note);
  results.measure(m + ": local Newton iterations at the measured step",
                  static_cast<double>(o.last.newton_iterations), "", note);
  results.measure(m + ": steps stopped before eps_glob", static_cast<double>(o.unconverged_steps),
                  "", note);
  results.measure(m + ": CPU time of the run", o.cpu_seconds, "s", note);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const ExperimentArguments args = ExperimentArguments::parse(argc, argv, "sedimentation");
    const Reference reference = Reference::load(args.reference_directory);
    ExperimentResults results("sedimentation", args.scale, reference);
    const PublishedData& table_2 = reference.data("table_2");
    const PublishedData& table_3 = reference.data("table_3");
    const PublishedData& table_4 = reference.data("table_4");
    const bool full = args.full();
    const std::string dir = args.output_directory;

    CsvTable steps(results, dir, "steps.csv",
                   {"part", "run", "step", "contacts", "iterations", "epsilon_glob",
                    "max_penetration", "cpu_seconds", "termination"},
                   10);
    CsvTable convergence(results, dir, "convergence.csv",
                         {"part", "run", "iteration", "motion", "projection", "bipotential",
                          "penetration", "epsilon_glob"},
                         10);
    CsvTable positions(results, dir, "positions.csv", {"part", "state", "x", "y", "z", "radius"},
                       10);
    // Table 4's sweep at the default 6 digits, as its figure reads it.
    CsvTable sweep(results, dir, "rho_sweep.csv",
                   {"kind", "method", "alpha", "iterations", "termination", "epsilon_glob",
                    "max_penetration", "cpu_seconds"},
                   6);

    // ---- (a) 4 balls: the published 1000 steps at full scale, 500 at quick scale.
    {
      // 1.5 mm: about 1.7 mean diameters, too narrow for two balls side by side on the floor,
      // so the four balls settle into a stack held by ball-ball and ball-wall friction.
      const double side = 1.5e-3;
      // Speeds stay below sqrt(2 g 6 mm) = 0.34 m/s: 34 um per 1e-4 s step, covered three times
      // by the 0.1 mm margin.
      const Settings s{1e-4, full ? 1000L : 500L, 1e-10, 1e-4};
      World initial = box_world(side);
      add_balls(initial, four_balls(side));
      write_positions(positions, "a", "initial", initial);
      std::vector<Outcome> outcomes;
      for (const LocalMethod m : kMethods)
        outcomes.push_back(run(to_string(m), initial, m, 0.0, s));
      const std::string at = " at step " + std::to_string(s.steps);
      for (std::size_t k = 0; k < outcomes.size(); ++k) {
        const Outcome& o = outcomes[k];
        write_steps(steps, "a", o);
        write_history(convergence, "a", o);
        write_positions(positions, "a", "final " + o.label, o.final_world);
        const std::string m = "(a) " + o.label;
        results.measure(m + ": NLGS iterations" + at, o.last.common.iterations, "",
                        published_column(table_2, "iterations"));
        results.measure(m + ": eps_glob" + at, o.last.epsilon_glob, "",
                        published_column(table_2, "epsilon_glob"));
        results.measure(m + ": max penetration term" + at, o.last.max_penetration, "m/s",
                        published_column(table_2, "max_penetration"));
        results.measure(m + ": largest geometric overlap at the end", max_overlap(o.final_world),
                        "m");
        results.measure(m + ": contacts" + at, static_cast<double>(o.rows.back().contacts), "");
        results.measure(m + ": steps stopped before eps_glob <= 1e-10",
                        static_cast<double>(o.unconverged_steps), "");
        results.measure(m + ": CPU time per step", o.cpu_seconds / s.steps, "s",
                        "published " +
                            std::to_string(table_2.at(to_string(o.method), "cpu_seconds") / 1000) +
                            " s per step (Table 2 total / 1000 steps)");
      }
      check_orderings(results, "a", outcomes, true);
      penetration_over_all_steps(results, "a", initial, s, outcomes, steps);
    }

    // ---- (b) n balls: 500 x 1000 steps at full scale, 64 x 400 steps at quick scale.
    const int n = full ? 500 : 64;
    const int per_row = full ? 7 : 4;
    const double side_b = per_row * kPitch;
    World initial_b = box_world(side_b);
    add_balls(initial_b, ball_column(n, per_row));
    // Speeds stay below ~0.7 m/s (a fall of 25 mm): 35 um per 5e-5 s step; the margin is
    // 0.2 r_min = 50 um.
    const Settings settings_b{5e-5, full ? 1000L : 400L, 1e-12, 5e-5};
    {
      write_positions(positions, "b", "initial", initial_b);
      std::vector<Outcome> outcomes;
      for (const LocalMethod m : kMethods)
        outcomes.push_back(run(to_string(m), initial_b, m, 0.0, settings_b));
      const std::string at = " at step " + std::to_string(settings_b.steps);
      for (std::size_t k = 0; k < outcomes.size(); ++k) {
        const Outcome& o = outcomes[k];
        write_steps(steps, "b", o);
        write_history(convergence, "b", o);
        write_positions(positions, "b", "final " + o.label, o.final_world);
        const std::string m = "(b) " + o.label;
        results.measure(m + ": NLGS iterations" + at, o.last.common.iterations, "",
                        published_column(table_3, "iterations"));
        results.measure(m + ": eps_glob" + at, o.last.epsilon_glob, "",
                        published_column(table_3, "epsilon_glob"));
        results.measure(m + ": max penetration term" + at, o.last.max_penetration, "m/s",
                        published_column(table_3, "max_penetration"));
        results.measure(m + ": largest geometric overlap at the end", max_overlap(o.final_world),
                        "m");
        results.measure(m + ": contacts" + at, static_cast<double>(o.rows.back().contacts), "");
        results.measure(m + ": steps stopped before eps_glob <= 1e-12",
                        static_cast<double>(o.unconverged_steps), "");
        results.measure(m + ": CPU time per step", o.cpu_seconds / settings_b.steps, "s",
                        "published " +
                            std::to_string(table_3.at(to_string(o.method), "cpu_seconds") / 1000) +
                            " s per step (Table 3 total / 1000 steps, 500 balls)");
      }
      check_orderings(results, "b", outcomes, false);
      penetration_over_all_steps(results, "b", initial_b, settings_b, outcomes, steps);
    }

    // ---- (c) rho = alpha rho_bar on (b) with EBP, eps_glob = 1e-8, measured at step 500
    // (full) or 200 (quick), Table 4; then SBP, SAL and EBP on the contact problem of that step
    // from the same state, for alpha from 0.5 to 5.
    {
      Settings s = settings_b;
      s.epsilon_glob = 1e-8;  // Dumont Sec. 4.4: eps_tot = 1e-8
      s.steps = full ? 500 : 200;
      const double alphas[] = {5.0, 2.0, 1.0, 0.5, 0.2};
      bool all_converged = true;
      World state_before = initial_b;
      for (std::size_t k = 0; k < std::size(alphas); ++k) {
        const Outcome o =
            run("ebp alpha " + alpha_label(alphas[k]), initial_b, LocalMethod::ebp, alphas[k], s);
        all_converged = all_converged && o.last.common.converged;
        if (alphas[k] == 1.0) state_before = o.before_last;
        sweep.row("run", "ebp", alphas[k], o.last.common.iterations,
                  to_string(o.last.common.termination), o.last.epsilon_glob, o.last.max_penetration,
                  o.cpu_seconds);
        write_steps(steps, "c", o);
        const std::string m = "(c) EBP alpha = " + alpha_label(alphas[k]);
        results.measure(m + ": NLGS iterations at the measured step", o.last.common.iterations, "",
                        "Dumont Table 4: " + std::to_string(static_cast<int>(table_4.at(
                                                 alpha_label(alphas[k]), "iterations"))));
        results.measure(
            m + ": CPU time per step", o.cpu_seconds / s.steps, "s",
            "published " + std::to_string(table_4.at(alpha_label(alphas[k]), "cpu_seconds") / 500) +
                " s per step (Table 4 total / 500 steps)");
      }
      ebp_converged_local_newton(results, initial_b, s);
      results.check(
          "c_ebp_converges_for_every_alpha", all_converged,
          "EBP reached eps_glob <= 1e-8 at the measured step for alpha = 5, 2, 1, 1/2, 1/5");
      // Converged at the measured step, by method and alpha.
      std::map<std::pair<LocalMethod, double>, bool> converged;
      // alpha = 0.5 is not in the paper: it lies below 2 / 3.5, the bound under which the Uzawa
      // step of SBP and SAL also contracts in the tangential directions of a sphere contact
      // (W_tt = 3.5 W_nn), where the default 0.6 does not (README.md).
      for (const LocalMethod m : {LocalMethod::sbp, LocalMethod::sal, LocalMethod::ebp}) {
        for (const double alpha : {0.5, 0.6, 1.0, 2.0, 5.0}) {
          const std::clock_t start = std::clock();
          const NlgsStats stats = probe(state_before, m, alpha, s);
          const double cpu = static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
          sweep.row("probe", to_string(m), alpha, stats.common.iterations,
                    to_string(stats.common.termination), stats.epsilon_glob, stats.max_penetration,
                    cpu);
          converged[{m, alpha}] = stats.common.converged;
          results.measure(
              "(c) probe " + to_string(m) + " alpha = " + alpha_label(alpha) + ": NLGS iterations",
              stats.common.iterations, "", to_string(stats.common.termination));
        }
      }
      // Dumont Sec. 4: rho < 2 rho_bar ensures convergence. "No longer convergent above 2" is
      // claimed only for a method that converges below 2 on the same problem: a method that fails
      // at every alpha cannot show it. The published default alpha = 0.6 is its own check.
      for (const LocalMethod m : {LocalMethod::sbp, LocalMethod::sal}) {
        const std::string name = to_string(m);
        std::string below;
        for (const double alpha : {0.5, 0.6, 1.0})
          if (converged[{m, alpha}]) below += (below.empty() ? "" : ", ") + alpha_label(alpha);
        const bool diverges_above = !below.empty() && !converged[{m, 5.0}];
        results.check("c_" + name + "_does_not_converge_for_alpha_5", diverges_above,
                      name +
                          " on the contact problem of the measured step: converged below 2 at "
                          "alpha = " +
                          (below.empty() ? std::string("none of 0.5, 0.6, 1") : below) +
                          "; at alpha = 5 " +
                          (converged[{m, 5.0}] ? "converged"
                                               : "stopped without "
                                                 "reaching 1e-8"));
        results.check("c_" + name + "_converges_at_published_default", converged[{m, 0.6}],
                      name +
                          " at the published default alpha = 0.6 on the contact problem of the "
                          "measured step");
      }
    }

    for (const char* figure :
         {"convergence_a.png", "convergence_b.png", "snapshots.png", "rho_sweep.png"})
      results.add_file(figure, "figure");
    results.write(dir);
    return results.exit_code();
  } catch (const std::exception& e) {
    std::cerr << "sedimentation: error: " << e.what() << "\n";
    return 2;
  }
}
