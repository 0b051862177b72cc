#pragma once
// The methods of Olsen & Kamrin Sec. 8.2 on the pyramid: classic CD (APGD, PGS) with compatible
// CD (Alg. 1) after its last step, and the penalty DEM run to rest.
#include <string>
#include <vector>

#include "forces.hpp"
#include "moreau/compatible/no_tension_truss.hpp"
#include "moreau/harness/results.hpp"
#include "moreau/solver/solver.hpp"
#include "pyramid.hpp"

namespace cannonball {

using moreau::ContactOrder;
using moreau::NoTensionTrussStats;

// How classic CD starts each step's solve and in which order PGS visits the contacts. Olsen &
// Kamrin Sec. 8.2 says nothing of warm starting, and its Fig. 9 ("qualitatively similar" APGD
// network, 14% over-prediction) matches the cold start, so every step starts from r = 0 by default;
// the warm-started runs are a separate, documented result (README.md). Natural order: the collision
// detector's list, sorted by body pair (a, b), i.e. a lexicographic sweep from the base up.
struct ClassicSetting {
  bool warm_start = false;
  ContactOrder order = ContactOrder::natural;
  unsigned seed = 1;  // ContactOrder::random: one fixed shuffle (std::mt19937 seeded with it)
};

struct CdRun {
  MethodResult classic;
  MethodResult compatible;
  NoTensionTrussStats truss;
  // The same last step with the augmented Lagrangian truss solver of Olsen & Kamrin Sec. 7 instead
  // of the interior point method (from a copy of the world before that step).
  NoTensionTrussStats augmented_lagrangian;
  double solver_difference = 0.0;  // ||f_ALM - f_IPM|| / ||f_IPM||
  long iterations = 0;
  double final_speed = 0.0;
  double last_step_solver_seconds = 0.0;  // the classic solve of the step compatible CD follows
};

CdRun run_cd(int base, Variant variant, const std::string& solver, long steps, double tolerance,
             double truss_tolerance, const std::vector<int>& base_bodies,
             bool compare_truss_solvers = false, const ClassicSetting& setting = {});

struct DemRun {
  MethodResult result;
  double time_step = 0.0;
  double stable_estimate = 0.0;
  long steps = 0;
  double final_speed = 0.0;
  double steps_per_second = 0.0;
};

DemRun run_dem(int base, Variant variant, const std::vector<int>& base_bodies);

// The costs of the methods on one variant: the DEM's steps, classic CD's iterations and time,
// compatible CD's Newton steps, residual and CHOLMOD timings.
void measure_costs(moreau::ExperimentResults& results, const std::string& label, const DemRun& dem,
                   const CdRun& apgd, const CdRun& pgs, long cd_steps);

}  // namespace cannonball
