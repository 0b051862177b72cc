#include "moreau/solver/cone_problem.hpp"

#include <cmath>
#include <sstream>
#include <string>

#include "moreau/core/error.hpp"

namespace moreau {

namespace {

[[noreturn]] void fail(const std::string& message) { throw InputError("cone problem: " + message); }

}  // namespace

void ConeProblem::validate() const {
  if (delassus == nullptr) fail("no Delassus operator given");
  const int rows_per_contact = rows();
  if (rows_per_contact < 1 || rows_per_contact > 3) {
    fail("rows per contact = " + std::to_string(rows_per_contact) + " must be 1, 2 or 3");
  }
  if (q.size() != size()) {
    fail("q has " + std::to_string(q.size()) + " entries, expected " + std::to_string(size()) +
         " (" + std::to_string(contact_count()) + " contacts x " +
         std::to_string(rows_per_contact) + " rows)");
  }
  for (Eigen::Index k = 0; k < q.size(); ++k) {
    if (!std::isfinite(q[k])) {
      std::ostringstream message;
      message << "contact " << k / rows_per_contact << ": q[" << k << "] = " << q[k]
              << " must be finite";
      fail(message.str());
    }
  }
  // Friction coefficients only enter frictional problems.
  if (rows_per_contact == 1) return;
  if (mu.size() != contact_count()) {
    fail("mu has " + std::to_string(mu.size()) + " entries, expected one per contact (" +
         std::to_string(contact_count()) + ")");
  }
  for (Eigen::Index i = 0; i < mu.size(); ++i) {
    if (!std::isfinite(mu[i]) || mu[i] < 0.0) {
      std::ostringstream message;
      message << "contact " << i << ": friction coefficient mu = " << mu[i]
              << (std::isfinite(mu[i]) ? " must be >= 0" : " must be finite");
      fail(message.str());
    }
  }
}

}  // namespace moreau
