#pragma once
// The cone complementarity problem of one nonsmooth SHAKE step on a settled pile (Kleinert eq.
// 20, 22), the test problem every solver gets, and its FCLIB export.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "moreau/contact/contact_system.hpp"
#include "moreau/solver/solver.hpp"
#include "pile.hpp"

namespace pile_problems {

using moreau::ConeProblem;
using moreau::Contact;
using moreau::ContactSystem;
using moreau::SolverStats;
using moreau::VecX;

// The CCP of one SHAKE step (Kleinert eq. 20) as the stepper built it, copied from its
// problem observer so that every solver gets the very same problem.
struct MeasuredProblem {
  World world;  // state at the start of the step
  std::vector<Contact> contacts;
  VecX free_velocity, normal_offset, mu;
  std::unique_ptr<ContactSystem> system;
  ConeProblem problem;
};

MeasuredProblem measured_problem(const Pile& pile);

// Writes the problem with `impulses` (the most accurate solution found) as FCLIB files
// <stem>_local.hdf5 and <stem>_global.hdf5 into `directory`.
void export_fclib(const MeasuredProblem& measured, const VecX& impulses, const SolverStats& stats,
                  const std::string& title, const std::filesystem::path& directory,
                  const std::string& stem);

}  // namespace pile_problems
