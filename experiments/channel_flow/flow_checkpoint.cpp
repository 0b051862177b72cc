#include "flow_checkpoint.hpp"

#include <filesystem>
#include <string>

#include "moreau/core/error.hpp"

namespace channel_flow {

using json = nlohmann::json;

json run_identity(const RunSpec& spec) {
  return {{"scene", std::filesystem::path(spec.scene).filename().string()},
          {"seed", spec.seed},
          {"shrink", spec.shrink},
          {"height", spec.height},
          {"sample_every", spec.sample_every},
          {"steady_from", spec.steady_from},
          {"max_iterations", spec.max_iterations},
          {"tolerance", spec.tolerance},
          {"check_every", spec.check_every}};
}

json run_fields(const Outcome& o, const moreau::ChannelInflowState& inflow,
                const moreau::CellFields& steady_mean) {
  json samples = json::array();
  for (const Sample& s : o.samples)
    samples.push_back(
        {s.time, s.particles, s.contacts, s.solid_fraction, s.penetration, s.iterations});
  // The cells that hold samples: ix, iy, count, velocity and angular-velocity sums, height.
  json cells = json::array();
  for (long iy = 0; iy < steady_mean.cells_y(); ++iy)
    for (long ix = 0; ix < steady_mean.cells_x(); ++ix) {
      const moreau::CellFields::Cell& c = steady_mean.at(ix, iy);
      if (c.count == 0) continue;
      cells.push_back({ix, iy, c.count, c.velocity.x(), c.velocity.y(), c.velocity.z(),
                       c.angular_velocity.x(), c.angular_velocity.y(), c.angular_velocity.z(),
                       c.height});
    }
  return {{"inflow",
           {{"layers", inflow.layers},
            {"added", inflow.added},
            {"removed", inflow.removed},
            {"generator", inflow.generator},
            {"particles", inflow.particles}}},
          {"samples", samples},
          {"steady_cells", cells},
          {"initial_particles", o.initial_particles},
          {"largest_penetration_any_step", o.largest_penetration_any_step},
          {"particle_steps", o.particle_steps},
          {"contact_sweeps", o.contact_sweeps},
          {"collision_seconds", o.collision_seconds},
          {"solve_seconds", o.solve_seconds},
          {"wall_seconds", o.wall_seconds}};
}

moreau::ChannelInflowState read_run_fields(const json& fields, Outcome& o,
                                           moreau::CellFields& steady_mean) {
  const json& in = fields.at("inflow");
  moreau::ChannelInflowState inflow{
      in.at("layers").get<long>(), in.at("added").get<long>(), in.at("removed").get<long>(),
      in.at("generator").get<std::uint64_t>(), in.at("particles").get<long>()};
  o.samples.clear();
  for (const json& s : fields.at("samples"))
    o.samples.push_back(Sample{s.at(0).get<double>(), s.at(1).get<long>(), s.at(2).get<long>(),
                               s.at(3).get<double>(), s.at(4).get<double>(), s.at(5).get<int>()});
  steady_mean.clear();
  for (const json& c : fields.at("steady_cells")) {
    const long ix = c.at(0).get<long>(), iy = c.at(1).get<long>();
    if (ix < 0 || ix >= steady_mean.cells_x() || iy < 0 || iy >= steady_mean.cells_y())
      throw moreau::InputError("steady_cells: cell (" + std::to_string(ix) + ", " +
                               std::to_string(iy) + ") outside the grid of " +
                               std::to_string(steady_mean.cells_x()) + " x " +
                               std::to_string(steady_mean.cells_y()));
    moreau::CellFields::Cell& cell = steady_mean.at(ix, iy);
    cell.count = c.at(2).get<long>();
    cell.velocity =
        moreau::Vec3(c.at(3).get<double>(), c.at(4).get<double>(), c.at(5).get<double>());
    cell.angular_velocity =
        moreau::Vec3(c.at(6).get<double>(), c.at(7).get<double>(), c.at(8).get<double>());
    cell.height = c.at(9).get<double>();
  }
  o.initial_particles = fields.at("initial_particles").get<long>();
  o.largest_penetration_any_step = fields.at("largest_penetration_any_step").get<double>();
  o.particle_steps = fields.at("particle_steps").get<double>();
  o.contact_sweeps = fields.at("contact_sweeps").get<double>();
  o.collision_seconds = fields.at("collision_seconds").get<double>();
  o.solve_seconds = fields.at("solve_seconds").get<double>();
  o.wall_seconds = fields.at("wall_seconds").get<double>();
  return inflow;
}

}  // namespace channel_flow
