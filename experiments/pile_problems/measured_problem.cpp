#include "measured_problem.hpp"

#include "moreau/core/error.hpp"
#include "moreau/fclib/step_export.hpp"
#include "moreau/integrator/shake_stepper.hpp"
#include "moreau/solver/projected_gauss_jacobi.hpp"
#include "moreau/solver/solver_registry.hpp"

namespace pile_problems {

using namespace moreau;

MeasuredProblem measured_problem(const Pile& pile) {
  World world = pile_world(pile);
  ShakeOptions options;
  options.time_step = kMeasureStep;
  options.collision.margin = kPotentialContactDistance;
  PgjOptions cheap;  // the stepper's own solve is not used: one iteration
  cheap.max_iterations = 1;
  cheap.record_history = false;
  ShakeStepper stepper(world, options, make_solver("pgj", cheap));
  MeasuredProblem m;
  stepper.set_problem_observer([&m](const StepProblem& step) {
    m.world = *step.world;
    m.contacts = *step.contacts;
    m.free_velocity = *step.free_velocity;
    m.normal_offset = *step.normal_offset;
    m.mu = *step.friction;
  });
  stepper.step();
  if (m.contacts.empty())
    throw SimulationError("pile of " + std::to_string(pile.spheres) +
                          " spheres: the measured step has no contacts");
  m.system = std::make_unique<ContactSystem>(m.world, m.contacts, 3);
  m.problem.delassus = m.system.get();
  m.problem.friction_model = FrictionModel::convex_relaxation;  // Kleinert eq. 22
  m.problem.q = local_velocities(m.world, m.contacts, m.free_velocity, 3);
  for (int i = 0; i < static_cast<int>(m.contacts.size()); ++i)
    m.problem.q(3 * i) += m.normal_offset(i);
  m.problem.mu = m.mu;
  return m;
}

void export_fclib(const MeasuredProblem& measured, const VecX& impulses, const SolverStats& stats,
                  const std::string& title, const std::filesystem::path& directory,
                  const std::string& stem) {
  StepProblem view;
  view.world = &measured.world;
  view.contacts = &measured.contacts;
  view.step = 1;
  view.time_step = kMeasureStep;
  view.rows_per_contact = 3;
  view.friction_model = FrictionModel::convex_relaxation;
  view.free_velocity = &measured.free_velocity;
  view.normal_offset = &measured.normal_offset;
  view.friction = &measured.mu;
  view.impulses = &impulses;
  view.solver_stats = &stats;
  const fclib::StepExport files = fclib::export_step(view, title);
  fclib::write_file(directory / (stem + "_local.hdf5"), files.local);
  fclib::write_file(directory / (stem + "_global.hdf5"), files.global);
}

}  // namespace pile_problems
