#pragma once
// The shear-force history Delta q = q - q0 of the Krabbenhoft/NURBS chapter eq. 4.8: with a
// finite tangential stiffness the tangential force of a persistent contact is carried from one
// step to the next (Sec. 4.3: "requires the tracking of shear forces at contact points").
//
// A contact persists when the next detection finds the same (body a, body b, feature): the
// polygon narrow phase names the outline vertex that produced each contact (Contact::feature,
// docs/polygons.md), so a corner keeps its history while its neighbours enter and leave the
// margin; pair types without features are matched by their order within the pair. A contact that is
// not found again loses its history (it opened); a new one starts from q0 = 0.
#include <filesystem>
#include <map>
#include <tuple>
#include <vector>

#include "moreau/collision/contact.hpp"

namespace moreau::variational {

struct ContactKey {
  int body_a = -1;
  int body_b = -1;
  int order = 0;  // Contact::feature, or -1 - (index among the contacts of the pair)
  auto operator<=>(const ContactKey&) const = default;
};

// The key of each contact of a detection (contacts of one pair may be interleaved with others).
std::vector<ContactKey> contact_keys(const std::vector<Contact>& contacts);

// The carried force is kept as a vector, q t with t the contact's tangent (Contact::tangent1)
// when it was stored, and read as its projection on the tangent of the contact now. The frame
// turns as the bodies move: a vertex that slides onto the next edge of its neighbour turns it by
// the corner's angle, up to 180 degrees at a non-convex particle's notch. The scalar q along
// whatever tangent the contact has now would turn the force with it and push the particles
// sideways; the projection is how DEM codes turn their tangential springs into the new tangent
// plane, and it is continuous in the turn (a force across the new tangent is not carried).
class ShearHistory {
 public:
  // q0 per contact of `keys` (those of `contacts`): the carried force projected on the
  // contact's tangent, 0 for a contact not carried from the previous step.
  VecX lookup(const std::vector<ContactKey>& keys, const std::vector<Contact>& contacts) const;
  // Replaces the history with the tangential forces q of this step's contacts (along their
  // tangents).
  void store(const std::vector<ContactKey>& keys, const std::vector<Contact>& contacts,
             const VecX& tangential_forces);
  // Contacts of `keys` that carry a history from the previous step.
  long persistent(const std::vector<ContactKey>& keys) const;
  // The magnitude of the tangential force the contact carries from the previous step (0 if
  // none), N.
  double carried_force(const ContactKey& key) const;
  double largest_force() const;  // of every carried force, N (0 if none)
  void clear() { forces_.clear(); }
  // Renumbers the keys' bodies by `new_index` (World::remove_bodies) and drops the contacts of
  // removed bodies.
  void renumber(const std::vector<int>& new_index);
  std::size_t size() const { return forces_.size(); }
  // The carried tangential force vector per contact key, world frame, N.
  const std::map<ContactKey, Vec3>& forces() const { return forces_; }
  // Sets one contact's carried force (reading a checkpoint).
  void set(const ContactKey& key, const Vec3& force) { forces_[key] = force; }

 private:
  std::map<ContactKey, Vec3> forces_;
};

// Checkpoints of the history (shear_history.cpp), so that a resumed run carries Delta q of
// every persistent contact exactly as an uninterrupted one: a JSON file
//   {"format": "moreau shear history", "version": 2, "bodies": B,
//    "contacts": [[body_a, body_b, order, fx, fy, fz], ...]}
// with the force vector written with 17 significant digits (it reads back bit for bit). Throws
// InputError naming the file if it cannot be written.
void write_shear_history(const std::filesystem::path& path, const ShearHistory& history,
                         int bodies);
// Throws InputError naming the file and the entry for a file that is not such a history (or one
// of version 1, which held the scalar q instead of the vector), was written for another number of
// bodies, names a body outside [0, bodies), repeats a key or holds
// a force that is not finite.
ShearHistory read_shear_history(const std::filesystem::path& path, int bodies);

}  // namespace moreau::variational
