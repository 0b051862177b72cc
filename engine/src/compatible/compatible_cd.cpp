#include "moreau/compatible/compatible_cd.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "moreau/core/error.hpp"

namespace moreau {

const OptionTable<CompatibleOptions>& CompatibleOptions::fields() {
  using O = CompatibleOptions;
  static const OptionTable<O> table = [] {
    OptionTable<O> out{
        bool_option("enabled", &O::enabled)
            .described("the compatible CD post-processing of Olsen & Kamrin Alg. 1, step 2"),
        choice_option("law", &O::law,
                      {{"hookean", ContactLaw::hookean}, {"hertzian", ContactLaw::hertzian}})
            .described("power-law contacts: Hookean p = 2 or Hertzian p = 5/2 (eq. 35)"),
    };
    for (OptionField<O>& field : nested_options(NoTensionTrussOptions::fields(), &O::truss,
                                                option_keys(NoTensionTrussOptions::fields())))
      out.push_back(std::move(field));
    return out;
  }();
  return table;
}

double pair_relative_stiffness(double k_a, double k_b) {
  if (std::isinf(k_a)) return k_b;
  if (std::isinf(k_b)) return k_a;
  return k_a * k_b / (k_a + k_b);
}

NoTensionTrussProblem compatibility_problem(const World& world, const ContactSystem& system,
                                            const std::vector<Contact>& contacts,
                                            const VecX& velocity_start, const VecX& velocity_end,
                                            double dt, ContactLaw law) {
  if (system.rows_per_contact() != 1)
    throw InputError(
        "compatible CD: defined for frictionless contact (Olsen & Kamrin Sec. 4), but the contact "
        "problem "
        "has " +
        std::to_string(system.rows_per_contact()) + " rows per contact");
  const int body_count = system.body_count();
  // Gamma_N: free dofs that at least one contact acts on. A sphere's lever arm is parallel to
  // its normal, so its rotational entries are rounding noise (~1e-16 r): a rotational dof
  // counts only where some entry exceeds 1e-9 of the body's size.
  const SparseMatrix jacobian = system.assemble_jacobian();  // contacts x 6 bodies
  VecX largest = VecX::Zero(kBodyDofs * body_count);
  for (int k = 0; k < jacobian.outerSize(); ++k)
    for (SparseMatrix::InnerIterator it(jacobian, k); it; ++it)
      largest(it.col()) = std::max(largest(it.col()), std::abs(it.value()));
  VecX touched = VecX::Zero(kBodyDofs * body_count);
  for (int b = 0; b < body_count; ++b) {
    const double size =
        bounding_radius(world.bodies[b].shape.geometry) + world.bodies[b].shape.offset.norm();
    const double lever_floor = 1e-9 * (std::isfinite(size) && size > 0.0 ? size : 1.0);
    for (int d = 0; d < kBodyDofs; ++d)
      touched(kBodyDofs * b + d) =
          largest(kBodyDofs * b + d) > (d < 3 ? 0.0 : lever_floor) ? 1.0 : 0.0;
  }
  std::vector<int> free_dofs;
  for (int b = 0; b < body_count; ++b) {
    const InverseMass& inverse = system.inverse_mass(b);
    for (int d = 0; d < 6; ++d) {
      const double diagonal = d < 3 ? inverse.linear(d) : inverse.angular(d - 3, d - 3);
      if (diagonal > 0.0 && touched(kBodyDofs * b + d) != 0.0)
        free_dofs.push_back(kBodyDofs * b + d);
    }
  }
  NoTensionTrussProblem problem;
  problem.law = law;
  problem.load.resize(static_cast<Eigen::Index>(free_dofs.size()));
  std::vector<Eigen::Triplet<double>> triplets;
  std::vector<int> row_of_dof(kBodyDofs * body_count, -1);
  for (std::size_t r = 0; r < free_dofs.size(); ++r) row_of_dof[free_dofs[r]] = static_cast<int>(r);
  for (int k = 0; k < jacobian.outerSize(); ++k)
    for (SparseMatrix::InnerIterator it(jacobian, k); it; ++it)
      if (row_of_dof[it.col()] >= 0)
        triplets.emplace_back(row_of_dof[it.col()], it.row(), it.value());
  problem.equilibrium.resize(static_cast<Eigen::Index>(free_dofs.size()), system.contact_count());
  problem.equilibrium.setFromTriplets(triplets.begin(), triplets.end());

  // Eq. 37: F~ = M (v+ - v) / dt - F_ext, with M of eq. 9 at the start of the step.
  for (std::size_t r = 0; r < free_dofs.size(); ++r) {
    const int body = free_dofs[r] / kBodyDofs;
    const int d = free_dofs[r] % kBodyDofs;
    const RigidBody& b = world.bodies[body];
    const Vec6 dv =
        velocity_end.segment<6>(kBodyDofs * body) - velocity_start.segment<6>(kBodyDofs * body);
    const double momentum_change =
        d < 3 ? b.mass * dv(d) : (b.inertia_world() * dv.tail<3>())(d - 3);
    problem.load(static_cast<Eigen::Index>(r)) =
        momentum_change / dt - world.external_force(body)(d);
  }

  problem.relative_stiffness.resize(system.contact_count());
  for (int i = 0; i < system.contact_count(); ++i) {
    const double k_a =
        world.materials[world.bodies[contacts[i].body_a].material].relative_stiffness;
    const double k_b =
        world.materials[world.bodies[contacts[i].body_b].material].relative_stiffness;
    problem.relative_stiffness(i) = pair_relative_stiffness(k_a, k_b);
  }
  return problem;
}

}  // namespace moreau
