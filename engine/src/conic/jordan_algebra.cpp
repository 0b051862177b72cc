#include "moreau/conic/jordan_algebra.hpp"

#include <cmath>
#include <limits>

namespace moreau::conic {
namespace {

// J = diag(1, -1, ..., -1) on the leading dim x dim block.
Mat3 reflection(int dim) {
  Mat3 j = Mat3::Zero();
  j(0, 0) = 1.0;
  for (int k = 1; k < dim; ++k) j(k, k) = -1.0;
  return j;
}

double tangent_norm(const Vec3& x, int dim) { return dim > 1 ? x.segment(1, dim - 1).norm() : 0.0; }

}  // namespace

Vec3 jordan_identity(int /*dim*/) { return Vec3(1.0, 0.0, 0.0); }

Vec3 jordan_product(const Vec3& x, const Vec3& y, int dim) {
  Vec3 p = Vec3::Zero();
  p[0] = x.head(dim).dot(y.head(dim));
  for (int k = 1; k < dim; ++k) p[k] = x[0] * y[k] + y[0] * x[k];
  return p;
}

Eigen::Vector2d spectral_values(const Vec3& x, int dim) {
  const double t = tangent_norm(x, dim);
  return {x[0] - t, x[0] + t};
}

double determinant(const Vec3& x, int dim) {
  // (x_0 - |x_1|)(x_0 + |x_1|): the product form keeps full relative accuracy near the boundary.
  const Eigen::Vector2d s = spectral_values(x, dim);
  return dim == 1 ? x[0] * x[0] : s[0] * s[1];
}

Mat3 arrow_matrix(const Vec3& x, int dim) {
  Mat3 l = Mat3::Zero();
  for (int k = 0; k < dim; ++k) l(k, k) = x[0];
  for (int k = 1; k < dim; ++k) {
    l(0, k) = x[k];
    l(k, 0) = x[k];
  }
  return l;
}

Mat3 quadratic_representation(const Vec3& x, int dim) {
  // 2 L(x)^2 - L(x o x) = 2 x x^T - det(x) J (Faraut & Koranyi; Alizadeh & Goldfarb 2003).
  Mat3 p = Mat3::Zero();
  const auto head = x.head(dim);
  p.topLeftCorner(dim, dim) = 2.0 * head * head.transpose();
  return p - determinant(x, dim) * reflection(dim);
}

Vec3 jordan_inverse(const Vec3& x, int dim) {
  Vec3 inverse = -x;
  inverse[0] = x[0];
  return inverse / determinant(x, dim);
}

Vec3 jordan_sqrt(const Vec3& x, int dim) {
  // Spectral decomposition x = s_1 c_1 + s_2 c_2 with the Jordan frame c_1,2 = (1, -+ x_1/|x_1|)/2;
  // the square root takes the roots of the spectral values.
  const double t = tangent_norm(x, dim);
  Vec3 root = Vec3::Zero();
  if (dim == 1 || t == 0.0) {
    root[0] = std::sqrt(std::max(x[0], 0.0));
    return root;
  }
  const Eigen::Vector2d s = spectral_values(x, dim);
  const double low = std::sqrt(std::max(s[0], 0.0));
  const double high = std::sqrt(std::max(s[1], 0.0));
  root[0] = 0.5 * (low + high);
  root.segment(1, dim - 1) = (0.5 * (high - low) / t) * x.segment(1, dim - 1);
  return root;
}

Vec3 jordan_divide(const Vec3& x, const Vec3& v, int dim) {
  // L(x) z = v: x_0 z_0 + x_1.z_1 = v_0 and x_1 z_0 + x_0 z_1 = v_1 give
  // z_0 = (x_0 v_0 - x_1.v_1) / det x and z_1 = (v_1 - z_0 x_1) / x_0.
  Vec3 z = Vec3::Zero();
  if (dim == 1) {
    z[0] = v[0] / x[0];
    return z;
  }
  const auto x1 = x.segment(1, dim - 1);
  const auto v1 = v.segment(1, dim - 1);
  z[0] = (x[0] * v[0] - x1.dot(v1)) / determinant(x, dim);
  z.segment(1, dim - 1) = (v1 - z[0] * x1) / x[0];
  return z;
}

double max_step_in_cone(const Vec3& x, const Vec3& dx, int dim) {
  constexpr double infinity = std::numeric_limits<double>::infinity();
  // x_0 + t dx_0 >= 0 is part of C. For dim 1 it is the whole condition; for dim > 1 it
  // matters where the ray passes through the apex (x_1 = dx_1 = 0, e.g. a resting contact
  // with zero friction, or any point on the axis moved along the axis): there
  // det(x + t dx) = (x_0 + t dx_0)^2 only touches zero, its discriminant is 0 and rounds to
  // either sign, and without this bound a step through the apex into -C would pass as inside.
  double step = dx[0] < 0.0 ? -x[0] / dx[0] : infinity;
  if (dim == 1) return step;
  // Otherwise the step leaves C where det(x + t dx) = a t^2 + b t + c first vanishes (x_0 +
  // t dx_0 stays positive up to there: at x_0 = 0 the determinant is already <= 0).
  const auto x1 = x.segment(1, dim - 1);
  const auto d1 = dx.segment(1, dim - 1);
  const double a = dx[0] * dx[0] - d1.squaredNorm();
  const double b = 2.0 * (x[0] * dx[0] - x1.dot(d1));
  const double c = determinant(x, dim);
  auto consider = [&](double root) {
    if (root > 0.0 && root < step) step = root;
  };
  if (a == 0.0) {
    if (b < 0.0) consider(-c / b);
    return step;
  }
  const double discriminant = b * b - 4.0 * a * c;
  if (discriminant < 0.0) return step;  // det never vanishes (then a > 0): stays inside
  // Cancellation-free roots q / a and c / q.
  const double q = -0.5 * (b + std::copysign(std::sqrt(discriminant), b));
  if (q != 0.0) {
    consider(q / a);
    consider(c / q);
  }
  return step;
}

NesterovToddScaling nesterov_todd_scaling(const Vec3& x, const Vec3& y, int dim) {
  // W = beta (2 v v^T - J) with beta = (det y / det x)^(1/4), the normalized points
  // x^ = x / sqrt(det x), y^ = y / sqrt(det y), gamma = sqrt((1 + x^.y^) / 2),
  // w^ = (y^ + J x^) / (2 gamma) (a unit-determinant point of C) and
  // v = (w^ + e) / sqrt(2 (w^_0 + 1)); then W x = W^-1 y.
  const Mat3 j = reflection(dim);
  const double det_x = determinant(x, dim);
  const double det_y = determinant(y, dim);
  const double beta = std::pow(det_y / det_x, 0.25);
  const Vec3 x_hat = x / std::sqrt(det_x);
  const Vec3 y_hat = y / std::sqrt(det_y);
  const double gamma = std::sqrt(0.5 * (1.0 + x_hat.dot(y_hat)));
  const Vec3 w_hat = (y_hat + j * x_hat) / (2.0 * gamma);
  Vec3 v = w_hat + jordan_identity(dim);
  v /= std::sqrt(2.0 * (w_hat[0] + 1.0));
  NesterovToddScaling scaling;
  scaling.w = beta * (2.0 * v * v.transpose() - j);
  const Vec3 jv = j * v;
  scaling.w_inverse = (2.0 * jv * jv.transpose() - j) / beta;
  scaling.lambda = scaling.w * x;
  return scaling;
}

}  // namespace moreau::conic
