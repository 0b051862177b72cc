#pragma once
// The Delassus operator W = H^T M^-1 H (Olsen & Kamrin eq. 20: N = dt B M^-1 B^T; we work with
// impulses r = dt f so that W = B M^-1 B^T) behind one small interface, with a matrix-free
// implementation built from contact Jacobians and an assembled sparse one.
#include <Eigen/SparseCore>

#include "moreau/core/types.hpp"

namespace moreau {

using SparseMatrix = Eigen::SparseMatrix<double, Eigen::RowMajor>;

class DelassusOperator {
 public:
  virtual ~DelassusOperator() = default;

  virtual int contact_count() const = 0;
  // 1 (frictionless), 2 (frictional 2D) or 3 (frictional 3D).
  virtual int rows_per_contact() const = 0;
  int size() const { return contact_count() * rows_per_contact(); }

  // y = W x.
  virtual void apply(const VecX& x, VecX& y) const = 0;
  // The rows_per_contact() square diagonal block of contact i (leading block of the 3x3).
  virtual Mat3 diagonal_block(int contact) const = 0;

  // Incremental products for Gauss-Seidel sweeps. `work` is an opaque state that tracks W r:
  // begin_sweep sets it for r, local_velocity returns (W r)_i, and after r_i += dr
  // update_sweep keeps it consistent. Cost per contact O(block), not O(size).
  virtual void begin_sweep(const VecX& r, VecX& work) const = 0;
  virtual Vec3 local_velocity(int contact, const VecX& work) const = 0;
  virtual void update_sweep(int contact, const Vec3& dr, VecX& work) const = 0;

  // Assembled W (symmetric positive semi-definite).
  virtual SparseMatrix assemble() const = 0;
};

// W given as a matrix (e.g. read from an FCLIB file).
class SparseDelassus final : public DelassusOperator {
 public:
  SparseDelassus(SparseMatrix matrix, int rows_per_contact);
  int contact_count() const override { return contact_count_; }
  int rows_per_contact() const override { return rows_per_contact_; }
  void apply(const VecX& x, VecX& y) const override;
  Mat3 diagonal_block(int contact) const override;
  void begin_sweep(const VecX& r, VecX& work) const override;
  Vec3 local_velocity(int contact, const VecX& work) const override;
  void update_sweep(int contact, const Vec3& dr, VecX& work) const override;
  SparseMatrix assemble() const override { return matrix_; }
  const SparseMatrix& matrix() const { return matrix_; }

 private:
  SparseMatrix matrix_;
  int rows_per_contact_;
  int contact_count_;
};

}  // namespace moreau
