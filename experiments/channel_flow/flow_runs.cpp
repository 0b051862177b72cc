#include "flow_runs.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <string>
#include <utility>

#include "flow_checkpoint.hpp"
#include "moreau/core/error.hpp"
#include "moreau/harness/stepping.hpp"
#include "moreau/impact/block_solvers.hpp"
#include "moreau/model/shape.hpp"
#include "moreau/solver/projected_gauss_seidel.hpp"

namespace channel_flow {

using namespace moreau;
namespace resumable = moreau::resumable;

namespace {

RigidBody& named(Scene& scene, const std::string& name) {
  for (RigidBody& b : scene.world.bodies)
    if (b.name == name) return b;
  throw InputError(scene.source + ": no body \"" + name + "\", which the channel flow edits");
}

// Radial distribution region of Preclik et al. Fig. 12, [12, 14] cm of the 15 cm channel, as
// shares of the channel length.
constexpr double kRdfStart = 12.0 / 15.0, kRdfEnd = 14.0 / 15.0;
constexpr int kRdfBins = 100;
constexpr double kRdfReachDiameters = 5.0;

}  // namespace

void shrink_channel(Scene& scene, double factor, double height) {
  if (!scene.channel_flow) throw InputError(scene.source + ": no channel_flow section");
  if (!(factor > 0.0 && factor <= 1.0) || !(height > 0.0))
    throw InputError("shrink_channel: factor in (0, 1] and a positive height");
  const auto scale_xy = [&](RigidBody& b) {
    b.position.x() *= factor;
    b.position.y() *= factor;
  };
  for (const char* wall : {"wall_y_low", "wall_y_high", "floor", "lid"})
    scale_xy(named(scene, wall));
  named(scene, "lid").position.z() = height;
  RigidBody& cylinder = named(scene, "obstacle_cylinder");
  scale_xy(cylinder);
  cylinder.position.z() = 0.5 * height;
  Capsule& capsule = std::get<Capsule>(cylinder.shape.geometry);
  capsule.radius *= factor;
  capsule.half_length = height;  // the rounded ends stay outside the channel
  RigidBody& box = named(scene, "obstacle_box");
  scale_xy(box);
  box.position.z() = 0.5 * height;
  Box& b = std::get<Box>(box.shape.geometry);
  b.half_extents.x() *= factor;
  b.half_extents.y() *= factor;
  b.half_extents.z() = 0.5 * height;
  ChannelFlowOptions& flow = *scene.channel_flow;
  flow.outlet_x *= factor;
  flow.y_max *= factor;
  flow.z_max = height;
  flow.cells_x = std::max(1L, std::lround(static_cast<double>(flow.cells_x) * factor));
  flow.cells_y = std::max(1L, std::lround(static_cast<double>(flow.cells_y) * factor));
  flow.validate();
}

Outcome run(const RunSpec& spec) {
  Scene scene = load_scene(spec.scene);
  if (!scene.channel_flow) throw InputError(spec.scene + ": no channel_flow section");
  if (spec.shrink != 1.0 || spec.height != scene.channel_flow->z_max)
    shrink_channel(scene, spec.shrink, spec.height);
  if (spec.max_iterations > 0 || spec.tolerance >= 0.0) {
    SolverOptions common = common_options(scene.solver_options);
    if (spec.max_iterations > 0) common.max_iterations = spec.max_iterations;
    if (spec.tolerance >= 0.0) common.tolerance = spec.tolerance;
    set_common_options(scene.solver_options, common);
  }
  if (spec.check_every > 0) {
    if (auto* o = scene.solver_options.get_if<PgsOptions>()) o->check_every = spec.check_every;
    if (auto* o = scene.solver_options.get_if<MdBlendOptions>()) o->check_every = spec.check_every;
  }
  ChannelFlowOptions flow = *scene.channel_flow;
  flow.seed = spec.seed;
  Outcome out;
  out.model = scene.solver == "md_blend" ? "max_dissipation" : "coulomb";
  out.seed = spec.seed;
  out.label = out.model + " seed " + std::to_string(spec.seed);

  World& world = scene.world;
  const auto grid = [&] {
    return CellFields(flow.inlet_x, flow.outlet_x, flow.y_min, flow.y_max, flow.cells_x,
                      flow.cells_y);
  };
  out.profile.push_back(CellProfile{grid(), grid()});
  CellFields& mean = out.profile.front().mean;
  // A run continued from its checkpoint: the scene's bodies, then the plane and the
  // checkpoint's particles, whose states reading it replaces; the measures so far from its fields.
  const resumable::Persistence& persistence = spec.persistence;
  const nlohmann::json identity = run_identity(spec);
  std::optional<resumable::Checkpoint> resumed;
  if (persistence.resume)
    resumed = resumable::peek_checkpoint(persistence.directory, kCheckpointKind, identity);
  std::optional<ChannelInflow> made;
  if (resumed) {
    ChannelInflowState state;
    resumable::parse_fields(persistence.directory,
                            [&] { state = read_run_fields(resumed->fields, out, mean); });
    made.emplace(ChannelInflow::resume(world, flow, state));
    resumable::read_checkpoint(persistence.directory, kCheckpointKind, identity, world);
    out.resumed_at = resumed->step;
  } else {
    made.emplace(world, flow);
    out.initial_particles = made->particles_added();
  }
  ChannelInflow& inflow = *made;
  const int first = inflow.first_particle();

  const double dt = scene.time_step();
  out.steps = std::lround(spec.duration / dt);
  out.duration = static_cast<double>(out.steps) * dt;
  if (out.resumed_at > out.steps)
    throw InputError(resumable::checkpoint_file(persistence.directory).string() + ": step " +
                     std::to_string(out.resumed_at) + " is past this run's " +
                     std::to_string(out.steps) + " steps (a longer --duration continues it)");
  const double wall_before = out.wall_seconds;
  const auto start = std::chrono::steady_clock::now();
  const auto wall = [&] {
    return wall_before +
           std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  SteppingRun stepping(make_stepper(scene), [&](const Stepper&, const StepReport& report) {
    const long particles = static_cast<long>(world.bodies.size()) - first;
    double penetration = 0.0;
    for (const Contact& c : report.contacts)
      if (c.body_a >= first && c.body_b >= first) penetration = std::max(penetration, -c.gap);
    out.largest_penetration_any_step = std::max(out.largest_penetration_any_step, penetration);
    out.particle_steps += static_cast<double>(particles);
    out.contact_sweeps +=
        static_cast<double>(report.contacts.size()) * report.solver_stats.iterations;
    out.collision_seconds +=
        report.collision_stats.broad_phase_seconds + report.collision_stats.narrow_phase_seconds;
    out.solve_seconds += report.solver_stats.wall_seconds;
    if (report.step % spec.sample_every != 0) return;
    CellFields now = grid();
    now.add(world, first);
    out.samples.push_back(Sample{report.time, particles, static_cast<long>(report.contacts.size()),
                                 bed_solid_fraction(now, flow.radius, flow.z_min), penetration,
                                 report.solver_stats.iterations});
    if (report.time >= spec.steady_from - 0.5 * dt) mean.add(world, first);
    if (persistence.progress != nullptr)
      *persistence.progress << out.label << ": t = " << report.time << " s, step " << report.step
                            << "/" << out.steps << ", " << particles << " particles, "
                            << report.contacts.size() << " contacts, "
                            << resumable::duration_text(wall()) << " of wall clock" << std::endl;
  });
  stepping.stepper().resume_at(out.resumed_at);
  double last_save = resumable::now_seconds();
  const auto save = [&](long step) {
    out.wall_seconds = wall();
    resumable::write_checkpoint(
        persistence.directory,
        {kCheckpointKind, identity, run_fields(out, inflow.state(world), mean), step}, world);
    last_save = resumable::now_seconds();
  };
  for (long s = out.resumed_at; s < out.steps; ++s) {
    stepping.advance(1);
    inflow.after_step(stepping.stepper());
    if (persistence.directory.empty()) continue;
    const bool interrupt = persistence.interrupt_after >= 0 && s + 1 >= persistence.interrupt_after;
    if (interrupt || s + 1 == out.steps ||
        resumable::now_seconds() - last_save >= persistence.every_seconds)
      save(s + 1);
    if (interrupt)
      throw resumable::Interrupted(out.label + " interrupted after step " + std::to_string(s + 1));
  }
  out.wall_seconds = wall();
  out.particles_added = inflow.particles_added();
  out.particles_removed = inflow.particles_removed();
  out.profile.front().last.add(world, first);

  // Preclik et al. Fig. 12: the pairs of the region near the outflow, over its bed volume.
  const double length = flow.outlet_x - flow.inlet_x;
  const Vec3 lo(flow.inlet_x + kRdfStart * length, flow.y_min, flow.z_min);
  const Vec3 hi(flow.inlet_x + kRdfEnd * length, flow.y_max, flow.z_max);
  const long cells =
      std::max(1L, std::lround(static_cast<double>(flow.cells_x) * (kRdfEnd - kRdfStart)));
  CellFields region(lo.x(), hi.x(), lo.y(), hi.y(), cells, flow.cells_y);
  region.add(world, first);
  double bed = 0.0;
  for (long iy = 0; iy < region.cells_y(); ++iy)
    for (long ix = 0; ix < region.cells_x(); ++ix)
      if (region.at(ix, iy).count > 0)
        bed += region.cell_width() * region.cell_depth() * (region.at(ix, iy).height - lo.z());
  const double reach = kRdfReachDiameters * 2.0 * flow.radius;
  out.rdf = radial_distribution(world, first, lo, hi, bed, reach, kRdfBins);
  out.rdf_bin_width = reach / kRdfBins;
  out.diameter = 2.0 * flow.radius;
  return out;
}

Means steady_means(const Outcome& outcome, double from) {
  Means m;
  for (const Sample& s : outcome.samples) {
    if (s.time < from - 1e-12) continue;
    ++m.samples;
    m.particles += static_cast<double>(s.particles);
    m.contacts += static_cast<double>(s.contacts);
    m.contacts_per_particle +=
        s.particles > 0 ? static_cast<double>(s.contacts) / static_cast<double>(s.particles) : 0.0;
    m.solid_fraction += s.solid_fraction;
    m.penetration_max = std::max(m.penetration_max, s.penetration);
  }
  if (m.samples > 0) {
    const double n = static_cast<double>(m.samples);
    m.particles /= n;
    m.contacts /= n;
    m.contacts_per_particle /= n;
    m.solid_fraction /= n;
  }
  return m;
}

double steady_drift(const Outcome& o, double steady_from) {
  std::vector<double> n;
  for (const Sample& s : o.samples)
    if (s.time >= steady_from - 1e-12) n.push_back(static_cast<double>(s.particles));
  if (n.size() < 2) return std::nan("");
  const std::size_t half = n.size() / 2;
  double a = 0.0, b = 0.0;
  for (std::size_t i = 0; i < half; ++i) a += n[i];
  for (std::size_t i = half; i < n.size(); ++i) b += n[i];
  a /= static_cast<double>(half);
  b /= static_cast<double>(n.size() - half);
  return std::abs(b - a) / std::max(a, 1.0);
}

bool rdf_peak_at_diameter(const Outcome& o) {
  if (o.rdf.empty()) return false;
  const auto peak = std::max_element(o.rdf.begin(), o.rdf.end()) - o.rdf.begin();
  const double r = (static_cast<double>(peak) + 0.5) * o.rdf_bin_width / o.diameter;
  return std::abs(r - 1.0) <= 0.1;
}

}  // namespace channel_flow
