#include "contact_screening.hpp"

#include <algorithm>
#include <cmath>

#include "moreau/contact/contact_system.hpp"

namespace moreau::variational {

ForceProblem select_contacts(const ForceProblem& whole, const std::vector<int>& chosen) {
  const auto n = static_cast<Eigen::Index>(chosen.size());
  ForceProblem part;
  part.length_scale = whole.length_scale;
  part.force_scale = whole.force_scale;
  part.displacement_scale = whole.displacement_scale;
  part.degenerate_contact_floor = whole.degenerate_contact_floor;
  part.friction.resize(n);
  part.linear.resize(2 * n);
  if (whole.compliance.size() > 0) part.compliance.resize(2 * n);
  if (whole.shear_history.size() > 0) part.shear_history.resize(n);
  for (Eigen::Index k = 0; k < n; ++k) {
    const Eigen::Index i = chosen[k];
    part.friction(k) = whole.friction(i);
    part.linear.segment<2>(2 * k) = whole.linear.segment<2>(2 * i);
    if (whole.compliance.size() > 0)
      part.compliance.segment<2>(2 * k) = whole.compliance.segment<2>(2 * i);
    if (whole.shear_history.size() > 0) part.shear_history(k) = whole.shear_history(i);
  }
  return part;
}

double history_resolution(const ShearHistory& history, double tolerance, double force_scale) {
  return tolerance * std::max(force_scale, history.largest_force());
}

void split_contacts(const std::vector<char>& working, std::vector<int>& chosen,
                    std::vector<int>& left_out) {
  chosen.clear();
  left_out.clear();
  for (int i = 0; i < static_cast<int>(working.size()); ++i)
    (working[i] ? chosen : left_out).push_back(i);
}

bool admit_closing_contacts(const World& world, const std::vector<Contact>& detected,
                            const ForceProblem& whole, const std::vector<int>& left_out,
                            const VecX& moved, double allowance, std::vector<char>& working) {
  if (left_out.empty()) return false;
  std::vector<char> struck(world.bodies.size(), 0);
  bool closing = false;
  for (const int i : left_out) {
    const Vec3 relative = local_velocity(world, detected[i], moved);
    const double normal = whole.linear(2 * i) + relative(0);
    const double tangential = whole.linear(2 * i + 1) + relative(1);
    if (normal - whole.friction(i) * std::abs(tangential) >= -allowance) continue;
    closing = true;
    working[i] = 1;
    for (int body : {detected[i].body_a, detected[i].body_b})
      if (world.bodies[body].is_dynamic()) struck[body] = 1;
  }
  if (!closing) return false;
  for (int i : left_out) {
    if (struck[detected[i].body_a] || struck[detected[i].body_b]) working[i] = 1;
  }
  return true;
}

}  // namespace moreau::variational
