#define BOOST_TEST_MODULE fclib
#include <boost/test/unit_test.hpp>
// FCLIB reading, writing, validation, global reduction and natural-map merit, on generated
// problems and on the collection files of MOREAU_FCLIB_DATA (shared/data/fclib, README.md there).
#include <unistd.h>

#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "moreau/core/error.hpp"
#include "moreau/fclib/fclib.hpp"
#include "moreau/solver/projected_gauss_seidel.hpp"
#include "moreau/solver/solver.hpp"
#include "moreau/solver/solver_registry.hpp"

namespace fs = std::filesystem;
using moreau::VecX;
using namespace moreau::fclib;

namespace {

// The collection's location, from CMake (MOREAU_FCLIB_DATA in the top-level CMakeLists.txt).
const fs::path kDataDirectory = MOREAU_FCLIB_DATA;

// A fresh directory per test run, removed at the end.
struct TempDirectory {
  fs::path path = fs::temp_directory_path() / ("moreau_fclib_test_" + std::to_string(::getpid()));
  TempDirectory() { fs::create_directories(path); }
  ~TempDirectory() { fs::remove_all(path); }
};

// A small triplet list with a repeated-free, unsymmetric pattern, so that row/column
// swaps in any storage would show.
ColumnMatrix sample_matrix(int rows, int columns, double scale) {
  ColumnMatrix a(rows, columns);
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < columns; ++j) {
      if ((3 * i + j) % 4 == 0 || i == j) a.insert(i, j) = scale * (1.0 + i + 0.1 * j);
    }
  }
  a.makeCompressed();
  return a;
}

// 2 contacts in 3D: W symmetric positive definite, diagonal-dominant.
LocalProblem sample_local(Storage storage) {
  LocalProblem problem;
  problem.spacedim = 3;
  ColumnMatrix b = sample_matrix(6, 6, 0.1);
  ColumnMatrix w = ColumnMatrix(b.transpose()) * b;
  for (int i = 0; i < 6; ++i) w.coeffRef(i, i) += 2.0;
  problem.W = {w, storage};
  problem.V = StoredMatrix{sample_matrix(6, 2, 1.0), storage};
  problem.R = StoredMatrix{sample_matrix(2, 2, 3.0), storage};
  problem.q = (VecX(6) << -1.0, 0.5, 0.25, 2.0, -0.3, 0.1).finished();
  problem.mu = (VecX(2) << 0.3, 0.7).finished();
  problem.s = (VecX(2) << 1.0, 2.0).finished();
  problem.info = Info{"sample", "two contacts", "W s.p.d."};
  return problem;
}

GlobalProblem sample_global(Storage storage) {
  GlobalProblem problem;
  problem.spacedim = 2;
  ColumnMatrix m(4, 4);
  for (int i = 0; i < 4; ++i) m.insert(i, i) = 1.0 + i;
  m.insert(0, 1) = 0.2;
  m.insert(1, 0) = 0.2;
  m.makeCompressed();
  problem.M = {m, storage};
  problem.H = {sample_matrix(4, 4, 0.5), storage};
  problem.f = (VecX(4) << 0.1, -1.0, 0.0, -0.5).finished();
  problem.w = (VecX(4) << 0.0, 0.1, 0.2, 0.0).finished();
  problem.mu = (VecX(2) << 0.5, 0.0).finished();
  problem.info = Info{"global sample", "", ""};
  return problem;
}

bool same(const StoredMatrix& a, const StoredMatrix& b) {
  return a.storage == b.storage && a.matrix.rows() == b.matrix.rows() &&
         a.matrix.cols() == b.matrix.cols() && a.matrix.nonZeros() == b.matrix.nonZeros() &&
         ColumnMatrix(a.matrix - b.matrix).norm() == 0.0;
}

bool same(const std::optional<Info>& a, const std::optional<Info>& b) {
  return a.has_value() == b.has_value() &&
         (!a || (a->title == b->title && a->description == b->description &&
                 a->math_info == b->math_info));
}

