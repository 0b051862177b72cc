#pragma once
// The granular channel flow of Preclik et al. Sec. 4.3 (Fig. 9): a channel whose walls and
// obstacle are ordinary fixed bodies of the scene, fed at x = inlet_x by a plane of infinite mass
// moving at `speed` that pushes layers of monodisperse spheres in, and open at x = outlet_x,
// where particles leaving the channel are deleted. The world's body set changes while a run
// goes on: ChannelInflow::after_step appends the new layers and removes the particles past the
// outlet, and renumbers the stepper's state (Stepper::renumber_bodies).
//
// Layers (Preclik et al. Sec. 4.3): after the plane has moved two particle radii it is reset to
// inlet_x and a new layer is generated in front of it, on a grid of spacing `grid_spacing` in y
// and z with centres at x = inlet_x + radius. Each particle starts at `speed` in x plus a
// perturbation uniform in [-perturbation, perturbation] in y and in z, from a seeded generator,
// so that a run is a function of `seed`.
//
// Bodies are kept in one array in order of creation: the fixed scene bodies first, then the
// plane, then the particles in layer order (oldest first). Deleting at the outlet removes
// mostly the oldest particles, so the array stays sorted by age; a domain decomposition can
// split it by x with one stable partition per step, and each subdomain keeps the same
// append-at-inlet, remove-at-outlet pattern.
#include <cstdint>
#include <vector>

#include "moreau/integrator/stepper.hpp"
#include "moreau/model/world.hpp"

namespace moreau {

struct ChannelFlowOptions {
  double inlet_x = 0.0;        // m, where the plane starts and is reset to
  double outlet_x = 0.15;      // m, particles whose centre passes it are deleted
  double y_min = 0.0;          // m, the cross-section the layers fill: [y_min, y_max]
  double y_max = 0.065;        // m
  double z_min = 0.0;          // m, [z_min, z_max]
  double z_max = 0.02;         // m
  double radius = 0.235e-3;    // m, particle radius (Preclik et al.: diameter 0.47 mm)
  int material = 0;            // index into World::materials (its density gives the mass)
  double grid_spacing = 1e-3;  // m, of the layer grid in y and z
  double speed = 1.0;          // m/s, of the plane and of the new particles along x
  double perturbation = 0.5;   // m/s, half-width of the uniform y and z velocity perturbation
  std::uint32_t seed = 1;      // of the perturbations
  // The channel starts filled (Preclik et al. Sec. 4.3: "The channel is filled with ...
  // particles ... arranged on a regular rectangular grid with a spacing of 1 mm", all at
  // `speed` plus the perturbation): the layer grid repeated every grid_spacing along x up to the
  // outlet, leaving out the points whose sphere would overlap a fixed body (the obstacle).
  bool fill = true;
  long cells_x = 150;  // cells of the per-cell fields along x (CellFields)
  long cells_y = 65;   // and along y
  // Throws InputError naming the field.
  void validate() const;
  // Distance the plane moves before it is reset: two radii (Preclik et al. Sec. 4.3), m.
  double reset_distance() const { return 2.0 * radius; }
  // Grid points of one layer in y and in z.
  int layer_columns() const;
  int layer_rows() const;
};

// What one call of ChannelInflow::after_step changed.
struct InflowUpdate {
  int added = 0;    // particles of a new layer (0 between resets)
  int removed = 0;  // particles deleted at the outlet
};

// What an inflow carries beside the world's bodies: the counters and the generator's state, all a
// checkpoint needs to continue a run (the plane's position and every particle are bodies).
struct ChannelInflowState {
  long layers = 0, added = 0, removed = 0;
  std::uint64_t generator = 0;  // splitmix64 state
  long particles = 0;           // particle bodies in the world (from first_particle() on)
};

class ChannelInflow {
 public:
  // Appends the plane (a prescribed half-space with normal +x at inlet_x, moving at `speed`),
  // the first layer and, with `fill`, the initial filling to `world`. Throws InputError for invalid
  // options or a material the world lacks.
  ChannelInflow(World& world, ChannelFlowOptions options);

