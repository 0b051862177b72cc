// The equality rows eliminated by the dense Schur complement S = A H^-1 A^T (+ E for relaxed
// rows, conic_qp.hpp): Z = H^-1 A^T
// (one solve with H per row, with either back-end), S = A Z and its dense LDL^T, then
// dx = H^-1 rhs + Z dz with S dz = equality_rhs - A H^-1 rhs. Its cost is cubic in the rows,
// so it suits few rows; it is the matrix-free back-end's only way (no matrix to factor), and
// the direct back-end's when InteriorPointOptions::dense_schur_complement asks for it (the
// sparse KKT factorization of quasi_definite_system.cpp is its default).
#include <Eigen/Dense>

#include "kkt_system.hpp"

namespace moreau::conic::detail {
namespace {

class SchurComplementSystem final : public KktSystem {
 public:
  SchurComplementSystem(const ConicQp& problem, const InteriorPointOptions& options)
      : problem_(problem),
        min_forcing_(options.min_forcing),
        rows_(static_cast<int>(problem.equality.rows())),
        system_(make_newton_system(problem, options)) {}

  void set_inverse_scaling(const std::vector<Mat3>& inverse_scaling_squared) override {
    system_->set_inverse_scaling(inverse_scaling_squared);
  }

  bool set_scaling(const std::vector<Mat3>& scaling_squared, int& iterations) override {
    iterations = 0;
    if (!system_->set_scaling(scaling_squared)) return false;
    if (rows_ == 0) return true;
    solved_columns_.resize(problem_.size(), rows_);
    const SparseMatrix transpose = problem_.equality.transpose();
    for (int j = 0; j < rows_; ++j) {
      VecX column = VecX(transpose.col(j));
      VecX solution;
      int column_iterations = 0;
      if (!system_->solve(column, min_forcing_ * column.norm(), solution, column_iterations)) {
        return false;
      }
      iterations += column_iterations;
      solved_columns_.col(j) = solution;
    }
    MatX schur = problem_.equality * solved_columns_;
    if (problem_.equality_relaxation.size() > 0)
      schur.diagonal() += problem_.equality_relaxation;  // A H^-1 A^T + E
    schur_factor_.compute(0.5 * (schur + schur.transpose()));
    return schur_factor_.info() == Eigen::Success;
  }

  bool solve(const VecX& rhs, const VecX& equality_rhs, double tolerance, bool warm_start, VecX& dx,
             VecX& dz, int& iterations) override {
    if (!system_->solve(rhs, tolerance, dx, iterations, warm_start)) return false;
    if (rows_ > 0) {
      dz = schur_factor_.solve(equality_rhs - problem_.equality * dx);
      dx += solved_columns_ * dz;
    }
    return true;
  }

  bool reached_tolerance() const override { return system_->reached_tolerance(); }

 private:
  const ConicQp& problem_;
  double min_forcing_;
  int rows_;
  std::unique_ptr<NewtonSystem> system_;
  MatX solved_columns_;  // Z = H^-1 A^T
  Eigen::LDLT<MatX> schur_factor_;
};

}  // namespace

std::unique_ptr<KktSystem> make_schur_complement_system(const ConicQp& problem,
                                                        const InteriorPointOptions& options) {
  return std::make_unique<SchurComplementSystem>(problem, options);
}

}  // namespace moreau::conic::detail
