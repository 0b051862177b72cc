#pragma once
// An order of the bodies of a contact network in which bodies in contact are close, for the
// body-space operator's memory locality (body_space_operator.hpp): the Cuthill-McKee order
// (Cuthill & McKee 1969) of the graph whose edges are the cones with two dynamic sides, each
// connected component started from a pseudo-peripheral body (George & Liu 1979). Why: the
// operator's cone pass reads the two bodies of every cone, its body pass the cones of every
// body; in the order a scene lists its bodies (a settled packing's bodies have moved far from
// where they were created) those reads miss the cache, and an iteration at 1e5 spheres takes
// 1.7x as long with the bodies shuffled as in lattice order
// (validation/benchmark/results/ipm_body_order_and_assembled_k.json).
// A breadth-first order keeps a body's neighbours within one or two of its levels, a few
// thousand bodies in a 3D packing.
#include <array>
#include <vector>

namespace moreau::conic::detail {

// rank[b] = position of body b in the order (a permutation of 0 .. bodies - 1). Cones name
// their two bodies, -1 for a side without a dynamic body; bodies in no cone keep their
// relative order after those in cones. Deterministic: ties are broken by body index.
std::vector<int> cuthill_mckee_ranks(int bodies, const std::vector<std::array<int, 2>>& cones);

// An order for a Gauss-Seidel sweep that `parts` threads share (body_space_operator.hpp): the
// bodies cut by `rank` into `parts` contiguous ranges of about equal size; the bodies of a range
// in contact with a body of a later range (the separators) move to the end, in rank order, the
// rest keep their range and rank order. Then no cone joins the rest of two ranges, and a sweep
// runs the ranges in parallel and the separators after them (forward) or before them
// (backward): one level of nested dissection (George 1973) on top of the Cuthill-McKee levels,
// where a separator is about one level (under 1 % of the published trench's bodies at two
// parts). part_begin: parts + 1 entries, range t in [part_begin[t], part_begin[t + 1]), the
// separators from part_begin[parts] on.
struct SweepOrder {
  std::vector<int> rank;
  std::vector<int> part_begin;
};
SweepOrder separators_last(const std::vector<int>& rank,
                           const std::vector<std::array<int, 2>>& cones, int parts);

}  // namespace moreau::conic::detail
