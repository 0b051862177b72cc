#pragma once
// The runs of the sliding ball (Dumont Sec. 4.1): the scene's ball, and one run of the scene
// with an NLGS local solver, sampled every step.
#include <string>
#include <utility>
#include <vector>

#include "moreau/io/scene.hpp"
#include "moreau/nlgs/nlgs_solver.hpp"

namespace sliding_ball {

using moreau::Dimension;
using moreau::LocalMethod;
using moreau::Scene;

// The scene of Dumont Sec. 4.1 (ball, plane, mu, v0, dt, the 2000 steps of Table 1, eps_glob
// <= 1e-10) is scenes/sliding_ball.json, which `moreau run` runs with NLGS-EAL; this program
// runs it with each local solver.
inline const std::string kScene = std::string(MOREAU_SCENES_DIR) + "/sliding_ball.json";
constexpr double kGravity = 9.81;  // m/s^2, for the analytic t*; the scene's |gravity| is checked
constexpr double kSpeed = 1.5;     // m/s, for kRollingSlip; the scene's v0 is checked
struct Sample {
  double time, speed, rolling_speed, slip, epsilon_glob;
  int iterations;
};

struct Outcome {
  LocalMethod method;
  double alpha = 0.0;  // rho = alpha rho_bar; 0: the method's default of Dumont
  std::string label;
  std::vector<Sample> samples;
  std::vector<std::pair<long, std::vector<moreau::NlgsIterate>>> histories;
  moreau::NlgsStats last;
  long unconverged_steps = 0;
  long newton_unconverged = 0;
  double cpu_seconds = 0.0;        // whole run: detection, solve, update
  double solve_cpu_seconds = 0.0;  // contact solves only
};

// The ball of the scene, its radius, and mu between ball and plane; throws when the scene
// is not the one this program's analysis assumes.
struct Ball {
  int body = -1;
  double radius = 0.0, speed = 0.0, mu = 0.0;
};
Ball find_ball(const Scene& scene);

// One run of the scene with `method` and rho = alpha rho_bar (0: the method's default).
// Dimension two: the same scene with a disk (a 2D world, inertia m r^2 / 2, same mass) instead
// of the ball.
Outcome run(const Scene& scene, LocalMethod method, double alpha,
            Dimension dimension = Dimension::three);

}  // namespace sliding_ball
