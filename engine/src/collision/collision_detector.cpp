#include "moreau/collision/collision_detector.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <sstream>
#include <string>
#include <variant>

#include "collision_buffers.hpp"
#include "moreau/core/error.hpp"

namespace moreau {
namespace {

// Below this many candidate pairs the narrow phase runs on one thread: the fork-join cost of
// an OpenMP region exceeds the work.
constexpr long kParallelPairs = 2048;

// Pairs are sorted by their first body, so the second one is a random access into the body
// data; fetching it a few pairs ahead overlaps those cache misses.
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

CollisionDetector::CollisionDetector()
    : buffers_(std::make_unique<collision_detail::DetectorBuffers>()) {}
CollisionDetector::~CollisionDetector() = default;
CollisionDetector::CollisionDetector(CollisionDetector&&) noexcept = default;
CollisionDetector& CollisionDetector::operator=(CollisionDetector&&) noexcept = default;

std::vector<Contact> detect_contacts(const World& world, const CollisionOptions& options,
                                     CollisionStats* stats) {
  // The working arrays stay with the calling thread, so that a stepper calling this every step
  // reuses them; only the returned vector is new memory.
  thread_local CollisionDetector detector;
  std::vector<Contact> contacts;
  detector.detect(world, options, contacts, stats);
  return contacts;
}

void CollisionDetector::detect(const World& world, const CollisionOptions& options,
                               std::vector<Contact>& contacts, CollisionStats* stats) {
  options.validate();
  if (!buffers_) buffers_ = std::make_unique<collision_detail::DetectorBuffers>();
  const auto broad_start = std::chrono::steady_clock::now();
  collision_detail::broad_phase_pairs(world, options, buffers_->broad);
  const std::vector<std::pair<int, int>>& pairs = buffers_->broad.pairs;
  const double broad_seconds = seconds_since(broad_start);

  const auto narrow_start = std::chrono::steady_clock::now();
  const long pair_count = static_cast<long>(pairs.size());
  // Sphere pairs, most pairs of a granular world, are evaluated from the broad phase's 32-byte
  // bounding spheres rather than from the body records (several cache lines each, scattered
  // across the body array), which keeps the narrow phase's memory traffic per pair the same
  // from a thousand bodies to millions.
  const std::vector<collision_detail::Bound>& bound = buffers_->broad.bound;
  const std::vector<char>& sphere = buffers_->broad.sphere;
  const bool all_spheres = buffers_->broad.all_spheres;
  // Each thread takes one contiguous range of the pair list and appends its contacts to its
  // own buffer; the buffers in thread order are the contact list in pair order, for any
  // thread count. The first buffer is the output (reserved for one contact per pair:
  // untouched capacity costs no memory traffic), so that one thread copies nothing.
  const int threads = pair_count > kParallelPairs ? omp_get_max_threads() : 1;
  std::vector<std::vector<Contact>>& found = buffers_->found;
  if (static_cast<int>(found.size()) < threads) found.resize(threads);
  contacts.clear();
  contacts.reserve(static_cast<std::size_t>(pair_count));
  // An exception may not leave a parallel region: each thread keeps its first one and the
  // earliest range's is rethrown, which is the one a serial loop would have thrown.
  std::vector<std::exception_ptr> failure(threads);
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num();
    const int count = omp_get_num_threads();
    const long first = pair_count * t / count;
    const long last = pair_count * (t + 1) / count;
    std::vector<Contact>& out = t == 0 ? contacts : found[t];
    if (t > 0) {
      out.clear();
      out.reserve(static_cast<std::size_t>(last - first));
    }
    try {
      for (long p = first; p < last; ++p) {
        if (p + kPrefetchDistance < last) {
          const int ahead = pairs[p + kPrefetchDistance].second;
          __builtin_prefetch(&bound[ahead]);
          if (!all_spheres) prefetch_body(world, ahead);
        }
        const auto [a, b] = pairs[p];
        if (sphere[a] && sphere[b]) {
          sphere_sphere_contact(a, bound[a].centre, bound[a].radius, b, bound[b].centre,
                                bound[b].radius, options.margin, world.dimension, out);
        } else {
          narrow_phase(world, a, b, options.margin, out);
        }
      }
    } catch (...) {
      failure[t] = std::current_exception();
    }
  }
  for (const std::exception_ptr& e : failure)
    if (e) std::rethrow_exception(e);
  for (int t = 1; t < threads; ++t)
    contacts.insert(contacts.end(), found[t].begin(), found[t].end());

  if (stats) {
    stats->candidate_pairs = pair_count;
    stats->contacts = static_cast<long>(contacts.size());
    stats->broad_phase_seconds = broad_seconds;
    stats->narrow_phase_seconds = seconds_since(narrow_start);
  }
}

}  // namespace moreau
