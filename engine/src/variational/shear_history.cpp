#include "moreau/variational/shear_history.hpp"

#include <utility>

namespace moreau::variational {

std::vector<ContactKey> contact_keys(const std::vector<Contact>& contacts) {
  std::map<std::pair<int, int>, int> seen;
  std::vector<ContactKey> keys;
  keys.reserve(contacts.size());
  for (const Contact& c : contacts) {
    const int order = seen[{c.body_a, c.body_b}]++;
    // The narrow phase's feature where it gives one (stable while a neighbouring feature enters
    // or leaves the margin), else the order within the pair (negative: the two never mix).
    keys.push_back({c.body_a, c.body_b, c.feature >= 0 ? c.feature : -1 - order});
  }
  return keys;
}

VecX ShearHistory::lookup(const std::vector<ContactKey>& keys) const {
  VecX q0 = VecX::Zero(static_cast<Eigen::Index>(keys.size()));
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (const auto it = forces_.find(keys[i]); it != forces_.end())
      q0(static_cast<Eigen::Index>(i)) = it->second;
  }
  return q0;
}

void ShearHistory::store(const std::vector<ContactKey>& keys, const VecX& tangential_forces) {
  forces_.clear();
  for (std::size_t i = 0; i < keys.size(); ++i)
    forces_[keys[i]] = tangential_forces(static_cast<Eigen::Index>(i));
}

long ShearHistory::persistent(const std::vector<ContactKey>& keys) const {
  long count = 0;
  for (const ContactKey& key : keys) count += forces_.count(key) > 0 ? 1 : 0;
  return count;
}

}  // namespace moreau::variational
