#pragma once
// FCLIB problems (Acary, Bremond, Huber et al., FrictionalContactLibrary/fclib `src/fclib.h`):
// reading and writing the HDF5 layout, validation, and the reduction of a global problem to
// the local one the suite's solvers take.
//
// Local problem (`/fclib_local`): u = W r + q, per contact i the Coulomb law with components
// ordered (normal, tangent1, tangent2) and cone |r_T| <= mu_i r_N; rows per contact = spacedim.
// Global problem (`/fclib_global`), FCLIB/Siconos signs:  M v = H r + f,  u = H^T v + w.
// Eliminating v gives the local problem W = H^T M^-1 H, q = H^T M^-1 f + w, and v is
// recovered as M^-1 (H r + f).
#include <Eigen/SparseCore>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "moreau/contact/delassus.hpp"
#include "moreau/core/types.hpp"
#include "moreau/solver/cone_problem.hpp"

namespace moreau::fclib {

// The three sparse layouts of FCLIB: `nz >= 0` triplet (nz entries, `i` rows, `p` columns:
// the CSparse convention the files follow), `nz = -1` compressed columns, `nz = -2`
// compressed rows.
enum class Storage { triplet, csc, csr };
std::string to_string(Storage storage);

using ColumnMatrix = Eigen::SparseMatrix<double, Eigen::ColMajor>;

struct StoredMatrix {
  ColumnMatrix matrix;
  Storage storage = Storage::csr;  // layout used when the matrix is written
};

struct Info {
  std::string title;
  std::string description;
  std::string math_info;
};

struct LocalProblem {
  int spacedim = 3;  // rows per contact: 2 or 3
  StoredMatrix W;
  std::optional<StoredMatrix> V;  // optional extra operators of fclib.h, kept as read
  std::optional<StoredMatrix> R;
  VecX q;
  VecX mu;  // one per contact
  std::optional<VecX> s;
  std::optional<Info> info;
  int contact_count() const { return static_cast<int>(mu.size()); }
};

struct GlobalProblem {
  int spacedim = 3;
  StoredMatrix M;                 // dofs x dofs, symmetric positive definite
  StoredMatrix H;                 // dofs x (spacedim * contacts)
  std::optional<StoredMatrix> G;  // bilateral constraints G^T v + b = 0 (dofs x p)
  VecX f;
  VecX w;
  std::optional<VecX> b;
  VecX mu;
  std::optional<Info> info;
  int contact_count() const { return static_cast<int>(mu.size()); }
  int dofs() const { return static_cast<int>(M.matrix.rows()); }
};

// `/solution` or one of `/guesses/<k>`: empty vectors are absent from the file.
struct Solution {
  VecX v;
  VecX u;
  VecX r;
  VecX l;
};

struct File {
  std::optional<LocalProblem> local;  // exactly one of local and global is set
  std::optional<GlobalProblem> global;
  std::optional<Solution> solution;
  std::vector<Solution> guesses;
};

// Reads and validates a file. Throws InputError naming the file, the dataset and what is
// wrong: missing datasets, inconsistent sizes, negative mu, non-finite numbers, spacedim not
// 2 or 3, and `/fclib_global_rolling` (rolling friction, spacedim 5), which is unsupported.
File read_file(const std::filesystem::path& path);

// Writes (truncating) the problem, the solution and the guesses present in `file`.
void write_file(const std::filesystem::path& path, const File& file);

// Throw InputError (prefixed by `where`, e.g. the file name) on inconsistent sizes,
// negative mu, non-finite values or unsupported spacedim.
void validate(const LocalProblem& problem, const std::string& where);
void validate(const GlobalProblem& problem, const std::string& where);

// The local problem as the suite's solvers take it. A W symmetric to SparseDelassus'
// tolerance goes into SparseDelassus; some collection files store a W asymmetric by up to
// 1e-3 of its largest entry (README of the data), and symmetrizing it would solve another
// problem, so those go into an operator that keeps W as stored (its sweeps read columns).
class LocalSystem {
 public:
  explicit LocalSystem(const LocalProblem& problem);
  const ConeProblem& problem() const { return problem_; }
  bool symmetric() const { return symmetric_; }

 private:
  std::unique_ptr<DelassusOperator> delassus_;
  bool symmetric_ = true;
  ConeProblem problem_;
};

// A global problem reduced to a local one: M factorized once, W = H^T M^-1 H,
// q = H^T M^-1 f + w; with bilateral constraints G the joint reactions are eliminated too
// through S = G^T M^-1 G (fclib_problem.cpp). M is taken as stored: CHOLMOD when it is
// symmetric, UMFPACK's LU when it is not (a file storing one triangle only poses a triangular
// M, FCLIB having no symmetric-storage flag), W then unsymmetric. Throws InputError when M is
// not positive definite (symmetric) or singular, or G is rank deficient.
class GlobalReduction {
 public:
  explicit GlobalReduction(const GlobalProblem& problem);
  ~GlobalReduction();
  GlobalReduction(const GlobalReduction&) = delete;
  GlobalReduction& operator=(const GlobalReduction&) = delete;

  const LocalProblem& local() const { return local_; }
  // v solving M v = H r + G lambda + f, G^T v + b = 0 for the contact impulses r.
  VecX velocity(const VecX& r) const;
  // lambda of the bilateral constraints for r (empty without G).
  VecX multipliers(const VecX& r) const;

 private:
  struct Factor;
  std::unique_ptr<Factor> factor_;
  ColumnMatrix H_;
  VecX f_;
  ColumnMatrix G_;  // empty without bilateral constraints
  VecX b_;
  ColumnMatrix m_inverse_g_;  // M^-1 G
  LocalProblem local_;
  VecX multipliers_for(const VecX& unconstrained_velocity) const;
};

// FCLIB natural-map merit (Acary, Bremond & Huber 2018):
//   || r - P_K(r - (u + mu ||u_T|| e_N)) ||_2 / max(||q||_2, kMeritVelocityFloor)
// with u = W r + q and K the product of the contacts' friction cones. Zero exactly at a
// solution. The floor (merit.hpp) keeps q = 0 finite.
double natural_map_merit(const LocalProblem& problem, const VecX& r);

}  // namespace moreau::fclib
