#include "moreau/variational/contact_model.hpp"

#include <algorithm>
#include <string>

#include "moreau/contact/contact_system.hpp"
#include "moreau/core/error.hpp"
#include "solver_report.hpp"

namespace moreau::variational {

void ContactModel::validate(const World& world) const {
  stiffness.validate();
  if (!material_stiffness.empty() && material_stiffness.size() != world.materials.size()) {
    throw InputError("material_stiffness has " + std::to_string(material_stiffness.size()) +
                     " entries, the world " + std::to_string(world.materials.size()) +
                     " materials");
  }
  for (std::size_t i = 0; i < material_stiffness.size(); ++i) {
    try {
      material_stiffness[i].validate();
    } catch (const InputError& e) {
      throw InputError("material_stiffness[" + std::to_string(i) + "]: " + e.what());
    }
  }
}

bool ContactModel::rigid() const {
  if (material_stiffness.empty()) return stiffness.rigid_normal() && stiffness.rigid_tangential();
  for (const ContactStiffness& k : material_stiffness) {
    if (!k.rigid_normal() || !k.rigid_tangential()) return false;
  }
  return true;
}

bool ContactModel::rigid_tangential() const {
  if (material_stiffness.empty()) return stiffness.rigid_tangential();
  for (const ContactStiffness& k : material_stiffness) {
    if (!k.rigid_tangential()) return false;
  }
  return true;
}

ForceProblem contact_force_problem(const World& world, const std::vector<Contact>& contacts,
                                   const VecX& known_displacement, const ContactModel& model,
                                   const ShearHistory& history,
                                   const std::vector<ContactKey>& keys) {
  const int n = static_cast<int>(contacts.size());
  ForceProblem problem;
  problem.friction = model.frictional ? friction_coefficients(world, contacts) : VecX::Zero(n);
  problem.length_scale = mean_particle_radius(world);
  problem.linear = local_velocities(world, contacts, known_displacement, 2);  // H^T dx_known
  const bool keep_overlaps = model.keep_rigid_overlaps && model.rigid();
  for (int i = 0; i < n; ++i)
    problem.linear(2 * i) += keep_overlaps ? std::max(contacts[i].gap, 0.0) : contacts[i].gap;
  if (!model.rigid()) {
    problem.compliance.resize(2 * n);
    for (int i = 0; i < n; ++i) {
      if (model.material_stiffness.empty()) {
        problem.compliance(2 * i) = model.stiffness.normal_compliance();
        problem.compliance(2 * i + 1) = model.stiffness.tangential_compliance();
        continue;
      }
      const ContactStiffness& a =
          model.material_stiffness[world.bodies[contacts[i].body_a].material];
      const ContactStiffness& b =
          model.material_stiffness[world.bodies[contacts[i].body_b].material];
      problem.compliance(2 * i) = a.normal_compliance() + b.normal_compliance();
      problem.compliance(2 * i + 1) = a.tangential_compliance() + b.tangential_compliance();
    }
  }
  if (!model.rigid_tangential()) problem.shear_history = history.lookup(keys, contacts);
  return problem;
}

VecX tangential_forces(const ForceSolution& solution, int contact_count) {
  VecX q(contact_count);
  for (int i = 0; i < contact_count; ++i) q(i) = solution.forces(2 * i + 1);
  return q;
}

}  // namespace moreau::variational
