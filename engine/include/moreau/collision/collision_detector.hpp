#pragma once
// Broad phase (uniform cell grid, linear in the number of bodies) followed by the narrow
// phase per shape pair.
#include <memory>
#include <vector>

#include "moreau/collision/contact.hpp"
#include "moreau/model/world.hpp"

namespace moreau {

struct CollisionOptions {
  // Pairs whose gap is below this enter the contact problem (Olsen & Kamrin Sec. 3: "contacts whose
  // gap function is less than some threshold"), m. Must be >= 0.
  double margin = 0.0;
  // Cell size of the broad-phase grid, m; 0 picks twice the largest finite bounding radius
  // plus the margin.
  double cell_size = 0.0;
  void validate() const;
};

struct CollisionStats {
  long candidate_pairs = 0;  // pairs the broad phase handed to the narrow phase
  long contacts = 0;
  double broad_phase_seconds = 0.0;
  double narrow_phase_seconds = 0.0;
};

// Pairs of bodies whose bounding spheres (inflated by the margin) overlap, each pair once
// with a < b, in a deterministic order. A half-space is paired with the bodies whose bounding
// sphere reaches within the margin of its plane (every body, for another half-space). Two
// non-dynamic bodies are never paired.
std::vector<std::pair<int, int>> broad_phase_pairs(const World& world, const CollisionOptions& options);

// Contacts between two bodies (0, 1 or several points, e.g. a box resting on a half-space),
// appended to `out` when their gap is below the margin.
void narrow_phase(const World& world, int body_a, int body_b, double margin, std::vector<Contact>& out);

// The sphere-sphere case of narrow_phase (disks in a 2D world) for callers that keep the shape
// centres (position + R offset, R the orientation's rotation matrix) and radii in their own
// arrays: appends exactly the contact narrow_phase would for the two bodies.
void sphere_sphere_contact(int body_a, const Vec3& centre_a, double radius_a, int body_b,
                           const Vec3& centre_b, double radius_b, double margin,
                           Dimension dimension, std::vector<Contact>& out);

// All contacts of the world, in a deterministic order (by pair, then by point). The working
// arrays are kept per calling thread between calls (a thread-local CollisionDetector, below),
// the returned vector is new.
std::vector<Contact> detect_contacts(const World& world, const CollisionOptions& options,
                                     CollisionStats* stats = nullptr);

namespace collision_detail {
struct DetectorBuffers;
}

// detect_contacts with its working arrays and the caller's output vector kept from one call
// to the next, for callers that detect contacts every step: on a large world the arrays of a
// fresh call are new memory mappings whose pages the kernel faults in and zeroes at every call,
// a third of the CPU time at a million spheres. Same contacts in the same order as
// detect_contacts.
class CollisionDetector {
 public:
  CollisionDetector();
  ~CollisionDetector();
  CollisionDetector(CollisionDetector&&) noexcept;
  CollisionDetector& operator=(CollisionDetector&&) noexcept;

  // Replaces the contents of `out` by the contacts (its capacity is kept: pass the same vector
  // at every call).
  void detect(const World& world, const CollisionOptions& options, std::vector<Contact>& out,
              CollisionStats* stats = nullptr);

 private:
  std::unique_ptr<collision_detail::DetectorBuffers> buffers_;
};

}  // namespace moreau
