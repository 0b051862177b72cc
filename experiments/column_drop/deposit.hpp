#pragma once
// Measures of a granular deposit in a 2D world (column_drop, README.md "Measures"): the free
// surface as the highest particle point per vertical bin, the toe of the contiguous deposit
// from the symmetry wall, and the slope of a straight line fitted to the free surface.
#include <vector>

#include "moreau/model/world.hpp"

namespace moreau::column_drop {

// Outline points of a dynamic body in the world frame (a disk: its rim at 32 points).
std::vector<Vec2> body_outline(const RigidBody& body);

struct SurfaceBin {
  double x = 0.0;       // bin centre, m
  double height = 0.0;  // highest particle point in the bin, m (0 for an empty bin)
  bool occupied = false;
};

// The free surface on bins of width `bin` from the symmetry wall at x = 0 to the last particle.
std::vector<SurfaceBin> free_surface(const World& world, double bin);

// Right end of the last bin of the run of occupied bins that starts at the wall (an empty bin
// ends the deposit: particles thrown ahead of it are not part of the spread).
double toe(const std::vector<SurfaceBin>& surface, double bin);

struct SlopeFit {
  double angle_deg = 0.0;  // atan of minus the fitted slope
  double height = 0.0;     // largest bin height of the deposit
  int points = 0;          // bins in the fit
};

// Least-squares line through the bin heights h with low * H <= h <= high * H (H the deposit
// height), over the deposit (bins up to the toe): the straight part of the free surface between
// the one-particle layer at the toe and the flat top left near the wall.
SlopeFit surface_slope(const std::vector<SurfaceBin>& surface, double bin, double low, double high);

// Translational and rotational kinetic energy of the dynamic bodies whose centre lies at
// x < x_max (2D: rotation about z), and their count.
struct Energy {
  double kinetic = 0.0;
  double mass = 0.0;
  long bodies = 0;
};
Energy kinetic_energy(const World& world, double x_max);

}  // namespace moreau::column_drop