  // The inflow of a run continued from a checkpoint: appends to `world` (the scene's world, as
  // the constructor takes it) the plane and `state.particles` spheres at rest, the bodies of the
  // checkpoint, whose states reading it (read_checkpoint_contents, moreau/io/checkpoint.hpp)
  // then replaces; the counters and the generator continue from `state`. Throws InputError as
  // the constructor, and for a negative count.
  static ChannelInflow resume(World& world, ChannelFlowOptions options,
                              const ChannelInflowState& state);
  ChannelInflowState state(const World& world) const;

  // After each step of `stepper` (whose world is the one given above): deletes the particles
  // past the outlet, and, once the plane has moved two radii, resets it and appends a new
  // layer. Renumbers the stepper's state when bodies were removed.
  InflowUpdate after_step(Stepper& stepper);

  const ChannelFlowOptions& options() const { return options_; }
  int plane() const { return plane_; }
  // Index of the first particle body: every body from here on is a particle.
  int first_particle() const { return first_particle_; }
  long layers() const { return layers_; }
  long particles_added() const { return added_; }
  long particles_removed() const { return removed_; }

 private:
  // The plane and the particle template (no particle).
  ChannelInflow(World& world, ChannelFlowOptions options, int);
  void add_layer(World& world);
  void fill(World& world);
  double uniform();  // in [-1, 1), from the seeded generator

  ChannelFlowOptions options_;
  int plane_ = -1;
  int first_particle_ = 0;
  long layers_ = 0, added_ = 0, removed_ = 0;
  std::uint64_t state_;  // splitmix64: the same sequence on every platform
  RigidBody particle_;   // the template of a new particle
};

// Velocity and angular velocity averaged per cell of an x-y grid over the particles whose
// centre lies in it, z ignored (Preclik et al. Sec. 4.3, Fig. 10-11: 150 x 65 cells), summed
// over the samples added.
class CellFields {
 public:
  CellFields(double x_min, double x_max, double y_min, double y_max, long cells_x, long cells_y);
  // Adds the bodies from `first` on (the particles) as one sample.
  void add(const World& world, int first);
  void clear();

  struct Cell {
    long count = 0;
    Vec3 velocity = Vec3::Zero();  // sums
    Vec3 angular_velocity = Vec3::Zero();
    double height = 0.0;  // highest particle top (z + r) seen in the cell, m
  };
  long cells_x() const { return nx_; }
  long cells_y() const { return ny_; }
  const Cell& at(long ix, long iy) const { return cells_[iy * nx_ + ix]; }
  // The sums of a cell, to restore them (a run continued from a checkpoint).
  Cell& at(long ix, long iy) { return cells_[iy * nx_ + ix]; }
  double cell_width() const { return (x1_ - x0_) / static_cast<double>(nx_); }
  double cell_depth() const { return (y1_ - y0_) / static_cast<double>(ny_); }
  double centre_x(long ix) const { return x0_ + (static_cast<double>(ix) + 0.5) * cell_width(); }
  double centre_y(long iy) const { return y0_ + (static_cast<double>(iy) + 0.5) * cell_depth(); }
  // The largest |mean velocity| over the cells holding at least `min_count` particle samples,
  // m/s.
  double peak_speed(long min_count = 1) const;

 private:
  double x0_, x1_, y0_, y1_;
  long nx_, ny_;
  std::vector<Cell> cells_;
};

// Solid volume fraction of the bed sampled into `cells` (one sample of equal spheres of
// `radius`): the particles' volume over the volume between the floor z_floor and the bed's
// surface, the surface of each cell being its highest particle top. Preclik et al. do not define
// theirs; this one leaves out the empty upper part of the channel, which their 57.2% must.
double bed_solid_fraction(const CellFields& cells, double radius, double z_floor);

// Radial distribution function of the particles from `first` whose centres lie in the box
// [lo, hi] (Preclik et al. Sec. 4.3, Fig. 12): the histogram of pair distances up to `r_max` in
// `bins` bins, each divided by the particle count and by the expected count 4 pi rho r^2 dr of
// its shell with rho = count / `volume` (the volume the particles occupy, m^3).
std::vector<double> radial_distribution(const World& world, int first, const Vec3& lo,
                                        const Vec3& hi, double volume, double r_max, int bins);

}  // namespace moreau
