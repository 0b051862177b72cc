#pragma once
// Random sphere packings of the scene generator random_spheres (docs/scene-format.md), apart
// from the parser that reads their parameters (private to the engine).
#include <array>
#include <random>
#include <vector>

#include "moreau/core/types.hpp"

namespace moreau::detail {

// Uniform on [0, 1) with 53 random bits, the same on every platform (the standard
// distributions are not specified bit for bit).
double uniform01(std::mt19937& rng);
double uniform(std::mt19937& rng, double low, double high);

// count spheres of radii uniform in [radius_min, radius_max] inside [box_min, box_max] along the
// first `axes` axes (the others stay 0).
struct SpherePlacement {
  int axes = 3;
  long count = 0;
  double radius_min = 0.0;
  double radius_max = 0.0;
  Vec3 box_min = Vec3::Zero();
  Vec3 box_max = Vec3::Zero();
  std::vector<Vec3> centres;  // the result
  std::vector<double> radii;
};

// Lattice sites of the given spacing along each axis of the box (1 along unused axes).
std::array<long, 3> lattice_sites(const SpherePlacement& p, double spacing);
// Sites of a cubic lattice of the given spacing (>= 2 radius_max, enough sites for count)
// filled layer by layer from the bottom (y outermost, then z, then x); each sphere moves at
// random within its own cell, so none can overlap.
void place_on_lattice(SpherePlacement& p, double spacing, std::mt19937& rng);
// Rejection sampling: up to max_attempts random centres per sphere until one does not overlap
// the spheres placed before. Throws InputError when a sphere finds no place.
void place_by_rejection(SpherePlacement& p, long max_attempts, std::mt19937& rng);

}  // namespace moreau::detail
