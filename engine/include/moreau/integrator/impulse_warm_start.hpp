#pragma once
// Warm start of a time stepper's contact solve: the previous step's impulses, matched to this
// step's contacts by (body_a, body_b, ordinal of the point within the pair). A settled packing
// carries nearly the same impulses from step to step, so an iterative solver started from
// them needs far fewer iterations than from zero (Tasora & Anitescu's warm start in Chrono);
// unmatched contacts start from zero.
#include <vector>

#include "moreau/collision/contact.hpp"
#include "moreau/core/types.hpp"

namespace moreau {

class ImpulseWarmStart {
 public:
  // Keeps `impulses` (rows_per_contact per contact) of `contacts` for the next step.
  void remember(const std::vector<Contact>& contacts, const VecX& impulses);
  // Writes the remembered impulses of matching contacts into `impulses` (sized
  // rows_per_contact * contacts.size(); other entries untouched). Does nothing when nothing
  // is remembered or the row count differs.
  void apply(const std::vector<Contact>& contacts, int rows_per_contact, VecX& impulses) const;
  void clear();
  // Renumbers the remembered contacts' bodies by `new_index` (World::remove_bodies) and drops
  // those of removed bodies, with their impulses.
  void renumber(const std::vector<int>& new_index);

 private:
  std::vector<Contact> contacts_;
  VecX impulses_;
};

}  // namespace moreau
