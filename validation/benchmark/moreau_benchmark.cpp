// Moreau performance benchmark (not a test): memory bandwidth, Delassus products, collision
// detection scaling, solver iteration rates and 1 -> 2 thread speed-ups, in one run.
// See validation/benchmark/README.md for the figures and the byte-count model.
//
//   moreau_benchmark [--quick] [--only SECTION] [--threads LIST] [--json FILE]
#include <omp.h>
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "moreau/collision/collision_detector.hpp"
#include "moreau/contact/contact_system.hpp"
#include "moreau/contact/delassus.hpp"
#include "moreau/dem/dem_stepper.hpp"
#include "moreau/io/scene.hpp"
#include "moreau/model/shape.hpp"
#include "moreau/model/world.hpp"
#include "moreau/simulation/simulation.hpp"
#include "moreau/solver/interior_point_solver.hpp"
#include "moreau/solver/projected_gauss_jacobi.hpp"
#include "moreau/solver/solver.hpp"
#include "moreau/solver/solver_registry.hpp"

namespace {

using moreau::VecX;
using Clock = std::chrono::steady_clock;
using nlohmann::json;

// Every random scene of the benchmark is drawn from std::mt19937 with this seed.
constexpr unsigned kSeed = 20240611;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Runs `work` at least `min_reps` times and until `min_seconds` have passed; returns the best
// (smallest) time of one call. The best time is the usual figure for throughput benchmarks
// (STREAM): it is the least disturbed by other processes.
double best_time(const std::function<void()>& work, int min_reps, double min_seconds) {
  double best = 1e300;
  const auto start = Clock::now();
  for (int rep = 0; rep < min_reps || seconds_since(start) < min_seconds; ++rep) {
    const auto t0 = Clock::now();
    work();
    best = std::min(best, seconds_since(t0));
  }
  return best;
}

std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  }
  return "unknown";
}

// The 1-, 5- and 15-minute load averages: other processes on the machine distort the figures,
// multi-threaded ones most (a thread descheduled at a barrier stalls the others).
std::string load_average() {
  std::ifstream file("/proc/loadavg");
  double one = 0.0, five = 0.0, fifteen = 0.0;
  file >> one >> five >> fifteen;
  char text[64];
  std::snprintf(text, sizeof(text), "%.2f %.2f %.2f", one, five, fifteen);
  return text;
}

// User + system CPU seconds of this process so far.
double process_cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec + 1e-6 * usage.ru_utime.tv_usec + usage.ru_stime.tv_sec +
         1e-6 * usage.ru_stime.tv_usec;
}

struct Settings {
  bool quick = false;
  std::string json_path;
  std::string only;  // one section, or all when empty
  // Thread counts compared for the speed-ups.
  std::vector<int> threads{1, 2};
};

// ---------------------------------------------------------------------------------------
// Memory bandwidth: STREAM triad a[i] = b[i] + s c[i].
// ---------------------------------------------------------------------------------------

// Best triad bandwidth in GB/s (1e9 B/s) with the given thread count. Bytes counted as in
// STREAM: 3 x 8 B per element (read b, read c, write a; the write-allocate read of a is not
// counted).
double triad_bandwidth(std::size_t n, int threads, int reps) {
  std::unique_ptr<double[]> a(new double[n]), b(new double[n]), c(new double[n]);
  // First touch with the same static schedule as the kernel.
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::size_t i = 0; i < n; ++i) {
    a[i] = 0.0;
    b[i] = 1.0;
    c[i] = 2.0;
  }
  const double s = 3.0;
  double best = 1e300;
  for (int rep = 0; rep < reps; ++rep) {
    const auto t0 = Clock::now();
#pragma omp parallel for schedule(static) num_threads(threads)
    for (std::size_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
    best = std::min(best, seconds_since(t0));
  }
  // Keep the result observable so that the loop cannot be dropped.
  if (a[n / 2] != 7.0) std::fprintf(stderr, "triad check failed: %g\n", a[n / 2]);
  return 3.0 * sizeof(double) * static_cast<double>(n) / best / 1e9;
}

// ---------------------------------------------------------------------------------------
// Scenes.
// ---------------------------------------------------------------------------------------

// Polydisperse sphere packing: FCC lattice of nearest-neighbour distance 1.6 r0, radii
// uniform in [0.5, 1] r0, centres jittered by up to 0.05 r0 per axis. Two lattice neighbours
// are in contact when r_i + r_j exceeds their distance, for about a third of the 12 neighbours
// (P(r_i + r_j > 1.6 r0) = 0.32): ~2 contacts per sphere, at a solid fraction of ~0.6.
// Mass and inertia of solid spheres of density 1000 kg/m^3; r0 = 1 m, gravity -9.81 m/s^2 y.
moreau::World sphere_packing(int count, unsigned seed) {
  moreau::World world;
  world.bodies.reserve(count);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> radius_draw(0.5, 1.0);
  std::uniform_real_distribution<double> jitter(-0.05, 0.05);
  const double spacing = 1.6;                    // nearest-neighbour distance, r0
  const double cube = spacing * std::sqrt(2.0);  // FCC cubic cell edge
  const int cells = static_cast<int>(std::ceil(std::cbrt(count / 4.0)));
  const moreau::Vec3 basis[4] = {moreau::Vec3(0.0, 0.0, 0.0), moreau::Vec3(0.5, 0.5, 0.0),
                                 moreau::Vec3(0.5, 0.0, 0.5), moreau::Vec3(0.0, 0.5, 0.5)};
  for (int i = 0; i < cells && static_cast<int>(world.bodies.size()) < count; ++i)
    for (int j = 0; j < cells && static_cast<int>(world.bodies.size()) < count; ++j)
      for (int k = 0; k < cells && static_cast<int>(world.bodies.size()) < count; ++k)
        for (int s = 0; s < 4 && static_cast<int>(world.bodies.size()) < count; ++s) {
          moreau::RigidBody body;
          const double r = radius_draw(rng);
          body.shape.geometry = moreau::Sphere{r};
          const moreau::MassProperties mass =
              moreau::mass_properties(moreau::Sphere{r}, 1000.0, moreau::Dimension::three);
          body.mass = mass.mass;
          body.inertia_body = mass.inertia;
          body.position = cube * (moreau::Vec3(i, j, k) + basis[s]) +
                          moreau::Vec3(jitter(rng), jitter(rng), jitter(rng));
          world.bodies.push_back(std::move(body));
        }
  return world;
}

