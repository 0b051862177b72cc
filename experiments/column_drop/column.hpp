#pragma once
// The column of Krabbenhoft/NURBS chapter Sec. 4.4.2 (README.md, "Scene"): the chapter's
// parameters and ours, the box of each family sized for H0 / L0 = 1.68, the world of particles on
// a loose lattice, and the variational stepper's options.
#include <limits>

#include "moreau/model/shape_families.hpp"
#include "moreau/model/world.hpp"
#include "moreau/variational/variational_stepper.hpp"

namespace moreau::column_drop {

// Chapter Sec. 4.4.2.
constexpr double kAspect = 1.68;  // H0 / L0
constexpr double kBaseFriction = 0.5;
constexpr double kTheta = 0.7;
constexpr double kTimeStep = 0.05;
constexpr double kNormalStiffness = 1e8;
constexpr long kPublishedParticles = 1520;
// One of each shape: a smoke test (README.md "Quick and full scale").
constexpr long kQuickParticles = 16;
constexpr long kPublishedStepsFriction = 1600;      // Fig. 4.10: final configurations, mu = 0.5
constexpr long kPublishedStepsFrictionless = 3200;  // Fig. 4.13, mu = 0
// Choices (README.md "Scene"): mean diameter 1 m, density 1 kg/m^2. The time unit follows from
// the motion of one step at the free-fall speed of the column height, sqrt(2 g H0) dt = 0.15 d.
constexpr double kDiameter = 1.0;
constexpr double kDensity = 1.0;
constexpr double kStepMotion = 0.15;  // in mean diameters
// Packing fractions of the settled columns, to size each box for H0 / L0 = 1.68 (measured in a
// first settle of 60 particles per family; the settled H0 / L0 is measured again every run).
constexpr double kPackingDisk = 0.78, kPackingAngular = 0.72, kPackingNonConvex = 0.67;
constexpr double kMarginFactor = 1.2;  // margin = 1.2 x the step motion (as pile_problems)
// Measures (README.md "Measures").
constexpr double kBin = kDiameter;
constexpr double kSlopeLow = 0.1, kSlopeHigh = 0.9;
constexpr double kStoppedEnergy = 1e-3;  // kinetic energy / (N m g d) at the end
constexpr double kStoppedToe = 0.1;      // toe advance over the window, in d
constexpr double kInfinity = std::numeric_limits<double>::infinity();

enum class Family { disk, angular, non_convex };

const char* name(Family f);  // "disk", "angular", "non_convex"

struct Setup {
  long particles = 0;
  double width[3] = {0.0, 0.0, 0.0};  // L0 of each family's box, m
  double gravity = 0.0;               // m/s^2
  long steps_friction = 0, steps_frictionless = 0;
};

// Box widths from the particle count, the packing and the aspect ratio; g so that a step moves a
// particle falling from the top of the non-convex column by kStepMotion diameters; run lengths
// scaled from the paper's step counts by the column height (steps to rest ~ H0 / (sqrt(2 g H0) dt)
// at fixed motion).
Setup make_setup(long particles, const ShapeFamilies& shapes);

// Materials: 0 particles, 1 base (mu 0.5 with particles), 2 the smooth walls (mu 0).
// Bodies: 0 base, 1 symmetry wall at x = 0, 2 the side wall at x = L0 (removed by release),
// then the particles on a loose lattice above the base.
World column_world(const Setup& setup, const ShapeFamilies& shapes, Family family, double mu);

VariationalOptions stepper_options(double margin, double theta);

double highest_point(const World& world);

}  // namespace moreau::column_drop
