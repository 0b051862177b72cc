#include "moreau/variational/shear_history.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>

#include "moreau/core/error.hpp"

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

VecX ShearHistory::lookup(const std::vector<ContactKey>& keys,
                          const std::vector<Contact>& contacts) const {
  VecX q0 = VecX::Zero(static_cast<Eigen::Index>(keys.size()));
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (const auto it = forces_.find(keys[i]); it != forces_.end())
      q0(static_cast<Eigen::Index>(i)) = it->second.dot(contacts[i].tangent1);
  }
  return q0;
}

void ShearHistory::store(const std::vector<ContactKey>& keys, const std::vector<Contact>& contacts,
                         const VecX& tangential_forces) {
  forces_.clear();
  for (std::size_t i = 0; i < keys.size(); ++i)
    forces_[keys[i]] = tangential_forces(static_cast<Eigen::Index>(i)) * contacts[i].tangent1;
}

long ShearHistory::persistent(const std::vector<ContactKey>& keys) const {
  long count = 0;
  for (const ContactKey& key : keys) count += forces_.count(key) > 0 ? 1 : 0;
  return count;
}

double ShearHistory::largest_force() const {
  double largest = 0.0;
  for (const auto& [key, force] : forces_) largest = std::max(largest, force.norm());
  return largest;
}

double ShearHistory::carried_force(const ContactKey& key) const {
  const auto found = forces_.find(key);
  return found != forces_.end() ? found->second.norm() : 0.0;
}

namespace {

using json = nlohmann::json;
constexpr const char* kFormat = "moreau shear history";
constexpr int kVersion = 2;  // 1: the scalar q, not read

// The contacts of a history document into `history`.
void parse_contacts(const json& document, int bodies, ShearHistory& history) {
  if (!document.is_object() || document.value("format", "") != kFormat)
    throw InputError(std::string("not a shear history (no \"format\": \"") + kFormat + "\")");
  if (document.value("version", 0) != kVersion)
    throw InputError("version: expected " + std::to_string(kVersion) +
                     " (version 1 held the scalar q, before the carried force was a vector: "
                     "start the run afresh)");
  if (document.value("bodies", -1) != bodies)
    throw InputError("bodies: written for " + document.value("bodies", json()).dump() +
                     " bodies, the world has " + std::to_string(bodies));
  const json& contacts = document.value("contacts", json());
  if (!contacts.is_array()) throw InputError("contacts: expected an array");
  std::set<ContactKey> seen;
  for (std::size_t i = 0; i < contacts.size(); ++i) {
    const std::string where = "contacts[" + std::to_string(i) + "]";
    const json& c = contacts[i];
    if (!c.is_array() || c.size() != 6 || !c[0].is_number_integer() || !c[1].is_number_integer() ||
        !c[2].is_number_integer() || !c[3].is_number() || !c[4].is_number() || !c[5].is_number())
      throw InputError(where + ": expected [body_a, body_b, order, fx, fy, fz]");
    const ContactKey key{c[0].get<int>(), c[1].get<int>(), c[2].get<int>()};
    if (key.body_a < 0 || key.body_a >= bodies || key.body_b < 0 || key.body_b >= bodies)
      throw InputError(where + ": a body outside [0, " + std::to_string(bodies) + ")");
    if (!seen.insert(key).second) throw InputError(where + ": the key appears twice");
    const Vec3 force(c[3].get<double>(), c[4].get<double>(), c[5].get<double>());
    if (!force.allFinite()) throw InputError(where + ": the force is not finite");
    history.set(key, force);
  }
}

}  // namespace

void write_shear_history(const std::filesystem::path& path, const ShearHistory& history,
                         int bodies) {
  json contacts = json::array();
  for (const auto& [key, f] : history.forces())
    contacts.push_back(json::array({key.body_a, key.body_b, key.order, f.x(), f.y(), f.z()}));
  const json document = {
      {"format", kFormat}, {"version", kVersion}, {"bodies", bodies}, {"contacts", contacts}};
  std::ofstream out(path);
  out << document.dump() << '\n';  // nlohmann writes doubles with round-trip precision
  out.flush();
  if (!out) throw InputError(path.string() + ": cannot write the shear history");
}

ShearHistory read_shear_history(const std::filesystem::path& path, int bodies) {
  std::ifstream in(path);
  if (!in) throw InputError(path.string() + ": cannot open the shear history");
  ShearHistory history;
  try {
    parse_contacts(json::parse(in), bodies, history);
  } catch (const json::exception& e) {
    throw InputError(path.string() + ": malformed shear history: " + e.what());
  } catch (const InputError& e) {
    throw InputError(path.string() + ": " + e.what());
  }
  return history;
}

void ShearHistory::renumber(const std::vector<int>& new_index) {
  std::map<ContactKey, Vec3> renumbered;
  const int n = static_cast<int>(new_index.size());
  for (const auto& [key, force] : forces_) {
    if (key.body_a < 0 || key.body_a >= n || key.body_b < 0 || key.body_b >= n) continue;
    const int a = new_index[key.body_a], b = new_index[key.body_b];
    if (a >= 0 && b >= 0) renumbered[ContactKey{a, b, key.order}] = force;
  }
  forces_ = std::move(renumbered);
}

}  // namespace moreau::variational
