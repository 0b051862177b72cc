// Body indices after World::remove_bodies: the stepper's last report and the warm starts
// follow the bodies, not their old positions in the body array.
#include <utility>
#include <vector>

#include "moreau/core/error.hpp"
#include "moreau/integrator/impulse_warm_start.hpp"
#include "moreau/integrator/stepper.hpp"

namespace moreau {
namespace {

// Keeps the contacts (and their `rows` impulse rows each, when `impulses` holds them) whose
// two bodies remain, with the new indices.
void renumber_contacts(const std::vector<int>& new_index, int rows, std::vector<Contact>& contacts,
                       VecX& impulses) {
  const auto mapped = [&](int body) {
    if (body < 0 || body >= static_cast<int>(new_index.size()))
      throw InputError("renumber_bodies: contact body " + std::to_string(body) +
                       " outside the map of " + std::to_string(new_index.size()) + " bodies");
    return new_index[body];
  };
  const bool with_impulses =
      impulses.size() == static_cast<Eigen::Index>(contacts.size()) * rows && rows > 0;
  std::size_t kept = 0;
  for (std::size_t i = 0; i < contacts.size(); ++i) {
    const int a = mapped(contacts[i].body_a), b = mapped(contacts[i].body_b);
    if (a < 0 || b < 0) continue;
    contacts[kept] = contacts[i];
    contacts[kept].body_a = a;
    contacts[kept].body_b = b;
    if (with_impulses && kept != i)
      impulses.segment(rows * static_cast<Eigen::Index>(kept), rows) =
          impulses.segment(rows * static_cast<Eigen::Index>(i), rows);
    ++kept;
  }
  contacts.resize(kept);
  if (with_impulses) impulses.conservativeResize(rows * static_cast<Eigen::Index>(kept));
}

}  // namespace

void ImpulseWarmStart::renumber(const std::vector<int>& new_index) {
  if (contacts_.empty()) return;
  const int rows = static_cast<int>(impulses_.size() / static_cast<Eigen::Index>(contacts_.size()));
  renumber_contacts(new_index, rows, contacts_, impulses_);
}

void Stepper::renumber_bodies(const std::vector<int>& new_index) {
  renumber_contacts(new_index, report_.rows_per_contact, report_.contacts, report_.impulses);
  report_.active_contacts = static_cast<long>(report_.contacts.size());
  on_bodies_renumbered(new_index);
}

}  // namespace moreau
