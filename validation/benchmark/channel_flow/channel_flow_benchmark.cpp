// Cost of the granular channel flow of Preclik et al. Sec. 4.3 at the published geometry: a
// performance benchmark, not a test (validation/benchmark/README.md). The published channel
// (15 x 6.5 x 2 cm, the obstacle, 0.47 mm spheres, dt = 10 us) holds a dense bed: the spheres
// on a touching cubic lattice (spacing one diameter) five diameters deep over the whole floor,
// about 220,000 spheres with about three contacts each, the size and contact density of the
// published flow (Table 2: 247,000 particles, 2.59 contacts each), moving at the inflow speed.
// The bed is shifted so that its last lattice layer lies on the outlet and the plane one step
// short of its reset: the timed steps delete a layer at the outlet and add one at the inlet, as
// every 47 steps of the flow do. For each impact model and thread count it times `steps` steps
// from the same state and prints, and writes as JSON:
//   particle_steps_per_second    particles x steps over the wall time of the steps
//   contact_sweeps_per_second    contacts x solver sweeps over the contact-solve time
//   collision_seconds_per_step   broad and narrow phase
//   inflow_seconds_per_step      ChannelInflow::after_step (deleting, renumbering, adding)
//   bytes_per_particle           resident memory of the state after the first step over the
//                                particles (bodies, contacts, detector and solver arrays); the
//                                process's first run only (0 printed, null in JSON, after it)
//
// Usage: channel_flow_benchmark [--steps N] [--sweeps N] [--threads LIST] [--json FILE]
#include <omp.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "moreau/io/scene.hpp"
#include "moreau/simulation/channel_flow.hpp"

namespace {

using namespace moreau;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Resident set size of the process, bytes (/proc/self/statm: pages).
double resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  long size = 0, resident = 0;
  statm >> size >> resident;
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE));
}

std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown";
}

struct Settings {
  long steps = 5;
  int sweeps = 10;  // per step: the cost per sweep is the figure, the count only scales it
  std::vector<int> threads{1, 2};
  std::string json_path;
};

// The resident memory a run adds is measured in the process's first run only: the allocator
// keeps the pages of a finished run for the next.
bool first_run = true;