// The frictional cone problem of one time step of the packing (as the TimeStepper builds it):
// q = Phi / dt e_n + J v_free with v_free = dt g, mu = 0.5.
struct ConeScene {
  moreau::World world;
  std::vector<moreau::Contact> contacts;
  std::unique_ptr<moreau::ContactSystem> system;
  moreau::ConeProblem problem;
};

std::unique_ptr<ConeScene> cone_scene(moreau::World world, int rows) {
  auto scene = std::make_unique<ConeScene>();
  scene->world = std::move(world);
  scene->contacts = moreau::detect_contacts(scene->world, moreau::CollisionOptions{});
  scene->system = std::make_unique<moreau::ContactSystem>(scene->world, scene->contacts, rows);
  const double dt = 1e-3;
  VecX free_velocity = VecX::Zero(6 * static_cast<Eigen::Index>(scene->world.bodies.size()));
  for (std::size_t b = 0; b < scene->world.bodies.size(); ++b)
    free_velocity.segment<3>(6 * b) = dt * scene->world.gravity;
  moreau::ConeProblem& problem = scene->problem;
  problem.delassus = scene->system.get();
  problem.q = scene->system->contact_velocity(free_velocity);
  for (std::size_t i = 0; i < scene->contacts.size(); ++i)
    problem.q(rows * i) += scene->contacts[i].gap / dt;
  problem.mu = VecX::Constant(static_cast<Eigen::Index>(scene->contacts.size()), 0.5);
  problem.friction_model = moreau::FrictionModel::coulomb;
  return scene;
}

std::unique_ptr<ConeScene> cone_scene(int spheres, int rows) {
  return cone_scene(sphere_packing(spheres, kSeed), rows);
}

// ---------------------------------------------------------------------------------------
// Byte-count models (README.md, "Byte-count model").
// ---------------------------------------------------------------------------------------

struct Traffic {
  double compulsory = 0.0;  // every array touched once
  double logical = 0.0;     // every operand counted each time the kernel loads it
};

// ContactSystem::apply with its compact Jacobians: the gather reads, per body, its CSR start,
// its inverse mass (3 + 9 numbers) and, per side, the signed frame (9), the lever (3), the
// contact index and x_c, then writes the body velocity; the product reads, per contact, the
// frame, two levers, two body indices and the two body velocities and writes y_c.
Traffic matrix_free_traffic(const moreau::ContactSystem& system) {
  const double m = system.rows_per_contact();
  const double contacts = system.contact_count();
  const double bodies = system.body_count();
  double sides = 0.0;  // contact sides on dynamic bodies
  for (const moreau::ContactRows& row : system.rows())
    sides += (row.body_a >= 0) + (row.body_b >= 0);
  const double frame = 9.0 * sizeof(double);
  const double lever = 3.0 * sizeof(double);
  const double velocity = 6.0 * sizeof(double);
  const double inverse_mass = 12.0 * sizeof(double);
  Traffic t;
  const double fixed = bodies * (sizeof(int) + inverse_mass + velocity) +
                       sides * (frame + lever + sizeof(int)) +
                       contacts * (frame + 2.0 * lever + 2.0 * sizeof(int) + m * sizeof(double));
  // Compulsory: x and the body velocities read once; logical: once per side that loads them.
  t.compulsory = fixed + contacts * m * sizeof(double) + bodies * velocity;
  t.logical = fixed + sides * (m * sizeof(double) + velocity);
  return t;
}

// Row-major CSR product y = W x (SparseDelassus::apply).
Traffic sparse_traffic(const moreau::SparseMatrix& w) {
  const double n = static_cast<double>(w.rows());
  const double nnz = static_cast<double>(w.nonZeros());
  Traffic t;
  const double fixed =
      nnz * (sizeof(double) + sizeof(int)) + (n + 1.0) * sizeof(int) + n * sizeof(double);
  t.compulsory = fixed + n * sizeof(double);
  t.logical = fixed + nnz * sizeof(double);
  return t;
}

// ---------------------------------------------------------------------------------------
// Output helpers.
// ---------------------------------------------------------------------------------------

void heading(const std::string& title) { std::printf("\n== %s ==\n", title.c_str()); }

