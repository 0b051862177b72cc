#include "moreau/collision/collision_detector.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <sstream>
#include <string>

#include "moreau/core/error.hpp"

namespace moreau {
namespace {

// Pairs per narrow-phase chunk. Chunks are fixed by the pair list alone, so concatenating
// their buffers in chunk order gives the same contact list for any thread count.
constexpr int kPairsPerChunk = 512;

// Pairs are sorted by their first body, so the second one is a random access into the body
// array; fetching its pose a few pairs ahead overlaps those cache misses.
constexpr long kPrefetchDistance = 8;

void prefetch_body(const World& world, int index) {
  const RigidBody& body = world.bodies[index];
  __builtin_prefetch(&body.position);
  __builtin_prefetch(&body.orientation);
  __builtin_prefetch(&body.shape.offset);
  __builtin_prefetch(&body.shape.geometry);
}

std::string text(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

void CollisionOptions::validate() const {
  if (!(margin >= 0.0) || !std::isfinite(margin))
    throw InputError("collision options: margin must be finite and >= 0 m, got " + text(margin));
  if (!(cell_size >= 0.0) || !std::isfinite(cell_size))
    throw InputError(
        "collision options: cell_size must be finite and >= 0 m (0 = automatic), got " +
        text(cell_size));
}

std::vector<Contact> detect_contacts(const World& world, const CollisionOptions& options,
                                     CollisionStats* stats) {
  options.validate();
  const auto broad_start = std::chrono::steady_clock::now();
  const std::vector<std::pair<int, int>> pairs = broad_phase_pairs(world, options);
  const double broad_seconds = seconds_since(broad_start);

  const auto narrow_start = std::chrono::steady_clock::now();
  const long pair_count = static_cast<long>(pairs.size());
  const int chunks = static_cast<int>((pair_count + kPairsPerChunk - 1) / kPairsPerChunk);
  std::vector<std::vector<Contact>> found(chunks);
  // An exception may not leave a parallel region: each chunk keeps its first one and the
  // earliest chunk's is rethrown, which is the one a serial loop would have thrown.
  std::vector<std::exception_ptr> failure(chunks);
#pragma omp parallel for schedule(dynamic, 1) if (chunks > 1)
  for (int k = 0; k < chunks; ++k) {
    const long end = std::min(pair_count, static_cast<long>(k + 1) * kPairsPerChunk);
    try {
      for (long p = static_cast<long>(k) * kPairsPerChunk; p < end; ++p) {
        if (p + kPrefetchDistance < pair_count)
          prefetch_body(world, pairs[p + kPrefetchDistance].second);
        narrow_phase(world, pairs[p].first, pairs[p].second, options.margin, found[k]);
      }
    } catch (...) {
      failure[k] = std::current_exception();
    }
  }
  for (const std::exception_ptr& e : failure)
    if (e) std::rethrow_exception(e);

  std::vector<std::size_t> offset(chunks + 1, 0);
  for (int k = 0; k < chunks; ++k) offset[k + 1] = offset[k] + found[k].size();
  std::vector<Contact> contacts(offset[chunks]);
#pragma omp parallel for schedule(static) if (chunks > 1)
  for (int k = 0; k < chunks; ++k)
    std::copy(found[k].begin(), found[k].end(), contacts.begin() + offset[k]);

  if (stats) {
    stats->candidate_pairs = pair_count;
    stats->contacts = static_cast<long>(contacts.size());
    stats->broad_phase_seconds = broad_seconds;
    stats->narrow_phase_seconds = seconds_since(narrow_start);
  }
  return contacts;
}

}  // namespace moreau
