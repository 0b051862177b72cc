#include "moreau/integrator/impulse_warm_start.hpp"

#include <cstdint>
#include <unordered_map>

namespace moreau {
namespace {

// (body_a, body_b, ordinal) as one key; body indices below 2^24 and ordinals below 2^16 fit.
std::uint64_t pair_key(int body_a, int body_b) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(body_a)) << 32) |
         static_cast<std::uint32_t>(body_b);
}

// The key of each contact and its ordinal among the contacts of the same pair, in order.
std::vector<std::pair<std::uint64_t, int>> keyed(const std::vector<Contact>& contacts) {
  std::unordered_map<std::uint64_t, int> ordinal;
  ordinal.reserve(contacts.size());
  std::vector<std::pair<std::uint64_t, int>> keys;
  keys.reserve(contacts.size());
  for (const Contact& c : contacts) {
    const std::uint64_t key = pair_key(c.body_a, c.body_b);
    keys.emplace_back(key, ordinal[key]++);
  }
  return keys;
}

struct KeyHash {
  std::size_t operator()(const std::pair<std::uint64_t, int>& k) const {
    return std::hash<std::uint64_t>()(k.first * 0x9E3779B97F4A7C15ull +
                                      static_cast<unsigned>(k.second));
  }
};

}  // namespace

void ImpulseWarmStart::remember(const std::vector<Contact>& contacts, const VecX& impulses) {
  contacts_ = contacts;
  impulses_ = impulses;
}

void ImpulseWarmStart::clear() {
  contacts_.clear();
  impulses_.resize(0);
}

void ImpulseWarmStart::apply(const std::vector<Contact>& contacts, int rows_per_contact,
                             VecX& impulses) const {
  const int rows = rows_per_contact;
  if (impulses_.size() == 0 ||
      impulses_.size() != static_cast<Eigen::Index>(contacts_.size()) * rows)
    return;
  std::unordered_map<std::pair<std::uint64_t, int>, int, KeyHash> previous;
  const auto previous_keys = keyed(contacts_);
  previous.reserve(previous_keys.size());
  for (int i = 0; i < static_cast<int>(previous_keys.size()); ++i) previous[previous_keys[i]] = i;
  const auto keys = keyed(contacts);
  for (int i = 0; i < static_cast<int>(keys.size()); ++i) {
    const auto it = previous.find(keys[i]);
    if (it != previous.end())
      impulses.segment(rows * i, rows) = impulses_.segment(rows * it->second, rows);
  }
}

}  // namespace moreau