nlohmann::json run(const std::string& scene_file, const Settings& settings, int threads) {
  omp_set_num_threads(threads);
  const double rss_before = resident_bytes();
  Scene scene = load_scene(scene_file);
  SolverOptions common = common_options(scene.solver_options);
  common.max_iterations = settings.sweeps;
  common.tolerance = 0.0;
  set_common_options(scene.solver_options, common);
  // Touching lattice neighbours are contacts: a margin of 1e-7 m (0.04% of the radius).
  scene.step.collision.margin = 1e-7;
  ChannelFlowOptions flow = *scene.channel_flow;
  const double d = 2.0 * flow.radius;
  flow.grid_spacing = d;
  flow.z_max = flow.z_min + 5.0 * d;
  flow.perturbation = 0.0;
  World& world = scene.world;
  ChannelInflow inflow(world, flow);
  // The last lattice layer onto the outlet (it leaves in the first step) and the plane one
  // step before its reset (a layer enters in the second).
  double last = 0.0;
  for (int i = inflow.first_particle(); i < static_cast<int>(world.bodies.size()); ++i)
    last = std::max(last, world.bodies[i].position.x());
  const double shift = flow.outlet_x - last + 1e-9;
  const double dt = scene.time_step();
  for (int i = inflow.first_particle(); i < static_cast<int>(world.bodies.size()); ++i)
    world.bodies[i].position.x() += shift;
  // The shift is at least two radii, so the plane stays behind the first lattice layer.
  world.bodies[inflow.plane()].position.x() =
      flow.inlet_x + flow.reset_distance() - 1.5 * flow.speed * dt;
  const long particles_start = static_cast<long>(world.bodies.size()) - inflow.first_particle();
  auto stepper = make_stepper(scene);

  double particle_steps = 0.0, contact_sweeps = 0.0, solve = 0.0, collision = 0.0, after = 0.0;
  double rss_after = 0.0;
  long contacts = 0, added = 0, removed = 0;
  const auto start = Clock::now();
  for (long s = 0; s < settings.steps; ++s) {
    const long particles = static_cast<long>(world.bodies.size()) - inflow.first_particle();
    const StepReport& report = stepper->step();
    particle_steps += static_cast<double>(particles);
    contacts = static_cast<long>(report.contacts.size());
    contact_sweeps += static_cast<double>(contacts) * report.solver_stats.iterations;
    solve += report.solver_stats.wall_seconds;
    collision +=
        report.collision_stats.broad_phase_seconds + report.collision_stats.narrow_phase_seconds;
    const auto t = Clock::now();
    const InflowUpdate update = inflow.after_step(*stepper);
    after += seconds_since(t);
    added += update.added;
    removed += update.removed;
    if (s == 0) rss_after = resident_bytes();
  }
  const double wall = seconds_since(start);
  const double steps = static_cast<double>(settings.steps);
  nlohmann::json out = {
      {"scene", scene_file.substr(scene_file.rfind('/') + 1)},
      {"solver", scene.solver},
      {"threads", threads},
      {"steps", settings.steps},
      {"sweeps_per_step", settings.sweeps},
      {"particles_at_start", particles_start},
      {"contacts_last_step", contacts},
      {"contacts_per_particle",
       static_cast<double>(contacts) / static_cast<double>(particles_start)},
      {"particles_added", added},
      {"particles_removed", removed},
      {"wall_seconds_per_step", wall / steps},
      {"particle_steps_per_second", particle_steps / wall},
      {"contact_sweeps_per_second", contact_sweeps / solve},
      {"solve_seconds_per_step", solve / steps},
      {"collision_seconds_per_step", collision / steps},
      {"inflow_seconds_per_step", after / steps},
      {"bytes_per_particle",
       first_run ? nlohmann::json((rss_after - rss_before) / static_cast<double>(particles_start))
                 : nlohmann::json()},
      {"body_record_bytes", sizeof(RigidBody)},
      {"contact_record_bytes", sizeof(Contact)}};
  first_run = false;
  std::printf(
      "%-8s threads %d: %ld particles, %ld contacts, %.3g particle-steps/s, %.3g contact "
      "sweeps/s, collision %.3g s/step, inflow %.3g s/step (+%ld -%ld), %.0f bytes/particle\n",
      scene.solver.c_str(), threads, particles_start, contacts,
      out["particle_steps_per_second"].get<double>(),
      out["contact_sweeps_per_second"].get<double>(), collision / steps, after / steps, added,
      removed, out["bytes_per_particle"].is_null() ? 0.0 : out["bytes_per_particle"].get<double>());
  std::fflush(stdout);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  Settings settings;
  for (int k = 1; k < argc; ++k) {
    const std::string arg = argv[k];
    if (arg == "--steps" && k + 1 < argc) {
      settings.steps = std::atol(argv[++k]);
    } else if (arg == "--sweeps" && k + 1 < argc) {
      settings.sweeps = std::atoi(argv[++k]);
    } else if (arg == "--threads" && k + 1 < argc) {
      settings.threads.clear();
      std::stringstream list(argv[++k]);
      std::string item;
      while (std::getline(list, item, ',')) settings.threads.push_back(std::atoi(item.c_str()));
    } else if (arg == "--json" && k + 1 < argc) {
      settings.json_path = argv[++k];
    } else {
      std::fprintf(stderr, "usage: %s [--steps N] [--sweeps N] [--threads LIST] [--json FILE]\n",
                   argv[0]);
      return 2;
    }
  }
  if (settings.steps < 2 || settings.sweeps < 1 || settings.threads.empty()) {
    std::fprintf(stderr, "--steps >= 2 (a layer enters in the second), --sweeps >= 1\n");
    return 2;
  }
  nlohmann::json report;
  report["machine"] = {{"cpu_model", cpu_model()},
                       {"hardware_concurrency", std::thread::hardware_concurrency()},
                       {"compiler", __VERSION__}};
  report["results"] = nlohmann::json::array();
  const std::string scenes = std::string(MOREAU_SOURCE_DIR) + "/scenes/";
  for (const char* scene : {"channel_flow_max_dissipation.json", "channel_flow_coulomb.json"})
    for (const int threads : settings.threads)
      report["results"].push_back(run(scenes + scene, settings, threads));
  if (!settings.json_path.empty()) std::ofstream(settings.json_path) << report.dump(2) << "\n";
  return 0;
}
