// Painleve rod and the academic six-mass problem, Preclik et al. Sec. 4.1-4.2: the
// maximum-dissipation impact model has one solution where the Coulomb-like one has several. See
// README.md for the scenes, the choices made and what each part shows.
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <limits>
#include <memory>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "moreau/collision/collision_detector.hpp"
#include "moreau/contact/contact_system.hpp"
#include "moreau/contact/delassus.hpp"
#include "moreau/core/error.hpp"
#include "moreau/harness/results.hpp"
#include "moreau/harness/table.hpp"
#include "moreau/impact/block_solvers.hpp"
#include "moreau/impact/coulomb_enumeration.hpp"
#include "moreau/impact/reference_minimizer.hpp"
#include "moreau/impact/single_contact.hpp"
#include "moreau/integrator/impulse_velocity_stepper.hpp"
#include "moreau/solver/projected_gauss_seidel.hpp"

namespace {

using namespace moreau;
using Vec2 = Eigen::Vector2d;

constexpr double kPi = std::numbers::pi;

// ---- Academic problem, Preclik et al. Sec. 4.1 (all values from the paper) ----
constexpr double kDx = 10.0, kDy = 1.0, kDz = 1.0;
constexpr double kMx = 0.03, kMy = 65.0, kMz = 50.0;
constexpr double kAcademicMu = 3.7;
const Vec3 kPlaneNormal(0.25, 0.36, -0.9);      // n^, normalized before use
const Vec3 kAcademicVelocity(0.06, 0.7, 0.23);  // b = Q^T (0.06, 0.7, 0.23)

// ---- Painleve rod, Preclik et al. Sec. 4.2 (README.md: unit mass, length and sliding speed) ----
constexpr double kRodMass = 1.0;         // m, kg
constexpr double kRodLength = 1.0;       // l, m
constexpr double kSlidingSpeed = 1.0;    // v0, m/s
constexpr double kGravity = 9.81;        // g0, m/s^2
constexpr double kContactMargin = 1e-9;  // the tip touches with gap 0, which must count
const double kCriticalAngle = 0.5 * std::acos(-0.6);  // where mu* is smallest, 4/3
constexpr double kTimeStep = 1e-3;                    // s
constexpr int kSteps = 250;              // 0.25 s: the rod pivots well away from theta0
constexpr double kErrorReduction = 0.5;  // epsilon of Preclik et al. Sec. 3.1 (README.md)

struct Scale {
  int sweep_angles;     // theta0 values of the (theta0, mu) sweep
  int sweep_mus;        // mu values per angle
  int contour_points;   // per axis of the academic contour grid
  int timing_problems;  // random single-contact problems for the solves-per-second figures
};

Scale scale_for(bool full) {
  return full ? Scale{200, 200, 241, 200000} : Scale{24, 24, 121, 20000};
}

// The Delassus block of the contact at `point` of a body with the given mass and body-frame
// inertia at the origin, through the engine, in the world frame.
Mat3 world_delassus(double mass, const Mat3& inertia, const Vec3& point, const Vec3& normal) {
  World world;
  RigidBody plane;
  plane.motion = Motion::fixed;
  plane.shape.geometry = HalfSpace{Vec3::UnitY()};
  world.add_body(plane);
  RigidBody body;
  body.mass = mass;
  body.inertia_body = inertia;
  world.add_body(body);
  Contact contact;
  contact.body_a = 0;
  contact.body_b = 1;
  contact.normal = normal;
  contact.point = point;
  complete_frame(contact, Dimension::three);
  const ContactSystem system(world, {contact}, 3);
  Mat3 frame;
  frame << contact.normal, contact.tangent1, contact.tangent2;
  return frame * system.diagonal_block(0) * frame.transpose();
}

struct Academic {
  SingleContactProblem problem;
  Mat3 frame;            // Q = [n t o]
  double inertia_error;  // engine's point-mass inertia against Preclik et al.'s closed form
};

// Preclik et al. Sec. 4.1: A = Q^T (M^-1 E - dx^2 e_x^x I^-1 e_x^x) Q. The frame is t = n x e_x,
// o = n x t, normalized or (as published) not.
Academic academic_problem(bool normalized_frame) {
  std::vector<PointMass> masses;
  for (const double sign : {1.0, -1.0}) {
    masses.push_back({Vec3(sign * kDx, 0.0, 0.0), kMx});
    masses.push_back({Vec3(0.0, sign * kDy, 0.0), kMy});
    masses.push_back({Vec3(0.0, 0.0, sign * kDz), kMz});
  }
  const RigidCluster cluster = point_mass_cluster(masses);
  const Mat3 paper_inertia =
      2.0 * Vec3(kMy * kDy * kDy + kMz * kDz * kDz, kMx * kDx * kDx + kMz * kDz * kDz,
                 kMx * kDx * kDx + kMy * kDy * kDy)
                .asDiagonal();
  const Vec3 n = kPlaneNormal.normalized();
  Vec3 t = n.cross(Vec3::UnitX());
  Vec3 o = n.cross(t);
  if (normalized_frame) {
    t.normalize();
    o.normalize();
  }
  Academic academic;
  academic.frame << n, t, o;
  const Mat3 world = world_delassus(cluster.mass, cluster.inertia, Vec3(kDx, 0.0, 0.0), n);
  academic.problem.a = academic.frame.transpose() * world * academic.frame;
  academic.problem.b = academic.frame.transpose() * kAcademicVelocity;
  academic.problem.mu = kAcademicMu;
  academic.problem.validate();
  academic.inertia_error = (cluster.inertia - paper_inertia).norm() / paper_inertia.norm();
  return academic;
}

// Preclik et al. Sec. 4.2: the rod (body 1) touches the half-space (body 0, normal e_y) with its
// lower tip at angle theta0, centre at l/2 (cos, sin, 0), sliding with -v0 e_x, no spin.
World rod_world(double theta, double mu) {
  World world;
  world.gravity = Vec3(0.0, -kGravity, 0.0);
  world.friction = FrictionTable(mu);
  RigidBody plane;
  plane.name = "half-space";
  plane.motion = Motion::fixed;
  plane.shape.geometry = HalfSpace{Vec3::UnitY()};
  world.add_body(plane);
  RigidBody rod;
  rod.name = "rod";
  rod.mass = kRodMass;
  // m l^2 / 12 about the transverse axes; the axial moment (infinite in the paper) never enters,
  // contact forces act on the axis: any positive value gives the same dynamics.
  rod.inertia_body =
      Vec3(1e-3, 1.0, 1.0).asDiagonal() * (kRodMass * kRodLength * kRodLength / 12.0);
  rod.shape.geometry = Capsule{0.5 * kRodLength, 0.0};
  rod.position = 0.5 * kRodLength * Vec3(std::cos(theta), std::sin(theta), 0.0);
  rod.orientation = Quat(Eigen::AngleAxisd(theta, Vec3::UnitZ()));
  rod.linear_velocity = Vec3(-kSlidingSpeed, 0.0, 0.0);
  world.add_body(rod);
  return world;
}

struct RodImpact {
  SingleContactProblem problem;  // mu set by the caller
  Mat3 frame;                    // contact frame [n t1 t2] (n = e_y)
};

// The impact problem at t0 (Preclik et al. eq. 3): A = W of the tip contact, b = -u^- (pre-impact
// relative velocity; no gravity impulse at an instant).
RodImpact rod_impact(double theta) {
  const World world = rod_world(theta, 0.0);
  CollisionOptions collision;
  collision.margin = kContactMargin;
  const std::vector<Contact> contacts = detect_contacts(world, collision);
  if (contacts.size() != 1) throw SimulationError("painleve_rod: expected one tip contact at t0");
  const ContactSystem system(world, contacts, 3);
  VecX velocities(12);
  velocities << world.bodies[0].velocity(), world.bodies[1].velocity();
  RodImpact impact;
  impact.problem.a = system.diagonal_block(0);
  impact.problem.b = -system.contact_velocity(velocities).head<3>();
  impact.frame << contacts[0].normal, contacts[0].tangent1, contacts[0].tangent2;
  return impact;
}

double mu_star(double theta) {
  return (std::cos(theta) + 1.0 / (3.0 * std::cos(theta))) / std::sin(theta);
}

Vec3 lambda0(double theta) {
  return kRodMass * kSlidingSpeed / 8.0 *
         Vec3(5.0 + 3.0 * std::cos(2.0 * theta), 3.0 * std::sin(2.0 * theta), 0.0);
}

// mu*(theta) from the engine's W: the ellipse/parabola switch A_nn = mu |(A_nt, A_no)| (P2).
double engine_mu_star(double theta) {
  const SingleContactProblem p = rod_impact(theta).problem;
  return p.a(0, 0) / std::hypot(p.a(0, 1), p.a(0, 2));
}

// ---------------------------------------------------------------------------------------------

// The same masses with t and o normalized, Q = [n, t/|t|, o/|o|] orthonormal (not published:
// the published frame is not orthonormal, so the solvers are also tested on one that is). The
// analytic maximum-dissipation solver is checked against brute force and against the enumerated
// Coulomb solutions, as on the published frame; x* and the objective are reported beside the
// published-frame ones. The impulse in world coordinates is Q x; with Q orthonormal the
// objective is frame-invariant, so it is compared with the published frame's too.
void check_orthonormal_frame(ExperimentResults& results, const Vec3& published_frame_x,
                             double published_frame_objective,
                             const SamplingResult& published_frame_brute) {
  const Academic published = academic_problem(false);
  const Academic normalized = academic_problem(true);
  const SingleContactProblem& p = normalized.problem;
  const MaxDissipationSolution md = solve_max_dissipation(p);
  const double objective = p.objective(md.x);
  const SamplingResult brute = minimize_by_sampling(p, 1 << 16);
  const CoulombSolutionSet coulomb = enumerate_coulomb_solutions(p);
  results.measure("academic, orthonormal frame: x*_n", md.x.x(), "N s");
  results.measure("academic, orthonormal frame: x*_t", md.x.y(), "N s");
  results.measure("academic, orthonormal frame: x*_o", md.x.z(), "N s");
  results.measure("academic, orthonormal frame: objective of x*", objective, "J",
                  "published frame: " + std::to_string(published_frame_objective));
  results.measure("academic, orthonormal frame: Coulomb solutions",
                  static_cast<double>(coulomb.isolated.size() + coulomb.continua.size()), "");
  results.measure("academic, published frame: brute-force objective - objective of x*",
                  published_frame_brute.objective - published_frame_objective, "J");
  // World-frame impulses of the two frames' solutions: the same physical problem only if the
  // frame's scaling is a change of variables (it is: x_world = Q x in both).
  const Vec3 world_published = published.frame * published_frame_x;
  const Vec3 world_normalized = normalized.frame * md.x;
  results.measure("academic: |Q x* (orthonormal) - Q x* (published frame)| / |Q x*|",
                  (world_normalized - world_published).norm() / world_published.norm(), "",
                  "the friction cone of the published frame is ||(x_t, x_o)|| <= mu x_n in the "
                  "unnormalized coordinates, so it is a different (elliptic) cone in the world "
                  "frame: the two problems need not have the same solution");
  results.check("orthonormal_md_matches_brute_force",
                (brute.objective - objective) / std::abs(objective),
                "(brute-force objective - objective of x*) / |objective of x*|, 65536 directions");
  results.check("orthonormal_md_x_matches_brute_force", (md.x - brute.x).norm() / md.x.norm(),
                "|x* - x_brute| / |x*|");
  bool lowest = true;
  double worst_residual = 0.0;
  for (const CoulombSolution& sol : coulomb.isolated) {
    lowest = lowest && objective < p.objective(sol.x);
    worst_residual = std::max(worst_residual, coulomb_residual(p, sol.x));
  }
  results.check("orthonormal_md_most_dissipative", lowest && !coulomb.isolated.empty(),
                "objective of x* below that of every one of the " +
                    std::to_string(coulomb.isolated.size()) + " enumerated Coulomb solutions");
  results.check("orthonormal_coulomb_residual", worst_residual,
                "largest Coulomb residual of the enumerated solutions");
}

void run_academic(const ExperimentArguments& args, const Scale& scale, ExperimentResults& results) {
  const Academic academic = academic_problem(false);
  const SingleContactProblem& p = academic.problem;
  results.check("academic_inertia", academic.inertia_error < 1e-14,
                "relative Frobenius difference " + std::to_string(academic.inertia_error));

  const MaxDissipationSolution md = solve_max_dissipation(p);
  const Vec3 u = p.relative_velocity(md.x);
  results.check("md_x_n", md.x.x());
  results.check("md_x_t", md.x.y());
  results.check("md_x_o", md.x.z());
  results.check("md_u_n", u.x());
  results.check("md_u_t", u.y());
  results.check("md_u_o", u.z());
  results.check("md_objective", p.objective(md.x));
  const SamplingResult brute = minimize_by_sampling(p, 1 << 16);
  results.measure("academic: |x* - brute force| / |x*|", (md.x - brute.x).norm() / md.x.norm(), "",
                  "brute-force minimum over the conic section, 65536 directions");

  const CoulombSolutionSet coulomb = enumerate_coulomb_solutions(p);
  results.check("coulomb_solution_count",
                static_cast<double>(coulomb.isolated.size() + coulomb.continua.size()),
                "isolated solutions + continua found by the quartic enumeration");
  double worst_residual = 0.0;
  bool md_lowest = true;
  for (std::size_t k = 0; k < coulomb.isolated.size() && k < 3; ++k) {
    const Vec3 x = coulomb.isolated[k].x;
    const Vec3 v = p.relative_velocity(x);
    const std::string prefix = "coulomb" + std::to_string(k + 1) + "_";
    results.check(prefix + "x_n", x.x());
    results.check(prefix + "x_t", x.y());
    results.check(prefix + "x_o", x.z());
    results.check(prefix + "u_t", v.y());
    results.check(prefix + "u_o", v.z());
    results.check(prefix + "objective", p.objective(x));
    worst_residual = std::max(worst_residual, coulomb_residual(p, x));
  }
  for (const CoulombSolution& s : coulomb.isolated) {
    md_lowest = md_lowest && p.objective(md.x) < p.objective(s.x);
  }
  results.measure("academic: largest Coulomb residual of the enumerated solutions", worst_residual,
                  "", "coulomb_residual(), zero at a solution");
  results.check("md_most_dissipative", md_lowest,
                "objective of x* below that of every enumerated Coulomb solution");

  check_orthonormal_frame(results, md.x, p.objective(md.x), brute);

  // Fig. 7: the objective on the plane of maximum compression over (x_t, x_o), the conic section
  // and the solutions.
  const ReducedProblem reduced(p);
  CsvTable grid(results, args.output_directory, "academic_contour.csv",
                {"x_t", "x_o", "objective", "feasible"}, 10);
  // Wide enough for the conic section (x_t in [-2.5, 0.4], x_o in [-6.8, 0.2]) and x0 (x_o =
  // -13.8).
  const double t_lo = -3.0, t_hi = 1.0, o_lo = -15.0, o_hi = 2.0;
  for (int i = 0; i < scale.contour_points; ++i) {
    for (int j = 0; j < scale.contour_points; ++j) {
      const Vec2 y(t_lo + (t_hi - t_lo) * i / (scale.contour_points - 1),
                   o_lo + (o_hi - o_lo) * j / (scale.contour_points - 1));
      const Vec3 x = reduced.lift(y);
      const bool feasible = x.x() >= 0.0 && y.norm() <= p.mu * x.x();
      grid.row(y.x(), y.y(), p.objective(x), feasible);
    }
  }
  CsvTable points(results, args.output_directory, "academic_points.csv",
                  {"kind", "x_n", "x_t", "x_o", "objective"}, 12);
  for (int k = 0; k < 2000; ++k) {
    const double alpha = -kPi + 2.0 * kPi * k / 2000;
    const Vec2 d(std::cos(alpha), std::sin(alpha));
    const double f_r = reduced.boundary_factor(p.mu, d);
    if (f_r <= 0.0) continue;
    const double r = p.mu * reduced.b_n / f_r;
    points.row("boundary", r / p.mu, r * d.x(), r * d.y(), "");
  }
  const Vec3 x0 = p.a.ldlt().solve(p.b);
  points.row("unconstrained", x0.x(), x0.y(), x0.z(), p.objective(x0));
  points.row("max_dissipation", md.x.x(), md.x.y(), md.x.z(), p.objective(md.x));
  for (const CoulombSolution& s : coulomb.isolated) {
    points.row("coulomb", s.x.x(), s.x.y(), s.x.z(), p.objective(s.x));
  }
  results.add_file("academic_contour.png", "figure");
}

// ---------------------------------------------------------------------------------------------

void run_rod_impact(const ExperimentArguments& args, const Scale& scale,
                    ExperimentResults& results) {
  // The engine's Delassus block against Preclik et al.'s A(t0), in the plane of motion.
  {
    const double theta = kPi / 3.0;
    const RodImpact impact = rod_impact(theta);
    const Mat3 world = impact.frame * impact.problem.a * impact.frame.transpose() * kRodMass;
    const double s = std::sin(theta), c = std::cos(theta);
    const double error = std::max({std::abs(world(0, 0) - (1.0 + 3.0 * s * s)),
                                   std::abs(world(1, 1) - (1.0 + 3.0 * c * c)),
                                   std::abs(world(0, 1) + 3.0 * s * c)});
    results.check(
        "rod_delassus_in_plane", error < 1e-13,
        "largest in-plane difference of m A from Preclik et al.'s A(t0) at theta0 = pi/3: " +
            std::to_string(error));
    results.measure(
        "rod: m A_zz at theta0 = pi/3 (Preclik et al. prints 1 + 3 cos^2 2 theta0 = 1.75)",
        world(2, 2), "", "a slender rod gives 1 + (l/2)^2 / (l^2/12) = 4");
  }

  // min over theta0 of mu*(theta0) from the engine's W, by golden-section search.
  {
    double lo = 0.3, hi = 1.4;
    const double ratio = 0.5 * (std::sqrt(5.0) - 1.0);
    for (int k = 0; k < 80; ++k) {
      const double a = hi - ratio * (hi - lo), b = lo + ratio * (hi - lo);
      if (engine_mu_star(a) < engine_mu_star(b)) {
        hi = b;
      } else {
        lo = a;
      }
    }
    const double theta_min = 0.5 * (lo + hi);
    results.check("mu_star_minimum", engine_mu_star(theta_min),
                  "golden-section minimum of A_nn / |(A_nt, A_no)| from the engine's W");
    results.check("mu_star_argmin", theta_min);
  }

  // Lambda0 at theta0 = pi/3, mu = 2 (> mu* = 1.347).
  {
    const double theta = kPi / 3.0;
    RodImpact impact = rod_impact(theta);
    impact.problem.mu = 2.0;
    const Vec3 impulse = impact.frame * solve_max_dissipation(impact.problem).x;
    results.check("lambda0_tangential", impulse.x(), "world x component of the impulse on the rod");
    results.check("lambda0_normal", impulse.y(), "world y component of the impulse on the rod");
  }

  // The (theta0, mu) sweep (Fig. 8). Each angle also gets mu = mu*(theta0) exactly and
  // mu*(1 -+ 1e-9) around it.
  CsvTable out(results, args.output_directory, "painleve_sweep.csv",
               {"theta0", "mu", "mu_star", "expected_impulsive", "md_impulsive", "md_lambda_x",
                "md_lambda_y", "coulomb_isolated", "coulomb_continua", "on_boundary"});
  int md_wrong = 0, coulomb_wrong = 0, points = 0;
  double worst_lambda0 = 0.0;
  for (int i = 0; i < scale.sweep_angles; ++i) {
    const double theta = 0.5 * kPi * (i + 0.5) / scale.sweep_angles;
    const double critical = mu_star(theta);
    RodImpact impact = rod_impact(theta);
    std::vector<std::pair<double, int>> mus;  // mu, side (-1 below, 0 at, +1 above mu*)
    for (int j = 0; j < scale.sweep_mus; ++j) {
      const double mu = 4.0 * (j + 0.5) / scale.sweep_mus;
      mus.emplace_back(mu, mu < critical ? -1 : 1);
    }
    mus.emplace_back(critical * (1.0 - 1e-9), -1);
    mus.emplace_back(critical, 0);
    mus.emplace_back(critical * (1.0 + 1e-9), 1);
    const Vec3 expected_impulse = lambda0(theta);
    for (const auto& [mu, side] : mus) {
      impact.problem.mu = mu;
      const Vec3 md = impact.frame * solve_max_dissipation(impact.problem).x;
      const bool impulsive = md.norm() > 0.0;
      const bool expected = side >= 0;  // Preclik et al. Sec. 4.2: Lambda0 iff mu >= mu*
      md_wrong += impulsive != expected;
      if (impulsive) {
        worst_lambda0 =
            std::max(worst_lambda0, (md - expected_impulse).norm() / expected_impulse.norm());
      }
      const CoulombSolutionSet set = enumerate_coulomb_solutions(impact.problem);
      // 0 alone below mu*; 0 and Lambda0 above; at mu* also the segment between them.
      const std::size_t expected_isolated = side < 0 ? 1 : 2;
      const std::size_t expected_continua = side == 0 ? 1 : 0;
      bool coulomb_ok =
          set.isolated.size() == expected_isolated && set.continua.size() == expected_continua;
      if (coulomb_ok && side >= 0) {
        coulomb_ok = (impact.frame * set.isolated[1].x - expected_impulse).norm() <=
                     1e-9 * expected_impulse.norm();
      }
      coulomb_wrong += !coulomb_ok;
      ++points;
      out.row(theta, mu, critical, expected, impulsive, md.x(), md.y(), set.isolated.size(),
              set.continua.size(), side == 0);
    }
  }
  results.check("sweep_md_misclassified", static_cast<double>(md_wrong),
                std::to_string(points) + " (theta0, mu) points");
  results.check("sweep_coulomb_misclassified", static_cast<double>(coulomb_wrong),
                std::to_string(points) + " (theta0, mu) points");
  results.check("sweep_lambda0_error", worst_lambda0,
                "largest |Lambda - Lambda0| / |Lambda0| over the impulsive sweep points");
  results.add_file("painleve_plane.png", "figure");
}

// ---------------------------------------------------------------------------------------------

struct SteppingRun {
  std::string model;
  double mu;
  double slip_after_first_step;  // tip velocity along x after step 1, m/s
  bool converged;                // every step's solver converged
};

SteppingRun run_stepping(const std::string& model, double mu, CsvTable& out) {
  World world = rod_world(kCriticalAngle, mu);
  ImpulseVelocityOptions options;
  options.time_step = kTimeStep;
  options.error_reduction = kErrorReduction;
  options.collision.margin = kContactMargin;
  const auto limits = [](auto solver_options) {
    solver_options.tolerance = 1e-12;
    solver_options.max_iterations = 100000;
    return solver_options;
  };
  std::unique_ptr<ContactSolver> solver;
  if (model == "max_dissipation") {
    solver = std::make_unique<MaxDissipationGaussSeidel>(limits(MdGaussSeidelOptions{}));
  } else {
    options.friction_model = FrictionModel::coulomb;
    solver = std::make_unique<ProjectedGaussSeidel>(limits(PgsOptions{}));
  }
  ImpulseVelocityStepper stepper(world, options, std::move(solver));
  SteppingRun run{model, mu, 0.0, true};
  out.row(model, mu, 0, -kSlidingSpeed, 0, 0, kCriticalAngle, 0, 0, 0);
  for (int k = 0; k < kSteps; ++k) {
    // The contact law constrains the velocity at the end of the step of the material point that
    // touched at its start: v' + omega' x (tip - centre) with the lever of the step's start.
    const RigidBody& rod = world.bodies[1];
    const Vec3 lever = -0.5 * kRodLength * (rod.orientation * Vec3::UnitX());
    const StepReport& report = stepper.step();
    run.converged = run.converged && report.solver_stats.converged;
    const Vec3 tip_velocity = rod.linear_velocity + rod.angular_velocity.cross(lever);
    const Vec3 axis = rod.orientation * Vec3::UnitX();
    const Vec3 tip = rod.position - 0.5 * kRodLength * axis;
    if (k == 0) run.slip_after_first_step = tip_velocity.x();
    double r_n = 0.0, r_t = 0.0;
    if (!report.contacts.empty()) {
      r_n = report.impulses(0);
      r_t = report.impulses.segment<2>(1).norm();
    }
    out.row(model, mu, report.time, tip_velocity.x(), tip_velocity.y(), tip.y(),
            std::atan2(axis.y(), axis.x()), r_n, r_t, report.solver_stats.iterations);
  }
  return run;
}

void run_time_stepping(const ExperimentArguments& args, ExperimentResults& results) {
  CsvTable out(results, args.output_directory, "painleve_stepping.csv",
               {"model", "mu", "time", "tip_velocity_x", "tip_velocity_y", "tip_height", "angle",
                "impulse_n", "impulse_t", "iterations"},
               12);
  const double critical = mu_star(kCriticalAngle);  // 4/3
  std::vector<SteppingRun> runs;
  for (const std::string model : {"max_dissipation", "coulomb"}) {
    for (const double mu : {0.75 * critical, critical, 1.5 * critical}) {
      runs.push_back(run_stepping(model, mu, out));
    }
  }
  for (const SteppingRun& run : runs) {
    results.measure(run.model + ", mu = " + std::to_string(run.mu) +
                        ": tip velocity along x after the first step",
                    run.slip_after_first_step, "m/s",
                    run.converged ? "" : "a solve did not converge");
  }
  results.check("md_sticks_at_mu_star", std::abs(runs[1].slip_after_first_step) <= 1e-9,
                "|tip slip| after step 1 = " + std::to_string(runs[1].slip_after_first_step) +
                    " m/s, mu = mu* = 4/3");
  results.check("md_sticks_above_mu_star", std::abs(runs[2].slip_after_first_step) <= 1e-9,
                "|tip slip| after step 1 = " + std::to_string(runs[2].slip_after_first_step) +
                    " m/s, mu = 2");
  results.check("md_slides_below_mu_star", -runs[0].slip_after_first_step >= 0.5 * kSlidingSpeed,
                "tip velocity after step 1 = " + std::to_string(runs[0].slip_after_first_step) +
                    " m/s, mu = 1");
  results.add_file("painleve_stepping.png", "figure");
}

// ---------------------------------------------------------------------------------------------

// Single-contact solves per second: the analytic solver, the brute-force sampling minimizer and
// the engine's projected Gauss-Seidel (Coulomb, De Saxce) on one contact, over seeded random
// SPD problems that slide (x0 outside the cone).
void run_timing(const ExperimentArguments& args, const Scale& scale, ExperimentResults& results) {
  std::mt19937 gen(2017);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> unit(0.2, 2.0);
  std::vector<SingleContactProblem> problems;
  while (static_cast<int>(problems.size()) < scale.timing_problems) {
    Eigen::Matrix3d b = Eigen::Matrix3d::NullaryExpr([&]() { return normal(gen); });
    SingleContactProblem p;
    p.a = b * b.transpose() + 0.1 * Mat3::Identity();
    p.b = Vec3(std::abs(normal(gen)), normal(gen), normal(gen));
    p.mu = unit(gen);
    const Vec3 x0 = p.a.ldlt().solve(p.b);
    if (x0.x() > 0.0 && x0.tail<2>().norm() <= p.mu * x0.x()) continue;  // sticking: trivial
    problems.push_back(p);
  }
  using Clock = std::chrono::steady_clock;
  double checksum = 0.0;
  auto rate = [&](int count, auto&& solve) {
    const auto start = Clock::now();
    for (int k = 0; k < count; ++k) checksum += solve(problems[k % problems.size()]);
    return count / std::chrono::duration<double>(Clock::now() - start).count();
  };
  const double analytic = rate(scale.timing_problems, [](const SingleContactProblem& p) {
    return solve_max_dissipation(p).x.x();
  });
  const double brute = rate(scale.timing_problems / 100, [](const SingleContactProblem& p) {
    return minimize_by_sampling(p, 2048).x.x();
  });
  // PGS sees each problem as a one-contact ConeProblem, built before the clock starts.
  PgsOptions options;
  options.tolerance = 1e-10;
  options.max_iterations = 100000;
  options.record_history = false;
  const ProjectedGaussSeidel pgs(options);
  const int pgs_count = scale.timing_problems / 10;
  std::vector<std::unique_ptr<SparseDelassus>> delassus;
  std::vector<ConeProblem> cone_problems(pgs_count);
  for (int k = 0; k < pgs_count; ++k) {
    delassus.push_back(
        std::make_unique<SparseDelassus>(SparseMatrix(MatX(problems[k].a).sparseView()), 3));
    cone_problems[k].delassus = delassus.back().get();
    cone_problems[k].q = -problems[k].b;
    cone_problems[k].mu = VecX::Constant(1, problems[k].mu);
  }
  VecX r(3);
  long pgs_sweeps = 0;
  const auto start = Clock::now();
  for (const ConeProblem& problem : cone_problems) {
    r.setZero();
    pgs_sweeps += pgs.solve(problem, r).iterations;
    checksum += r(0);
  }
  const double pgs_rate = pgs_count / std::chrono::duration<double>(Clock::now() - start).count();
  results.measure("single-contact solves per second: analytic maximum dissipation", analytic, "1/s",
                  "solve_max_dissipation on sliding random SPD problems, one thread");
  results.measure("single-contact solves per second: brute-force sampling (2048 directions)", brute,
                  "1/s", "minimize_by_sampling, the test reference");
  results.measure("single-contact solves per second: PGS, Coulomb (De Saxce), merit 1e-10",
                  pgs_rate, "1/s",
                  "the engine's iterative per-contact solver on the same problems");
  results.measure("PGS sweeps per single-contact solve (mean)",
                  static_cast<double>(pgs_sweeps) / pgs_count, "");
  // Using the results keeps the timed solves from being optimized away.
  volatile double sink = checksum;
  static_cast<void>(sink);
  CsvTable out(results, args.output_directory, "timing.csv", {"solver", "solves_per_second"}, 6);
  out.row("analytic", analytic);
  out.row("brute_force", brute);
  out.row("pgs_coulomb", pgs_rate);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const ExperimentArguments args = ExperimentArguments::parse(argc, argv, "painleve_rod");
    ExperimentResults results("painleve_rod", args.scale,
                              Reference::load(args.reference_directory));
    std::filesystem::create_directories(args.output_directory);
    const Scale scale = scale_for(args.full());
    run_academic(args, scale, results);
    run_rod_impact(args, scale, results);
    run_time_stepping(args, results);
    run_timing(args, scale, results);
    results.write(args.output_directory);
    return results.exit_code();
  } catch (const std::exception& e) {
    std::cerr << "painleve_rod: error: " << e.what() << "\n";
    return 2;
  }
}
