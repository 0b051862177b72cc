#pragma once
// The conic quadratic program the interior point method solves, for the whole suite:
//
//   minimize 1/2 x^T (N + C) x + r^T x   subject to  x in C_1 x ... x C_m,  A x = b
//
// with N symmetric positive semi-definite (given as a matrix-free operator or an assembled
// sparse matrix), C >= 0 an optional diagonal compliance, each C_k a second-order cone of
// dimension 1 (R+), 2 or 3 (jordan_algebra.hpp) and optional linear equality constraints.
// Its optimality conditions are the cone complementarity problem (Kleinert eq. 23)
//
//   C ∋ x  ⊥  y = (N + C) x + r - A^T z  ∈ C,   A x = b     (z: equality multipliers).
//
// Equality rows may be relaxed by a diagonal E >= 0, A x + E z = b: the optimality conditions
// of the same program with a free variable s, A x + s = b, at the cost 1/2 s^T E^-1 s. This is
// the dynamic force problem of the Krabbenhoft/NURBS chapter (eq. 4.15: s the dynamic forces r
// and t, E = M / (theta dt^2) the scaled masses of eq. 4.5, z the displacements) beside its
// static limit eq. 4.16 (E = 0). A relaxed row never makes z non-unique.
//
// Contact problems reach it through the transformation of Kleinert eq. 22 -> 23 (see
// interior_point_solver.hpp); a force-based problem with contact elasticity supplies C.
#include <array>
#include <vector>

#include "moreau/contact/delassus.hpp"
#include "moreau/core/types.hpp"

namespace moreau::conic {

// An optional factorization N = F^T F with F : R^n -> R^(r b) block sparse, b blocks of r
// rows (r = block_rows(): 6 for 3D bodies, 3 for 2D bodies: x, y and the rotation about z),
// each cone's columns nonzero in at most two blocks. Contact problems have one
// (F = M^-1/2 H S: b bodies, each contact touching its two), and it lets the interior point
// method solve its Newton system in the body space, where the block-diagonal preconditioner
// does not degrade as the iterates approach the solution and the direct back-end factors a
// matrix of r rows per body instead of one coupling every pair of contacts of a body
// (newton_system.hpp).
class QuadraticFactor {
 public:
  using Columns = Eigen::Matrix<double, 6, 3>;
  virtual ~QuadraticFactor() = default;
  virtual int blocks() const = 0;
  // Rows per block, 1..6.
  virtual int block_rows() const { return 6; }
  // w = F x (size block_rows() blocks()).
  virtual void apply(const VecX& x, VecX& w) const = 0;
  // x = F^T w.
  virtual void apply_transpose(const VecX& w, VecX& x) const = 0;
  // The columns [offset, offset + dim) of F (one cone), leading dim columns of each Columns:
  // block[s] the row block of side s (-1: none), columns[s] its block_rows() x dim entries
  // (leading rows; the others zero).
  virtual void cone_columns(int offset, int dim, std::array<int, 2>& block,
                            std::array<Columns, 2>& columns) const = 0;
};

// N as a symmetric linear operator on the stacked cone variables.
class QuadraticOperator {
 public:
  virtual ~QuadraticOperator() = default;
  virtual int size() const = 0;
  // y = N x.
  virtual void apply(const VecX& x, VecX& y) const = 0;
  // The dim x dim diagonal block of N at rows/columns [offset, offset + dim) (leading block
  // of the Mat3), for the block-diagonal preconditioner.
  virtual Mat3 diagonal_block(int offset, int dim) const = 0;
  // N assembled (for the direct back-end); full symmetric storage.
  virtual SparseMatrix assemble() const = 0;
  // N = F^T F when the operator knows such a factor (QuadraticFactor), else null.
  virtual const QuadraticFactor* factor() const { return nullptr; }
};

// N given as a sparse matrix (full symmetric storage). Throws InputError for a non-square,
// non-symmetric or non-finite matrix.
class SparseQuadraticOperator final : public QuadraticOperator {
 public:
  explicit SparseQuadraticOperator(SparseMatrix matrix);
  int size() const override { return matrix_.size(); }
  void apply(const VecX& x, VecX& y) const override;
  Mat3 diagonal_block(int offset, int dim) const override;
  SparseMatrix assemble() const override { return matrix_.matrix(); }

 private:
  SparseDelassus matrix_;
};

// N = F^T F given by F as a sparse matrix of `block_rows` rows per block (full storage): both a
// QuadraticOperator (N applied as two products with F, assembled only when a back-end asks) and
// its QuadraticFactor, for a problem whose N is formed from a factor (the 2D variational force
// problem: F = (theta dt^2)^1/2 M^-1/2 H S, Krabbenhoft/NURBS chapter eq. 4.15). Throws
// InputError for a non-finite F, block_rows outside 1..6, a row count that is not a multiple of
// it, or a column (cone) that touches more than two blocks.
class SparseFactorOperator final : public QuadraticOperator {
 public:
  SparseFactorOperator(SparseMatrix factor, int block_rows);
  int size() const override { return static_cast<int>(factor_.factor.cols()); }
  void apply(const VecX& x, VecX& y) const override;
  Mat3 diagonal_block(int offset, int dim) const override;
  SparseMatrix assemble() const override;
  const QuadraticFactor* factor() const override { return &factor_; }

 private:
  class Factor final : public QuadraticFactor {
   public:
    int blocks() const override { return static_cast<int>(factor.rows()) / rows; }
    int block_rows() const override { return rows; }
    // Serial products (the transpose of the other row-major copy): below ~1e5 nonzeros an
    // OpenMP fork costs more than the product, and the Newton steps apply F a few times each.
    void apply(const VecX& x, VecX& w) const override { w = transpose.transpose() * x; }
    void apply_transpose(const VecX& w, VecX& x) const override { x = factor.transpose() * w; }
    void cone_columns(int offset, int dim, std::array<int, 2>& block,
                      std::array<Columns, 2>& columns) const override;

    SparseMatrix factor;     // F
    SparseMatrix transpose;  // F^T, row-major: a cone's columns of F are its rows
    int rows = 6;
  };
  Factor factor_;
  mutable VecX work_;  // F x inside apply (one thread calls)
};

struct ConicQp {
  const QuadraticOperator* hessian = nullptr;  // N
  VecX compliance;                             // diagonal of C (>= 0); empty: C = 0
  VecX linear;                                 // r
  std::vector<int> cone_dimensions;            // 1, 2 or 3 each, summing to size()
  SparseMatrix equality;                       // A (rows x size()); 0 rows: none
  VecX equality_rhs;                           // b
  VecX equality_relaxation;                    // diagonal of E (>= 0), one per row; empty: 0

  int size() const { return hessian ? hessian->size() : 0; }
  // Throws InputError naming the field: null N, sizes that do not match, a cone dimension
  // outside 1..3, negative or non-finite compliance, non-finite r, A or b.
  void validate() const;
};

// Offsets of the cones in the stacked vector (size cones + 1, last = size()).
std::vector<int> cone_offsets(const std::vector<int>& cone_dimensions);

}  // namespace moreau::conic
