#pragma once
// VTK XML PolyData output (ASCII .vtp files) that ParaView opens: per output step one file
// of particles and one of the contact force network, and the collections particles.pvd and
// contacts.pvd that give every file its simulated time (open the .pvd in ParaView).
#include <filesystem>
#include <fstream>
#include <iosfwd>
#include <optional>
#include <string>

#include "moreau/integrator/stepper.hpp"
#include "moreau/model/world.hpp"

namespace moreau {

// Particles: one vertex per body with a bounded shape (half-spaces are left out), at the
// shape centre. Point data: body (index), radius (bounding radius, m), velocity (m/s),
// angular_velocity (rad/s), orientation (quaternion w, x, y, z), shape (0 sphere/disk,
// 1 box, 2 capsule, 3 polygon), half_extents (box half extents; (r, r, r) for a sphere;
// (h + r, r, r) for a capsule; (R, R, R) for a polygon of bounding radius R, m) and motion
// (0 dynamic, 1 fixed, 2 prescribed). A Glyph filter with scale array "radius" draws spheres
// and disks; polygons are drawn from write_polygons_vtp.
void write_particles_vtp(std::ostream& out, const World& world);

// Polygons (2D worlds): one VTK_POLYGON cell per polygon body, its outline in the world frame
// (a non-convex particle is one cell; ParaView draws it filled). Cell data: body, velocity,
// angular_velocity, pieces (number of convex pieces) and motion.
void write_polygons_vtp(std::ostream& out, const World& world);

// Contact force network: one line per contact, between the shape centres of the two bodies
// (the contact point stands in for a half-space). Cell data: force (|f|, N), normal_force
// (f_n, N), force_vector (force of body a on body b, world frame, N), gap (m), body_a,
// body_b. Forces are impulses / time_step. `report` may be null (no step taken yet): the
// network is then empty.
void write_contact_network_vtp(std::ostream& out, const World& world, const StepReport* report,
                               double time_step);

// A .pvd collection file (time -> data set file) that stays valid after every addition.
class PvdCollection {
 public:
  explicit PvdCollection(const std::filesystem::path& path);
  void add(double time, const std::string& file);

 private:
  std::filesystem::path path_;
  std::ofstream out_;
};

class VtkWriter {
 public:
  // Creates `directory` if needed and starts particles.pvd and contacts.pvd there; throws
  // InputError naming the path if that fails.
  explicit VtkWriter(const std::filesystem::path& directory);

  // Writes particles_<step>.vtp and contacts_<step>.vtp (step zero-padded to 8 digits) and
  // adds them to the collections; when the world has polygons, also polygons_<step>.vtp in
  // polygons.pvd (started at the first step that has one).
  void write(const World& world, long step, const StepReport* report, double time_step);

 private:
  std::filesystem::path directory_;
  PvdCollection particles_;
  PvdCollection contacts_;
  std::optional<PvdCollection> polygons_;
};

}  // namespace moreau
