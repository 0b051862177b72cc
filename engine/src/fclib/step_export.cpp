#include "moreau/fclib/step_export.hpp"

#include <cstdio>
#include <vector>

#include "moreau/contact/contact_system.hpp"

namespace moreau::fclib {
namespace {

// The generalized coordinates of the exported global problem: the degrees of freedom with a
// nonzero inverse mass, body by body (6 per body in the engine: v then omega).
struct FreeDofs {
  std::vector<int> engine_index;  // engine dof (kBodyDofs * body + d) of each exported dof
  ColumnMatrix mass;              // M over these dofs
};

FreeDofs free_dofs(const ContactSystem& system) {
  FreeDofs dofs;
  std::vector<Eigen::Triplet<double>> mass;
  for (int b = 0; b < system.body_count(); ++b) {
    const InverseMass& inverse = system.inverse_mass(b);
    for (int d = 0; d < 3; ++d) {
      if (inverse.linear(d) <= 0.0) continue;
      const int row = static_cast<int>(dofs.engine_index.size());
      mass.emplace_back(row, row, 1.0 / inverse.linear(d));
      dofs.engine_index.push_back(kBodyDofs * b + d);
    }
    std::vector<int> angular;
    for (int d = 0; d < 3; ++d) {
      if (inverse.angular(d, d) > 0.0) angular.push_back(d);
    }
    if (angular.empty()) continue;
    const int n = static_cast<int>(angular.size());
    MatX block(n, n);
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) block(i, j) = inverse.angular(angular[i], angular[j]);
    }
    // The rotational mass block is the inverse of the free part of the world-frame inverse
    // inertia (the locked rotations have zero rows and columns there).
    const MatX block_mass = block.inverse();
    const int first = static_cast<int>(dofs.engine_index.size());
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) mass.emplace_back(first + i, first + j, block_mass(i, j));
      dofs.engine_index.push_back(kBodyDofs * b + 3 + angular[i]);
    }
  }
  const int size = static_cast<int>(dofs.engine_index.size());
  dofs.mass.resize(size, size);
  dofs.mass.setFromTriplets(mass.begin(), mass.end());
  dofs.mass.makeCompressed();
  return dofs;
}

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

// What the problem of a step is: its time interval, conventions and how the scene solved it.
Info step_info(const StepProblem& step, const std::string& title) {
  const World& world = *step.world;
  Info info;
  info.title = title + ", step " + std::to_string(step.step);
  info.description =
      "Moreau contact problem of step " + std::to_string(step.step) +
      " (t = " + number(world.time) + " s to " + number(world.time + step.time_step) +
      " s, dt = " + number(step.time_step) + " s), impulses r = dt f, frame (n, t1, t2), " +
      "u_n > 0 separates; solution by " + step.solver_stats->solver + " (merit " +
      number(step.solver_stats->merit) + ", " +
      (step.solver_stats->converged ? "converged" : "not converged") + ")" +
      (step.rows_per_contact == 1 ? "; frictionless step written with mu = 0" : "") +
      (step.friction_model == FrictionModel::convex_relaxation
           ? "; the scene solved the convex relaxation (Anitescu), not this Coulomb problem"
           : "");
  return info;
}

}  // namespace

StepExport export_step(const StepProblem& step, const std::string& title) {
  const World& world = *step.world;
  const std::vector<Contact>& contacts = *step.contacts;
  const int dimension = static_cast<int>(world.dimension);
  const int contact_count = static_cast<int>(contacts.size());
  const ContactSystem system(world, contacts, dimension);

  // q of the solved problem, with the tangent rows a frictionless step did not have.
  VecX q = local_velocities(world, contacts, *step.free_velocity, dimension);
  VecX r = VecX::Zero(dimension * contact_count);
  for (int i = 0; i < contact_count; ++i) {
    q(dimension * i) += (*step.normal_offset)(i);
    r.segment(dimension * i, step.rows_per_contact) =
        step.impulses->segment(step.rows_per_contact * i, step.rows_per_contact);
  }
  const VecX mu = step.rows_per_contact == 1 ? VecX::Zero(contact_count) : *step.friction;

  Info info = step_info(step, title);
  info.math_info = "W = H^T M^-1 H symmetric positive semidefinite";

  StepExport out;
  const SparseMatrix jacobian = system.assemble_jacobian();  // H^T over all engine dofs
  LocalProblem local;
  local.spacedim = dimension;
  local.W = {ColumnMatrix(system.assemble()), Storage::csr};
  local.q = q;
  local.mu = mu;
  local.info = info;
  Solution local_solution;
  local_solution.r = r;
  local_solution.u = local.W.matrix * r + q;
  out.local.local = std::move(local);
  out.local.solution = local_solution;

  const FreeDofs dofs = free_dofs(system);
  const int dof_count = static_cast<int>(dofs.engine_index.size());
  std::vector<Eigen::Triplet<double>> h;
  VecX v_free(dof_count);
  VecX v_end(dof_count);
  const VecX velocity_change = system.body_velocity_change(r);
  // Engine dof -> exported dof, -1 where locked.
  std::vector<int> exported(static_cast<std::size_t>(kBodyDofs) * world.bodies.size(), -1);
  for (int k = 0; k < dof_count; ++k) {
    exported[dofs.engine_index[k]] = k;
    v_free(k) = (*step.free_velocity)(dofs.engine_index[k]);
    v_end(k) = v_free(k) + velocity_change(dofs.engine_index[k]);
  }
  for (int row = 0; row < jacobian.outerSize(); ++row) {
    for (SparseMatrix::InnerIterator it(jacobian, row); it; ++it) {
      const int column = exported[it.col()];
      if (column >= 0) h.emplace_back(column, row, it.value());
    }
  }
  GlobalProblem global;
  global.spacedim = dimension;
  global.M = {dofs.mass, Storage::csc};
  global.H.matrix.resize(dof_count, dimension * contact_count);
  global.H.matrix.setFromTriplets(h.begin(), h.end());
  global.H.matrix.makeCompressed();
  global.H.storage = Storage::csc;
  global.f = dofs.mass * v_free;
  global.w = q - global.H.matrix.transpose() * v_free;
  global.mu = mu;
  info.math_info = "M symmetric positive definite (free dofs of the dynamic bodies)";
  global.info = info;
  Solution global_solution = local_solution;
  global_solution.v = v_end;
  out.global.global = std::move(global);
  out.global.solution = global_solution;
  return out;
}

}  // namespace moreau::fclib