// Least-squares slope of log(y) against log(x).
double fitted_exponent(const std::vector<double>& x, const std::vector<double>& y) {
  double sx = 0.0, sy = 0.0, sxx = 0.0, sxy = 0.0;
  const double n = static_cast<double>(x.size());
  for (std::size_t k = 0; k < x.size(); ++k) {
    const double lx = std::log(x[k]), ly = std::log(y[k]);
    sx += lx;
    sy += ly;
    sxx += lx * lx;
    sxy += lx * ly;
  }
  return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

// ---------------------------------------------------------------------------------------
// Sections.
// ---------------------------------------------------------------------------------------

json bench_bandwidth(const Settings& settings, double& triad_best) {
  heading("Memory bandwidth: STREAM triad a = b + s c");
  const std::size_t n = 10'000'000;  // 80 MB per array, 240 MB in all: far beyond any cache
  const int reps = settings.quick ? 5 : 20;
  json out = {{"array_elements", n},
              {"array_megabytes", n * sizeof(double) / 1e6},
              {"repetitions", reps},
              {"bytes_per_element", 24}};
  std::printf("arrays 3 x %.0f MB, best of %d\n", n * sizeof(double) / 1e6, reps);
  triad_best = 0.0;
  for (const int threads : settings.threads) {
    const double gbs = triad_bandwidth(n, threads, reps);
    triad_best = std::max(triad_best, gbs);
    out["gb_per_s"][std::to_string(threads)] = gbs;
    std::printf("  %d thread(s): %8.2f GB/s\n", threads, gbs);
  }
  out["best_gb_per_s"] = triad_best;
  return out;
}

// One size of the Delassus product benchmark: matrix-free and assembled, each thread count.
json bench_delassus_size(const Settings& settings, double triad_best, int spheres) {
  const auto build_start = Clock::now();
  const std::unique_ptr<ConeScene> scene = cone_scene(spheres, 3);
  const double build_seconds = seconds_since(build_start);
  const moreau::ContactSystem& system = *scene->system;
  const int n = system.size();
  std::mt19937 rng(kSeed);
  std::normal_distribution<double> normal(0.0, 1.0);
  VecX x(n), y(n);
  for (int k = 0; k < n; ++k) x(k) = normal(rng);
  const double min_seconds = settings.quick ? 0.3 : 1.5;
  const Traffic free_bytes = matrix_free_traffic(system);

  std::printf(
      "\n%d spheres: contacts %d (%.2f per sphere), %d unknowns, scene + ContactSystem "
      "built in %.2f s\n",
      spheres, system.contact_count(), static_cast<double>(system.contact_count()) / spheres, n,
      build_seconds);
  std::printf("bytes per product: matrix-free compulsory %.1f MB, logical %.1f MB\n",
              free_bytes.compulsory / 1e6, free_bytes.logical / 1e6);
  json out = {
      {"spheres", spheres},
      {"contacts", system.contact_count()},
      {"rows_per_contact", 3},
      {"matrix_free",
       {{"bytes_compulsory", free_bytes.compulsory}, {"bytes_logical", free_bytes.logical}}}};
  const auto assemble_start = Clock::now();
  const moreau::SparseDelassus sparse(system.assemble(), 3);
  const double assemble_seconds = seconds_since(assemble_start);
  const Traffic sparse_bytes = sparse_traffic(sparse.matrix());
  std::printf(
      "assembled W: %ld non-zeros (%.1f per row), assembled in %.2f s; bytes per product: "
      "compulsory %.1f MB, logical %.1f MB\n",
      static_cast<long>(sparse.matrix().nonZeros()),
      static_cast<double>(sparse.matrix().nonZeros()) / n, assemble_seconds,
      sparse_bytes.compulsory / 1e6, sparse_bytes.logical / 1e6);
  out["assembled"] = {{"non_zeros", sparse.matrix().nonZeros()},
                      {"assemble_seconds", assemble_seconds},
                      {"bytes_compulsory", sparse_bytes.compulsory},
                      {"bytes_logical", sparse_bytes.logical}};

  VecX y_sparse(n);
  system.apply(x, y);
  sparse.apply(x, y_sparse);
  const double difference = (y - y_sparse).cwiseAbs().maxCoeff() / y.cwiseAbs().maxCoeff();
  out["max_relative_difference"] = difference;
  std::printf("max |W x (matrix-free) - W x (assembled)| / max |W x| = %.2e\n", difference);

  std::printf("  %-12s %7s %12s %10s %10s %9s %11s %9s\n", "operator", "threads", "products/s",
              "GB/s comp", "GB/s logic", "/ triad", "triad here", "/ here");
  for (const int threads : settings.threads) {
    omp_set_num_threads(threads);
    const auto report = [&](const char* name, const std::function<void()>& product,
                            const Traffic& bytes) {
      // A triad at the same thread count just before the product: on a loaded machine the
      // bandwidth available changes from minute to minute, and this ratio compares the two
      // under the same conditions.
      const double triad_here = triad_bandwidth(10'000'000, threads, 5);
      const double t = best_time(product, 5, min_seconds);
      const double comp = bytes.compulsory / t / 1e9;
      const double logic = bytes.logical / t / 1e9;
      std::printf("  %-12s %7d %12.1f %10.2f %10.2f %9.2f %11.2f %9.2f\n", name, threads, 1.0 / t,
                  comp, logic, comp / triad_best, triad_here, comp / triad_here);
      return json{{"seconds", t},
                  {"products_per_second", 1.0 / t},
                  {"gb_per_s_compulsory", comp},
                  {"gb_per_s_logical", logic},
                  {"ratio_to_triad", comp / triad_best},
                  {"triad_adjacent_gb_per_s", triad_here},
                  {"ratio_to_adjacent_triad", comp / triad_here}};
    };
    out["matrix_free"]["threads"][std::to_string(threads)] = report(
        "matrix-free", [&] { system.apply(x, y); }, free_bytes);
    out["assembled"]["threads"][std::to_string(threads)] = report(
        "assembled", [&] { sparse.apply(x, y_sparse); }, sparse_bytes);
  }
  const std::string one = std::to_string(settings.threads.front());
  const std::string two = std::to_string(settings.threads.back());
  for (const char* kind : {"matrix_free", "assembled"}) {
    out[kind]["speedup"] = out[kind]["threads"][one]["seconds"].get<double>() /
                           out[kind]["threads"][two]["seconds"].get<double>();
  }
  std::printf("speed-up %s -> %s threads: matrix-free %.2f, assembled %.2f\n", one.c_str(),
              two.c_str(), out["matrix_free"]["speedup"].get<double>(),
              out["assembled"]["speedup"].get<double>());
  omp_set_num_threads(settings.threads.back());
  return out;
}

// The interior point method's inner loop (Kleinert Sec. 4.2) at about 1e4, 1e5 and 1e6
// contacts (~1.85 contacts per sphere in the packing), beside the assembled product and the
// triad bandwidth of the same run.
json bench_delassus(const Settings& settings, double triad_best) {
  heading("Delassus product W x, frictional (3 rows), ~1e4, 1e5, 1e6 contacts");
  json out = json::array();
  for (const int spheres : {5'400, 54'000, 540'000}) {
    out.push_back(bench_delassus_size(settings, triad_best, spheres));
  }
  return out;
}

// CPU seconds of the whole process (all threads), from a monotonic per-process clock.
double process_cpu_clock() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

// The same packing with its body indices permuted at random (seeded): what a long run's
// settled packing looks like to the detector, whose canonical contact order follows body
// indices while its grid follows space.
moreau::World shuffled(moreau::World world, unsigned seed) {
  std::mt19937 rng(seed);
  std::shuffle(world.bodies.begin(), world.bodies.end(), rng);
  return world;
}

struct CollisionTiming {
  double wall = 1e300, cpu = 1e300;
  moreau::CollisionStats stats;  // of the best wall-time call
};

// Best wall time and best CPU time of `detect` over >= 3 calls and >= min_seconds; `prepare`,
// where given, runs before each call, outside the timing.
CollisionTiming best_collision_call(const std::function<void(moreau::CollisionStats&)>& detect,
                                    double min_seconds,
                                    const std::function<void()>& prepare = nullptr) {
  CollisionTiming best;
  const auto start = Clock::now();
  for (int rep = 0; rep < 3 || seconds_since(start) < min_seconds; ++rep) {
    if (prepare) prepare();
    moreau::CollisionStats stats;
    const double cpu0 = process_cpu_clock();
    const auto t0 = Clock::now();
    detect(stats);
    const double t = seconds_since(t0);
    best.cpu = std::min(best.cpu, process_cpu_clock() - cpu0);
    if (t < best.wall) {
      best.wall = t;
      best.stats = stats;
    }
  }
  return best;
}

json timing_json(const CollisionTiming& timing, double n, double c) {
  return {{"broad_phase_seconds", timing.stats.broad_phase_seconds},
          {"narrow_phase_seconds", timing.stats.narrow_phase_seconds},
          {"total_seconds", timing.wall},
          {"cpu_seconds", timing.cpu},
          {"cpu_ns_per_sphere", 1e9 * timing.cpu / n},
          {"cpu_ns_per_contact", 1e9 * timing.cpu / c}};
}

// detect_contacts (fresh arrays and output at every call), a CollisionDetector reused with one
// output vector and the same input at every call, and the reused detector on the packing moved
// before each call by a random offset of up to one grid cell per axis. Called again and again
// on one input, the sweep's branches (run lengths, hits) repeat exactly, and at 1e3 spheres the
// branch predictor learns them (a third of the sweep's time); a stepper's input moves between
// calls and the solver's work comes in between. The moved packing has the same contacts, but
// its bodies fall into different cells at every call. `after_solve`: the reused detector on the
// unmoved packing with 20 PGS iterations on its frictional cone problem before each call, as
// in a time step, whose solver's branches and memory traffic come between two detections.
json time_collision(const moreau::World& world, int threads, double min_seconds) {
  omp_set_num_threads(threads);
  const moreau::CollisionOptions options;
  const CollisionTiming fresh = best_collision_call(
      [&](moreau::CollisionStats& stats) {
        const std::vector<moreau::Contact> contacts =
            moreau::detect_contacts(world, options, &stats);
      },
      min_seconds);
  moreau::CollisionDetector detector;
  std::vector<moreau::Contact> contacts;
  const CollisionTiming reused = best_collision_call(
      [&](moreau::CollisionStats& stats) { detector.detect(world, options, contacts, &stats); },
      min_seconds);
  moreau::World moving = world;
  std::mt19937 rng(kSeed + 2);
  double largest_radius = 0.0;
  for (const moreau::RigidBody& body : world.bodies)
    largest_radius = std::max(largest_radius, moreau::bounding_radius(body.shape.geometry));
  std::uniform_real_distribution<double> offset(0.0, 2.0 * largest_radius + options.margin);
  const CollisionTiming moved = best_collision_call(
      [&](moreau::CollisionStats& stats) { detector.detect(moving, options, contacts, &stats); },
      min_seconds,
      [&] {
        const moreau::Vec3 shift(offset(rng), offset(rng), offset(rng));
        for (std::size_t i = 0; i < world.bodies.size(); ++i)
          moving.bodies[i].position = world.bodies[i].position + shift;
      });
  const std::unique_ptr<ConeScene> scene = cone_scene(world, 3);
  moreau::AnySolverOptions pgs_options = moreau::default_solver_options("pgs");
  pgs_options.common().tolerance = 0.0;
  pgs_options.common().max_iterations = 20;
  pgs_options.common().record_history = false;
  const std::unique_ptr<moreau::ContactSolver> pgs = moreau::make_solver("pgs", pgs_options);
  const CollisionTiming after_solve = best_collision_call(
      [&](moreau::CollisionStats& stats) { detector.detect(world, options, contacts, &stats); },
      min_seconds,
      [&] {
        VecX r = VecX::Zero(scene->problem.size());
        pgs->solve(scene->problem, r);
      });
  if (moved.stats.contacts != reused.stats.contacts)
    throw std::runtime_error("collision benchmark: the moved packing has " +
                             std::to_string(moved.stats.contacts) + " contacts, the packing " +
                             std::to_string(reused.stats.contacts));
  const double n = static_cast<double>(world.bodies.size());
  const double c = static_cast<double>(fresh.stats.contacts);
  std::printf(
      "  %9.0f %9ld %7.3f %9.3f %9.3f %9.3f %9.3f %9.1f %9.3f %9.1f %8.1f %9.1f %9.1f %3d\n", n,
      fresh.stats.contacts, c / n, 1e3 * fresh.stats.broad_phase_seconds,
      1e3 * fresh.stats.narrow_phase_seconds, 1e3 * fresh.wall, 1e3 * fresh.cpu,
      1e9 * fresh.cpu / n, 1e3 * reused.cpu, 1e9 * reused.cpu / n, 1e9 * reused.cpu / c,
      1e9 * moved.cpu / n, 1e9 * after_solve.cpu / n, threads);
  return {{"spheres", world.bodies.size()},
          {"threads", threads},
          {"contacts", fresh.stats.contacts},
          {"contacts_per_sphere", c / n},
          {"candidate_pairs", fresh.stats.candidate_pairs},
          {"broad_phase_seconds", fresh.stats.broad_phase_seconds},
          {"narrow_phase_seconds", fresh.stats.narrow_phase_seconds},
          {"total_seconds", fresh.wall},
          {"cpu_seconds", fresh.cpu},
          {"ns_per_sphere", 1e9 * fresh.wall / n},
          {"cpu_ns_per_sphere", 1e9 * fresh.cpu / n},
          {"cpu_ns_per_contact", 1e9 * fresh.cpu / c},
          {"reused", timing_json(reused, n, c)},
          {"moved", timing_json(moved, n, c)},
          {"after_solve", timing_json(after_solve, n, c)}};
}

// Least-squares exponent of one time field against N (or against the contact count) over the
// rows of one thread count, from the first size and from the second.
void fit_rows(const json& rows, int threads, const std::string& name, const char* field,
              const char* mode, bool per_contact, json& out) {
  const std::string key = std::to_string(threads);
  std::vector<double> n_all, t_all;
  for (const json& row : rows)
    if (row["threads"] == threads) {
      n_all.push_back(per_contact ? row["contacts"].get<double>() : row["spheres"].get<double>());
      t_all.push_back((mode ? row[mode][field] : row[field]).get<double>());
    }
  out["fitted_exponent_" + name][key] = fitted_exponent(n_all, t_all);
  // N >= 1e4: the smallest size is the most sensitive to fixed costs.
  out["fitted_exponent_" + name + "_from_10000"][key] =
      fitted_exponent(std::vector<double>(n_all.begin() + 1, n_all.end()),
                      std::vector<double>(t_all.begin() + 1, t_all.end()));
  std::printf("  fitted exponent of %s, %d thread(s): %.3f (N >= 1e4: %.3f)\n", name.c_str(),
              threads, out["fitted_exponent_" + name][key].get<double>(),
              out["fitted_exponent_" + name + "_from_10000"][key].get<double>());
}

// Exponents of the wall and CPU time against N, fresh and reused, and of the CPU time against
// the contact count (the finite block's surface makes contacts per sphere grow with N), per
// thread count, and the speed-ups of the first over the last thread count at each size.
json collision_fits(const Settings& settings, const json& rows) {
  json out;
  for (const int threads : settings.threads) {
    fit_rows(rows, threads, "wall", "total_seconds", nullptr, false, out);
    fit_rows(rows, threads, "cpu", "cpu_seconds", nullptr, false, out);
    fit_rows(rows, threads, "cpu_vs_contacts", "cpu_seconds", nullptr, true, out);
    for (const char* mode : {"reused", "moved", "after_solve"}) {
      const std::string m = mode;
      fit_rows(rows, threads, "wall_" + m, "total_seconds", mode, false, out);
      fit_rows(rows, threads, "cpu_" + m, "cpu_seconds", mode, false, out);
      fit_rows(rows, threads, "cpu_" + m + "_vs_contacts", "cpu_seconds", mode, true, out);
    }
  }
  for (const json& a : rows)
    for (const json& b : rows)
      if (a["spheres"] == b["spheres"] && a["threads"] == settings.threads.front() &&
          b["threads"] == settings.threads.back() && settings.threads.size() > 1) {
        const double s = a["total_seconds"].get<double>() / b["total_seconds"].get<double>();
        out["speedup"][std::to_string(a["spheres"].get<int>())] = s;
        std::printf("  speed-up %d -> %d threads at %d spheres: %.2f\n", settings.threads.front(),
                    settings.threads.back(), a["spheres"].get<int>(), s);
      }
  return out;
}

// detect_contacts on packings of 1e3 .. 1e6 spheres, in lattice index order (neighbours have
// nearby indices) and with shuffled indices.
json bench_collision(const Settings& settings) {
  heading("Collision detection (broad + narrow phase), polydisperse sphere packing");
  // The fit spans 1e3..1e6 in both modes (three decades, over which linear scaling is
  // judged); quick mode takes fewer repetitions.
  const std::vector<int> sizes{1'000, 10'000, 100'000, 1'000'000};
  const double min_seconds = settings.quick ? 0.3 : 1.0;
  json out = json::object();
  for (const bool shuffle : {false, true}) {
    const std::string order = shuffle ? "shuffled" : "lattice";
    std::printf("\nbody indices in %s order\n", order.c_str());
    std::printf("  %9s %9s %7s %9s %9s %9s %9s %9s %9s %9s %8s %9s %9s %3s\n", "spheres",
                "contacts", "c/sphere", "broad ms", "narrow ms", "wall ms", "CPU ms", "CPU ns/s",
                "reuse CPU", "ns/sphere", "ns/cont", "moved", "aft.solve", "thr");
    json rows = json::array();
    for (const int n : sizes) {
      const moreau::World world =
          shuffle ? shuffled(sphere_packing(n, kSeed), kSeed + 1) : sphere_packing(n, kSeed);
      for (const int threads : settings.threads)
        rows.push_back(time_collision(world, threads, min_seconds));
    }
    out[order] = collision_fits(settings, rows);
    out[order]["runs"] = rows;
  }
  omp_set_num_threads(settings.threads.back());
  return out;
}

json bench_solvers(const Settings& settings) {
  const int spheres = 10'000;
  const int iterations = settings.quick ? 50 : 300;
  heading("Solver iterations per second, " + std::to_string(spheres) +
          " spheres, frictional cone problem (Coulomb, mu 0.5)");
  const std::unique_ptr<ConeScene> scene = cone_scene(spheres, 3);
  std::printf("contacts %d; %d iterations per solve (tolerance 0: no early stop)\n",
              scene->system->contact_count(), iterations);
  json out = {{"spheres", spheres},
              {"contacts", scene->system->contact_count()},
              {"iterations", iterations}};
  std::printf("  %-6s %7s %12s %12s %12s\n", "solver", "threads", "iter/s", "final merit",
              "seconds");
  for (const char* solver_name : {"pgs", "pgj", "apgd"}) {
    const std::string name = solver_name;
    moreau::AnySolverOptions any = moreau::default_solver_options(name);
    moreau::SolverOptions& common = any.common();
    common.tolerance = 0.0;
    common.max_iterations = iterations;
    common.record_history = false;
    common.warm_start = false;
    // pgs, pgj and apgd: one merit evaluation, at the end.
    moreau::set_solver_option(name, any, "check_every", static_cast<double>(iterations));
    moreau::set_solver_option(name, any, "divergence_factor", 1e300);
    if (auto* pgj = any.get_if<moreau::PgjOptions>()) pgj->relaxation = 0.3;
    const std::unique_ptr<moreau::ContactSolver> solver = moreau::make_solver(name, any);
    // PGS is serial: its rate is measured once.
    const std::vector<int> thread_counts =
        name == "pgs" ? std::vector<int>{settings.threads.back()} : settings.threads;
    for (const int threads : thread_counts) {
      omp_set_num_threads(threads);
      moreau::SolverStats best_stats;
      double best = 1e300;
      for (int rep = 0; rep < (settings.quick ? 2 : 3); ++rep) {
        VecX r = VecX::Zero(scene->problem.size());
        const auto t0 = Clock::now();
        const moreau::SolverStats stats = solver->solve(scene->problem, r);
        const double t = seconds_since(t0);
        if (t < best) {
          best = t;
          best_stats = stats;
        }
      }
      const double rate = best_stats.iterations / best;
      std::printf("  %-6s %7d %12.1f %12.3e %12.3f\n", name.c_str(), threads, rate,
                  best_stats.merit, best);
      out[name]["threads"][std::to_string(threads)] = {
          {"iterations_per_second", rate},
          {"iterations", best_stats.iterations},
          {"seconds", best},
          {"final_merit", best_stats.merit},
          {"termination", moreau::to_string(best_stats.termination)}};
    }
    if (thread_counts.size() > 1) {
      const double s =
          out[name]["threads"][std::to_string(settings.threads.front())]["seconds"].get<double>() /
          out[name]["threads"][std::to_string(settings.threads.back())]["seconds"].get<double>();
      out[name]["speedup"] = s;
      std::printf("  %s speed-up %d -> %d threads: %.2f\n", name.c_str(), settings.threads.front(),
                  settings.threads.back(), s);
    }
  }
  omp_set_num_threads(settings.threads.back());
  return out;
}

// The interior point method's Krylov iteration (Kleinert et al. Sec. 4.2, IPM-MF; Newton
// systems in the body space, conic/interior_point.hpp) on the packing made like the blade
// trench's problem (Kleinert Sec. 5): non-rotating spheres, potential contacts within half the
// mean radius (0.375 r0) of each other, the convex relaxation (eq. 22) at mu = 0.25, stopped on
// the paper's error at 1e-3. Seconds per Krylov iteration (the whole
// solve's wall time over its Krylov iterations: Newton-step overheads included, as in the
// trench's `solve time per Krylov iteration`), CPU ns per unknown, and the bytes one body-space
// iteration moves (README.md "Byte-count model") over the triad.
json bench_ipm(const Settings& settings, double triad_best) {
  json out;
  const std::vector<int> sizes{10000, 100000};
  // Table 1's loosest tolerance: its solves take 1,000-5,000 Krylov iterations at these sizes,
  // enough for the Newton steps' own work (scaling, preconditioner) to be a small part.
  const double tolerance = 1e-3;
  heading(
      "IPM Krylov iterations, non-rotating sphere packing, margin 0.375 r0, mu = 0.25, "
      "error(gamma, u) <= 1e-3");
  std::printf("  %8s %9s %12s %7s %7s %8s %9s %12s %10s %10s %8s\n", "spheres", "contacts",
              "product", "threads", "Newton", "Krylov", "seconds", "s / Krylov", "ns/unknown",
              "GB/s", "/ triad");
  for (const int spheres : sizes) {
    moreau::World world = sphere_packing(spheres, kSeed);
    for (moreau::RigidBody& body : world.bodies) body.rotation_locked = true;
    moreau::CollisionOptions collision;
    collision.margin = 0.375;
    const std::vector<moreau::Contact> contacts = moreau::detect_contacts(world, collision);
    const moreau::ContactSystem system(world, contacts, 3);
    const double dt = 1e-2;
    VecX free_velocity = VecX::Zero(6 * static_cast<Eigen::Index>(world.bodies.size()));
    for (std::size_t b = 0; b < world.bodies.size(); ++b)
      free_velocity.segment<3>(6 * b) = dt * world.gravity;
    moreau::ConeProblem problem;
    problem.delassus = &system;
    problem.q = system.contact_velocity(free_velocity);
    for (std::size_t i = 0; i < contacts.size(); ++i) problem.q(3 * i) += contacts[i].gap / dt;
    problem.mu = VecX::Constant(static_cast<Eigen::Index>(contacts.size()), 0.25);
    problem.friction_model = moreau::FrictionModel::convex_relaxation;
    moreau::SolverOptions common;
    common.tolerance = tolerance;
    common.max_iterations = 200;
    common.record_history = false;
    common.warm_start = false;
    // Bytes of one body-space Krylov iteration (3 rows per body, 3 per cone), per product:
    // - matrix-free: K p = p + F D^-1 F^T p reads per cone its two 3 x 3 column blocks, D^-1
    //   and two body indices and writes and reads back two side values, and per body its side
    //   list and p, and writes K p (an upper bound of the proportional form's traffic);
    // - assembled: one 3 x 3 block and a column index per pair of bodies in contact (at most
    //   one per contact), a 3 x 3 diagonal block per body, p and K p;
    // and for both the CG's updates of w, r, z and the direction and its two dot products,
    // 14 passes over the body vectors, and the preconditioner's 3 x 3 block per body.
    const double cones = static_cast<double>(contacts.size());
    const double bodies = static_cast<double>(world.bodies.size());
    const double cg_bytes = bodies * (14 * 24 + 72);
    const double matrix_free_bytes =
        cones * (2 * 72 + 72 + 8 + 2 * 24 + 2 * 24 + 2 * 4) + bodies * (4 + 3 * 24) + cg_bytes;
    const double assembled_bytes = cones * (72 + 4) + bodies * (72 + 4 + 3 * 24) + cg_bytes;
    // - Gauss-Seidel (Eisenstat's split form): a backward and a forward sweep instead of the
    //   product, each reading the lower blocks and the diagonal inverses once, the backward
    //   sweep's accumulator written and read, the two sweeps' results and p.
    const double gauss_seidel_bytes =
        2 * cones * (72 + 4) + bodies * (2 * (72 + 4) + 6 * 24) + cg_bytes;
    json row = {
        {"spheres", spheres}, {"contacts", contacts.size()}, {"unknowns", 3 * contacts.size()}};
    struct Variant {
      std::string product;
      bool assembled;
      moreau::conic::BodySpacePreconditioner preconditioner;
      double bytes;
    };
    using Preconditioner = moreau::conic::BodySpacePreconditioner;
    const std::vector<Variant> variants = {
        {"assembled", true, Preconditioner::body_blocks, assembled_bytes},
        {"matrix-free", false, Preconditioner::body_blocks, matrix_free_bytes},
        {"gauss-seidel", true, Preconditioner::symmetric_gauss_seidel, gauss_seidel_bytes}};
    for (const Variant& variant : variants) {
      const std::string& product = variant.product;
      const double bytes = variant.bytes;
      moreau::IpmOptions ipm;
      static_cast<moreau::SolverOptions&>(ipm) = common;
      ipm.stopping = moreau::IpmStopping::kleinert_error;
      ipm.core.assemble_body_space = variant.assembled;
      ipm.core.body_space_preconditioner = variant.preconditioner;
      const moreau::InteriorPointSolver solver(ipm);
      json& entry = row["products"][product];
      entry["bytes_per_iteration_model"] = bytes;
      for (const int threads : settings.threads) {
        omp_set_num_threads(threads);
        VecX r = VecX::Zero(problem.size());
        const double cpu0 = process_cpu_seconds();
        const auto t0 = Clock::now();
        const moreau::SolverStats stats = solver.solve(problem, r);
        const double t = seconds_since(t0);
        const double cpu = process_cpu_seconds() - cpu0;
        const double krylov = std::max(stats.krylov_iterations, 1);
        const double per_iteration = t / krylov;
        const double ns_per_unknown = 1e9 * cpu / krylov / (3.0 * cones);
        const double gb_per_s = bytes / per_iteration / 1e9;
        std::printf("  %8d %9zu %12s %7d %7d %8d %9.2f %12.3e %10.1f %10.2f %8.2f\n", spheres,
                    contacts.size(), product.c_str(), threads, stats.iterations,
                    stats.krylov_iterations, t, per_iteration, ns_per_unknown, gb_per_s,
                    gb_per_s / triad_best);
        entry["threads"][std::to_string(threads)] = {
            {"newton_steps", stats.iterations},
            {"krylov_iterations", stats.krylov_iterations},
            {"seconds", t},
            {"cpu_seconds", cpu},
            {"seconds_per_krylov_iteration", per_iteration},
            {"cpu_ns_per_unknown", ns_per_unknown},
            {"gb_per_s_model", gb_per_s},
            {"ratio_to_triad", gb_per_s / triad_best},
            {"merit", stats.merit},
            {"termination", moreau::to_string(stats.termination)}};
      }
      if (settings.threads.size() > 1) {
        const json& first = entry["threads"][std::to_string(settings.threads.front())];
        const json& last = entry["threads"][std::to_string(settings.threads.back())];
        entry["speedup_per_iteration"] = first["seconds_per_krylov_iteration"].get<double>() /
                                         last["seconds_per_krylov_iteration"].get<double>();
        std::printf("  %s: speed-up per Krylov iteration %d -> %d threads: %.2f\n", product.c_str(),
                    settings.threads.front(), settings.threads.back(),
                    entry["speedup_per_iteration"].get<double>());
      }
    }
    for (const int threads : settings.threads) {
      const std::string key = std::to_string(threads);
      const double ratio =
          row["products"]["matrix-free"]["threads"][key]["seconds_per_krylov_iteration"]
              .get<double>() /
          row["products"]["assembled"]["threads"][key]["seconds_per_krylov_iteration"]
              .get<double>();
      row["assembled_speedup_per_iteration"][key] = ratio;
      std::printf("  %d thread(s): assembled product %.2fx faster per Krylov iteration\n", threads,
                  ratio);
      const json& products = row["products"];
      const double gauss_seidel_speedup =
          products["assembled"]["threads"][key]["seconds"].get<double>() /
          products["gauss-seidel"]["threads"][key]["seconds"].get<double>();
      row["gauss_seidel_speedup_per_solve"][key] = gauss_seidel_speedup;
      std::printf("  %d thread(s): Gauss-Seidel solve %.2fx faster than the body blocks'\n",
                  threads, gauss_seidel_speedup);
    }
    out["sizes"].push_back(row);
  }
  omp_set_num_threads(settings.threads.back());
  return out;
}

// Penalty DEM on the published-scale cannonball pyramid (scenes/cannonball_pyramid.json:
// 2,870 spheres, Olsen & Kamrin Sec. 8.2), from the scene's initial state, which includes the first
// impacts of the layers. Steps per second at each thread count.
json bench_dem_pyramid(const Settings& settings) {
  const std::string path = std::string(MOREAU_SOURCE_DIR) + "/scenes/cannonball_pyramid.json";
  const moreau::Scene scene = moreau::load_scene(path);
  moreau::DemOptions dem = scene.options_of<moreau::DemOptions>("dem");
  // The Hookean variant at 0.9 of the stability estimate, as the pyramid experiment runs it.
  dem.time_step = 1.0;
  dem.time_step = 0.9 * moreau::estimate_stable_time_step(scene.world, dem);
  const long steps = settings.quick ? 2000 : 20000;
  heading("DEM steps per second, cannonball pyramid (" + std::to_string(scene.world.bodies.size()) +
          " spheres, Hookean, 0.9 of the stability estimate)");
  json out = {
      {"spheres", scene.world.bodies.size()}, {"time_step", dem.time_step}, {"steps", steps}};
  std::printf("  %7s %12s %14s %10s %12s\n", "threads", "steps/s", "sphere-steps/s", "contacts",
              "steps/CPU s");
  for (const int threads : settings.threads) {
    omp_set_num_threads(threads);
    moreau::World world = scene.world;
    // The run loop of `moreau run`, without observers: the DEM converts no contacts.
    moreau::Simulation simulation(std::make_unique<moreau::DemStepper>(world, dem));
    const auto t0 = Clock::now();
    const double cpu0 = process_cpu_clock();
    simulation.run(steps);
    const double t = seconds_since(t0);
    const double cpu = process_cpu_clock() - cpu0;
    const double rate = static_cast<double>(steps) / t;
    const std::size_t contacts =
        static_cast<std::size_t>(simulation.stepper().last_report().active_contacts);
    std::printf("  %7d %12.1f %14.3e %10zu %12.1f\n", threads, rate,
                rate * static_cast<double>(world.bodies.size()), contacts,
                static_cast<double>(steps) / cpu);
    out["threads"][std::to_string(threads)] = {{"steps_per_second", rate},
                                               {"seconds", t},
                                               {"cpu_seconds", cpu},
                                               {"steps_per_cpu_second", steps / cpu},
                                               {"contacts_at_end", contacts}};
  }
  if (settings.threads.size() > 1) {
    const double s =
        out["threads"][std::to_string(settings.threads.front())]["seconds"].get<double>() /
        out["threads"][std::to_string(settings.threads.back())]["seconds"].get<double>();
    out["speedup"] = s;
    std::printf("  speed-up %d -> %d threads: %.2f\n", settings.threads.front(),
                settings.threads.back(), s);
  }
  omp_set_num_threads(settings.threads.back());
  return out;
}

int usage(const char* program, int code) {
  std::fprintf(
      code == 0 ? stdout : stderr,
      "usage: %s [--quick] [--only SECTION] [--threads LIST] [--json FILE]\n"
      "  --quick      smaller sweeps and fewer repetitions (collision: 1e3 to 1e6 spheres either "
      "way)\n"
      "  --only SECTION  one of bandwidth, delassus, collision, solvers, ipm, dem_pyramid\n"
      "  --threads LIST  comma-separated thread counts (default 1,2; the speed-ups compare\n"
      "               the first with the last)\n"
      "  --json FILE  also write the figures as JSON to FILE\n",
      program);
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  Settings settings;
  for (int k = 1; k < argc; ++k) {
    const std::string arg = argv[k];
    if (arg == "--quick") {
      settings.quick = true;
    } else if (arg == "--only" && k + 1 < argc) {
      settings.only = argv[++k];
      const std::vector<std::string> sections = {"bandwidth", "delassus", "collision",
                                                 "solvers",   "ipm",      "dem_pyramid"};
      if (std::find(sections.begin(), sections.end(), settings.only) == sections.end()) {
        std::fprintf(stderr, "--only: unknown section '%s'\n", settings.only.c_str());
        return usage(argv[0], 2);
      }
    } else if (arg == "--threads" && k + 1 < argc) {
      settings.threads.clear();
      std::stringstream list(argv[++k]);
      for (std::string item; std::getline(list, item, ',');) {
        const int threads = std::atoi(item.c_str());
        if (threads < 1) {
          std::fprintf(stderr, "--threads: '%s' is not a positive thread count\n", item.c_str());
          return usage(argv[0], 2);
        }
        settings.threads.push_back(threads);
      }
      if (settings.threads.empty()) return usage(argv[0], 2);
    } else if (arg == "--json" && k + 1 < argc) {
      settings.json_path = argv[++k];
    } else if (arg == "--help" || arg == "-h") {
      return usage(argv[0], 0);
    } else {
      std::fprintf(stderr, "unknown or incomplete argument '%s'\n", arg.c_str());
      return usage(argv[0], 2);
    }
  }

  const auto start = Clock::now();
  json report;
  report["machine"] = {{"cpu_model", cpu_model()},
                       {"hardware_concurrency", std::thread::hardware_concurrency()},
                       {"omp_max_threads", omp_get_max_threads()},
                       {"compiler", __VERSION__}};
  report["mode"] = settings.quick ? "quick" : "full";
  report["load_average_start"] = load_average();
  report["seed"] = kSeed;
  std::printf(
      "Moreau benchmark (%s)\nmachine: %s, hardware_concurrency %u, OpenMP max threads %d\n"
      "compiler: %s\nseed: %u\n",
      settings.quick ? "quick" : "full", cpu_model().c_str(), std::thread::hardware_concurrency(),
      omp_get_max_threads(), __VERSION__, kSeed);

  auto selected = [&](const char* section) {
    return settings.only.empty() || settings.only == section;
  };
  double triad_best = 0.0;
  if (selected("bandwidth") || selected("delassus") || selected("ipm"))
    report["bandwidth"] = bench_bandwidth(settings, triad_best);
  if (selected("delassus")) report["delassus"] = bench_delassus(settings, triad_best);
  if (selected("collision")) report["collision"] = bench_collision(settings);
  if (selected("solvers")) report["solvers"] = bench_solvers(settings);
  if (selected("ipm")) report["ipm"] = bench_ipm(settings, triad_best);
  if (selected("dem_pyramid")) report["dem_pyramid"] = bench_dem_pyramid(settings);
  const double wall = seconds_since(start);
  report["total_seconds"] = wall;
  report["load_average_end"] = load_average();
  // CPU seconds per wall second: up to the thread count when the machine is otherwise idle;
  // well below 1 means other processes took the cores and the figures are pessimistic.
  report["cpu_share"] = process_cpu_seconds() / wall;
  std::printf("\ntotal %.1f s, CPU share %.2f, load average at end: %s\n", wall,
              report["cpu_share"].get<double>(),
              report["load_average_end"].get<std::string>().c_str());

  if (!settings.json_path.empty()) {
    std::ofstream file(settings.json_path);
    if (!file) {
      std::fprintf(stderr, "cannot write %s\n", settings.json_path.c_str());
      return 1;
    }
    file << report.dump(2) << '\n';
    std::printf("JSON written to %s\n", settings.json_path.c_str());
  }
  return 0;
}