// The InputError message of reading `path`, or "" when it reads.
std::string read_error(const fs::path& path) {
  try {
    read_file(path);
  } catch (const moreau::InputError& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

const std::vector<Storage> kStorages = {Storage::triplet, Storage::csc, Storage::csr};

}  // namespace

// A loop rather than BOOST_DATA_TEST_CASE: GCC 12 warns (-Wrestrict, a false positive) inside
// Boost's generated test-case names.
BOOST_AUTO_TEST_CASE(local_round_trip_is_exact) {
  for (const Storage storage : kStorages) {
    BOOST_TEST_CONTEXT(to_string(storage)) {
      const TempDirectory directory;
      File file;
      file.local = sample_local(storage);
      file.solution = Solution{{}, VecX::Constant(6, 0.5), VecX::Constant(6, -0.25), {}};
      file.guesses = {Solution{{}, VecX::Zero(6), VecX::Ones(6), {}},
                      Solution{{}, {}, VecX::Ones(6), {}}};
      const fs::path path = directory.path / ("local_" + to_string(storage) + ".hdf5");
      write_file(path, file);
      const File back = read_file(path);
      BOOST_REQUIRE(back.local && !back.global);
      const LocalProblem& a = *file.local;
      const LocalProblem& b = *back.local;
      BOOST_TEST(b.spacedim == a.spacedim);
      BOOST_TEST(same(b.W, a.W));
      BOOST_TEST(same(*b.V, *a.V));
      BOOST_TEST(same(*b.R, *a.R));
      BOOST_TEST((b.q == a.q));
      BOOST_TEST((b.mu == a.mu));
      BOOST_TEST((*b.s == *a.s));
      BOOST_TEST(same(b.info, a.info));
      BOOST_REQUIRE(back.solution);
      BOOST_TEST((back.solution->u == file.solution->u));
      BOOST_TEST((back.solution->r == file.solution->r));
      BOOST_TEST(back.solution->v.size() == 0);
      BOOST_REQUIRE(back.guesses.size() == 2u);
      BOOST_TEST((back.guesses[0].r == file.guesses[0].r));
      BOOST_TEST(back.guesses[1].u.size() == 0);
    }
  }
}

BOOST_AUTO_TEST_CASE(global_round_trip_is_exact) {
  for (const Storage storage : kStorages) {
    BOOST_TEST_CONTEXT(to_string(storage)) {
      const TempDirectory directory;
      File file;
      file.global = sample_global(storage);
      file.solution = Solution{VecX::Ones(4), VecX::Zero(4), VecX::Zero(4), {}};
      const fs::path path = directory.path / ("global_" + to_string(storage) + ".hdf5");
      write_file(path, file);
      const File back = read_file(path);
      BOOST_REQUIRE(back.global && !back.local);
      const GlobalProblem& a = *file.global;
      const GlobalProblem& b = *back.global;
      BOOST_TEST(b.spacedim == a.spacedim);
      BOOST_TEST(same(b.M, a.M));
      BOOST_TEST(same(b.H, a.H));
      BOOST_TEST(!b.G.has_value());
      BOOST_TEST((b.f == a.f));
      BOOST_TEST((b.w == a.w));
      BOOST_TEST((b.mu == a.mu));
      BOOST_TEST(same(b.info, a.info));
      BOOST_TEST((back.solution->v == file.solution->v));
    }
  }
}

BOOST_AUTO_TEST_CASE(invalid_data_is_rejected_naming_the_dataset) {
  const TempDirectory directory;
  const auto check = [&](const std::string& name, File file, const std::string& dataset,
                         const std::string& reason) {
    const fs::path path = directory.path / (name + ".hdf5");
    write_file(path, file);
    const std::string message = read_error(path);
    BOOST_TEST_INFO("case " << name << ": " << message);
    BOOST_TEST(contains(message, path.string()));
    BOOST_TEST(contains(message, dataset));
    BOOST_TEST(contains(message, reason));
  };
  File negative_mu;
  negative_mu.local = sample_local(Storage::csr);
  negative_mu.local->mu[1] = -0.1;
  check("negative_mu", negative_mu, "/fclib_local/vectors/mu", "must be >= 0");

  File nan_q;
  nan_q.local = sample_local(Storage::csc);
  nan_q.local->q[2] = std::numeric_limits<double>::quiet_NaN();
  check("nan_q", nan_q, "/fclib_local/vectors/q", "not finite");

  File nan_w;
  nan_w.local = sample_local(Storage::triplet);
  nan_w.local->W.matrix.coeffRef(0, 0) = std::numeric_limits<double>::infinity();
  check("nan_W", nan_w, "/fclib_local/W/x", "not finite");

  File short_q;
  short_q.local = sample_local(Storage::csr);
  short_q.local->q.conservativeResize(5);
  check("short_q", short_q, "/fclib_local/vectors/q", "expected 6");

  File bad_dimension;
  bad_dimension.local = sample_local(Storage::csr);
  bad_dimension.local->spacedim = 5;
  check("spacedim", bad_dimension, "/fclib_local/spacedim", "not supported");

  File bad_h;
  bad_h.global = sample_global(Storage::csc);
  bad_h.global->mu.conservativeResize(3);
  bad_h.global->mu[2] = 0.1;
  check("bad_H", bad_h, "/fclib_global/H", "expected 4 x 6");

  File bad_solution;
  bad_solution.global = sample_global(Storage::csr);
  bad_solution.solution = Solution{VecX::Ones(3), {}, {}, {}};
  check("bad_solution", bad_solution, "/solution/v", "the problem has 4");
}

BOOST_AUTO_TEST_CASE(missing_file_is_an_input_error) {
  BOOST_TEST(contains(read_error("/nonexistent/problem.hdf5"), "does not exist"));
}

// One contact in 3D, W = I, q = (-1, 0, 0): the ball pressed onto the plane with no
// tangential velocity sticks with r = (1, 0, 0), u = 0. Any other r has a positive merit.
BOOST_AUTO_TEST_CASE(merit_is_zero_at_the_known_solution) {
  LocalProblem problem;
  problem.spacedim = 3;
  problem.W.matrix.resize(3, 3);
  problem.W.matrix.setIdentity();
  problem.q = (VecX(3) << -1.0, 0.0, 0.0).finished();
  problem.mu = VecX::Constant(1, 0.5);
  BOOST_TEST(natural_map_merit(problem, (VecX(3) << 1.0, 0.0, 0.0).finished()) == 0.0);
  BOOST_TEST(natural_map_merit(problem, VecX::Zero(3)) == 1.0);

  // Sliding: q_t = 2 exceeds what friction can stop (mu r_n = 0.5): r = (1, -0.5, 0),
  // u = (0, 1.5, 0), and u + mu |u_t| e_n = (0.75, 1.5, 0) is normal to the cone at r.
  problem.q = (VecX(3) << -1.0, 2.0, 0.0).finished();
  BOOST_TEST(natural_map_merit(problem, (VecX(3) << 1.0, -0.5, 0.0).finished()) < 1e-15);
}

// An asymmetric W (as some collection files store) keeps its values: the sweep update of
// contact 0 must add the column block W(:, 0:3) dr, not the row block.
BOOST_AUTO_TEST_CASE(asymmetric_w_is_kept_as_stored) {
  LocalProblem problem = sample_local(Storage::csr);
  problem.W.matrix.coeffRef(3, 0) += 0.5;
  const LocalSystem system(problem);
  BOOST_TEST(!system.symmetric());
  const moreau::DelassusOperator& delassus = *system.problem().delassus;
  VecX work;
  delassus.begin_sweep(VecX::Zero(6), work);
  const moreau::Vec3 dr(1.0, 0.5, -0.25);
  delassus.update_sweep(0, dr, work);
  VecX r = VecX::Zero(6);
  r.head(3) = dr;
  const VecX expected = problem.W.matrix * r;
  BOOST_TEST((work - expected).norm() < 1e-15);
  BOOST_TEST(LocalSystem(sample_local(Storage::csr)).symmetric());
}

// The global reduction against the dense formulas, and v recovered from M v = H r + f.
BOOST_AUTO_TEST_CASE(global_reduction_matches_dense_formulas) {
  const GlobalProblem global = sample_global(Storage::csc);
  const GlobalReduction reduction(global);
  const moreau::MatX m = global.M.matrix;
  const moreau::MatX h = global.H.matrix;
  const moreau::MatX w = h.transpose() * m.inverse() * h;
  const VecX q = h.transpose() * m.inverse() * global.f + global.w;
  BOOST_TEST((moreau::MatX(reduction.local().W.matrix) - w).norm() < 1e-12);
  BOOST_TEST((reduction.local().q - q).norm() < 1e-12);
  const VecX r = VecX::LinSpaced(4, 0.0, 1.0);
  BOOST_TEST((m * reduction.velocity(r) - h * r - global.f).norm() < 1e-12);
}

// Triplet-built sparse matrix of the given size.
ColumnMatrix from_triplets(int rows, int columns,
                           const std::vector<Eigen::Triplet<double>>& entries) {
  ColumnMatrix a(rows, columns);
  a.setFromTriplets(entries.begin(), entries.end());
  return a;
}

// Solves a reduced problem with PGS to 1e-12 and returns r.
VecX solve_reduced(const LocalProblem& local) {
  const LocalSystem system(local);
  moreau::PgsOptions options;
  options.tolerance = 1e-12;
  options.max_iterations = 1000;
  const auto solver = moreau::make_solver("pgs", options);
  VecX r = VecX::Zero(local.q.size());
  BOOST_TEST(solver->solve(system.problem(), r).converged);
  return r;
}

// A block of mass m resting on the ground, described as two halves of mass m/2 whose
// velocities are tied by bilateral constraints G^T v = v1 - v2 = 0 (2D, dofs x1 y1 x2 y2);
// the contact acts on half 1 only. Eliminating the joint must give the Delassus operator of
// the whole block, diag(1/m, 1/m), and the contact must carry the weight of both halves,
// r_N = m g dt, with the joint passing on the weight of half 2: lambda_y = -m g dt / 2.
BOOST_AUTO_TEST_CASE(bilateral_constraints_tie_two_halves_into_one_body) {
  const double m = 2.0;
  const double g_dt = 9.81 * 1e-3;
  GlobalProblem global;
  global.spacedim = 2;
  global.M = {from_triplets(4, 4, {{0, 0, m / 2}, {1, 1, m / 2}, {2, 2, m / 2}, {3, 3, m / 2}}),
              Storage::csc};
  // Contact frame (normal = y, tangent = x) at half 1.
  global.H = {from_triplets(4, 2, {{1, 0, 1.0}, {0, 1, 1.0}}), Storage::csc};
  global.G = StoredMatrix{
      from_triplets(4, 2, {{0, 0, 1.0}, {2, 0, -1.0}, {1, 1, 1.0}, {3, 1, -1.0}}), Storage::csc};
  global.b = VecX::Zero(2);
  global.f = (VecX(4) << 0.0, -m / 2 * g_dt, 0.0, -m / 2 * g_dt).finished();
  global.w = VecX::Zero(2);
  global.mu = (VecX(1) << 0.5).finished();
  validate(global, "test");
  const GlobalReduction reduction(global);
  const moreau::MatX w = reduction.local().W.matrix;
  BOOST_TEST((w - moreau::MatX::Identity(2, 2) / m).norm() < 1e-14);
  BOOST_TEST(std::abs(reduction.local().q[0] + g_dt) < 1e-15);
  const VecX r = solve_reduced(reduction.local());
  BOOST_TEST(std::abs(r[0] - m * g_dt) < 1e-12);
  BOOST_TEST(std::abs(r[1]) < 1e-12);
  BOOST_TEST(reduction.velocity(r).norm() < 1e-12);
  const VecX lambda = reduction.multipliers(r);
  BOOST_TEST(std::abs(lambda[1] + m / 2 * g_dt) < 1e-12);
  BOOST_TEST(std::abs(lambda[0]) < 1e-12);
}

// A platform moving up at V (prescribed by G^T v + b = 0 with b = -V) hit by a ball of mass m
// falling at v0 < 0, no gravity (2D, dofs xp yp xb yb, platform mass 1). Plastic impact: the
// ball leaves with the platform's velocity, r_N = m (V - v0), and the constraint reaction on
// the platform is lambda_y = V + r_N (its momentum change plus the impulse it gives).
BOOST_AUTO_TEST_CASE(bilateral_constraints_with_b_prescribe_a_velocity) {
  const double m = 0.3;
  const double V = 0.5;
  const double v0 = -2.0;
  GlobalProblem global;
  global.spacedim = 2;
  global.M = {from_triplets(4, 4, {{0, 0, 1.0}, {1, 1, 1.0}, {2, 2, m}, {3, 3, m}}), Storage::csr};
  // u_N = y_b - y_p, u_T = x_b - x_p.
  global.H = {from_triplets(4, 2, {{1, 0, -1.0}, {3, 0, 1.0}, {0, 1, -1.0}, {2, 1, 1.0}}),
              Storage::triplet};
  global.G = StoredMatrix{from_triplets(4, 2, {{0, 0, 1.0}, {1, 1, 1.0}}), Storage::csr};
  global.b = (VecX(2) << 0.0, -V).finished();
  global.f = (VecX(4) << 0.0, 0.0, 0.0, m * v0).finished();
  global.w = VecX::Zero(2);
  global.mu = (VecX(1) << 0.3).finished();
  const GlobalReduction reduction(global);
  // With the platform's velocity prescribed, only the ball moves: W = diag(1/m, 1/m).
  const moreau::MatX w = reduction.local().W.matrix;
  BOOST_TEST((w - moreau::MatX::Identity(2, 2) / m).norm() < 1e-12);
  const VecX r = solve_reduced(reduction.local());
  BOOST_TEST(std::abs(r[0] - m * (V - v0)) < 1e-12);
  const VecX v = reduction.velocity(r);
  BOOST_TEST((v - (VecX(4) << 0.0, V, 0.0, V).finished()).norm() < 1e-12);
  BOOST_TEST(std::abs(reduction.multipliers(r)[1] - (V + m * (V - v0))) < 1e-12);
}

BOOST_AUTO_TEST_CASE(dependent_bilateral_constraints_are_an_input_error) {
  GlobalProblem global = sample_global(Storage::csc);
  global.G = StoredMatrix{from_triplets(4, 2, {{0, 0, 1.0}, {0, 1, 2.0}}), Storage::csc};
  global.b = VecX::Zero(2);
  try {
    const GlobalReduction reduction(global);
    BOOST_FAIL("a rank-deficient G was accepted");
  } catch (const moreau::InputError& e) {
    BOOST_TEST(contains(e.what(), "linearly dependent"));
  }
}

// Every collection file reads with consistent sizes or fails for its documented reason.
// Contacts and dofs from the data README (its ranges resolved by reading each file); the
// triplet H of the global files is not square, so swapped row/column arrays would fail.
struct Expected {
  std::string kind;
  int contacts;
  int dofs;
};

const std::map<std::string, Expected> kCollection = {
    {"LMGC_100_PR_PerioBox-i00361-60-03000.hdf5", {"local", 60, 0}},
    {"local_problem_test.hdf5", {"local", 48, 0}},
    {"BoxesStack1-i100000-32.hdf5", {"local", 52, 0}},
    {"Capsules-i125-1213.hdf5", {"local", 286, 0}},
    {"KaplasTower-i1061-4.hdf5", {"local", 570, 0}},
    {"OneObject-i1028-138.hdf5", {"local", 23, 0}},
    {"OneObject-i100000-316.hdf5", {"local", 25, 0}},
    {"OneObject-i100000-499.hdf5", {"local", 24, 0}},
    {"Box_Stacks-i0122-82-5.hdf5", {"global", 82, 450}},
    {"Spheres-i099-356-679.hdf5", {"global", 356, 12000}},
    {"spheres-in-a-box-98-i10000-256-10.hdf5", {"global", 256, 588}},
    {"CubeH8.hdf5", {"global", 1, 162}},
    {"LMGC_GlobalFrictionContactProblem00046.hdf5", {"global", 9, 162}},
    {"LMGC_GFC3D-i00001-1-00000.hdf5", {"global", 1, 48}},
    {"LMGC_GFC3D-i00501-4-00000.hdf5", {"global", 4, 162}},
    {"Chute-ndof-768-nc-4-3.hdf5", {"rolling", 4, 768}},
};

BOOST_AUTO_TEST_CASE(collection_files_read_or_fail_for_the_documented_reason) {
  for (const auto& [name, expected] : kCollection) {
    const fs::path path = kDataDirectory / name;
    BOOST_TEST_CONTEXT(name) {
      if (expected.kind == "rolling") {
        const std::string message = read_error(path);
        BOOST_TEST(contains(message, "/fclib_global_rolling"));
        BOOST_TEST(contains(message, "not supported"));
        continue;
      }
      const File file = read_file(path);
      BOOST_TEST(file.local.has_value() == (expected.kind == "local"));
      const int contacts = file.local ? file.local->contact_count() : file.global->contact_count();
      BOOST_TEST(contacts == expected.contacts);
      if (file.global) BOOST_TEST(file.global->dofs() == expected.dofs);
      BOOST_TEST_MESSAGE(name << ": " << (file.local ? "local" : "global") << ", spacedim "
                              << (file.local ? file.local->spacedim : file.global->spacedim) << ", "
                              << contacts << " contacts");
    }
  }
}

// Target of Acary, Bremond & Huber (2018) for their accurate runs.
constexpr double kFclibTolerance = 1e-8;

struct Outcome {
  std::string solver;
  int iterations = 0;
  double merit = 0.0;
  bool reached = false;
};

// Solves with the suite's tolerance tightened until the FCLIB merit reaches 1e-8 or the
// iteration budget is spent.
Outcome solve(const LocalProblem& local, const std::string& solver_name, int max_iterations) {
  const LocalSystem system(local);
  moreau::SolverOptions options;
  options.max_iterations = max_iterations;
  options.record_history = false;
  options.tolerance = 1e-10;
  const auto solver =
      moreau::make_solver(solver_name, moreau::default_solver_options(solver_name, options));
  VecX r = VecX::Zero(local.q.size());
  const moreau::SolverStats stats = solver->solve(system.problem(), r);
  Outcome outcome{solver_name, stats.iterations, natural_map_merit(local, r), false};
  outcome.reached = outcome.merit <= kFclibTolerance;
  return outcome;
}

// The small problems of the collection (global ones through the reduction); each solver's
// result is logged, and APGD must reach 1e-8 on local_problem_test.hdf5 (symmetric W,
// 48 contacts), as it does within 3500 iterations.
BOOST_AUTO_TEST_CASE(small_problems_solve_to_fclib_tolerance) {
  const std::vector<std::string> files = {"local_problem_test.hdf5",
                                          "LMGC_100_PR_PerioBox-i00361-60-03000.hdf5",
                                          "BoxesStack1-i100000-32.hdf5",
                                          "OneObject-i100000-316.hdf5",
                                          "OneObject-i100000-499.hdf5",
                                          "OneObject-i1028-138.hdf5",
                                          "LMGC_GFC3D-i00001-1-00000.hdf5",
                                          "LMGC_GFC3D-i00501-4-00000.hdf5",
                                          "CubeH8.hdf5",
                                          "LMGC_GlobalFrictionContactProblem00046.hdf5",
                                          "Box_Stacks-i0122-82-5.hdf5"};
  for (const std::string& name : files) {
    const File file = read_file(kDataDirectory / name);
    std::optional<GlobalReduction> reduction;
    if (file.global) reduction.emplace(*file.global);
    const LocalProblem& local = reduction ? reduction->local() : *file.local;
    for (const std::string solver : {"pgs", "apgd"}) {
      const Outcome outcome = solve(local, solver, 5000);
      BOOST_TEST_MESSAGE(name << " " << solver << ": merit " << outcome.merit << " after "
                              << outcome.iterations << " iterations"
                              << (outcome.reached ? " (reached 1e-8)" : ""));
      if (name == "local_problem_test.hdf5" && solver == "apgd") BOOST_TEST(outcome.reached);
    }
  }
}
