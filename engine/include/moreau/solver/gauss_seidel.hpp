#pragma once
// The one Gauss-Seidel driver over contacts, with the local law as its pluggable part, public
// so that a new local law is one file (a law type and a solver calling gauss_seidel()): PGS projects onto the cone (Olsen & Kamrin eq. 22), NLGS runs one of Dumont's
// four local solvers (Dumont eq. 23-24), md_gs and md_blend the analytic maximum-dissipation
// solver (Preclik et al. Sec. 3.2). The driver owns what they share: the visiting order, the
// sweep, the incremental update of W r after each contact (so that later contacts see the new
// impulse) and the iteration monitor's checks between sweeps.
#include <type_traits>
#include <vector>

#include "moreau/solver/iteration_monitor.hpp"
#include "moreau/solver/solver.hpp"

namespace moreau {

// What a local law gives for one contact: its new impulse and the increment that W r takes.
// Both are kept as the law computes them, so that the driver adds no rounding to either
// (r_i + (r_new - r_i) is not r_new in floating point).
struct LocalUpdate {
  Vec3 impulse;
  Vec3 increment;
};

// The impulses r being swept and W r kept alongside them through the DelassusOperator's sweep
// interface (begin_sweep / local_velocity / update_sweep).
class ContactSweep {
 public:
  ContactSweep(const ConeProblem& problem, VecX& r)
      : delassus_(*problem.delassus), q_(problem.q), r_(r), rows_(problem.rows()) {
    restart(r);
  }
  // W r tracks `from` (equal to the swept r, or the common start of a blend of sweeps).
  void restart(const VecX& from) { delassus_.begin_sweep(from, work_); }

  int rows() const { return rows_; }
  // r_i and (W r + q)_i, zero in the rows a 1- or 2-row problem does not use.
  Vec3 impulse(int i) const {
    Vec3 r_i = Vec3::Zero();
    r_i.head(rows_) = r_.segment(i * rows_, rows_);
    return r_i;
  }
  Vec3 velocity(int i) const {
    Vec3 q_i = Vec3::Zero();
    q_i.head(rows_) = q_.segment(i * rows_, rows_);
    return delassus_.local_velocity(i, work_) + q_i;
  }
  // u = W r + q over all contacts.
  void velocities(VecX& u) const {
    const int contacts = static_cast<int>(r_.size()) / rows_;
    u.resize(r_.size());
    for (int i = 0; i < contacts; ++i) {
      u.segment(i * rows_, rows_) = delassus_.local_velocity(i, work_).head(rows_);
    }
    u += q_;
  }
  void commit(int i, const LocalUpdate& update) {
    delassus_.update_sweep(i, update.increment, work_);
    r_.segment(i * rows_, rows_) = update.impulse.head(rows_);
  }

 private:
  const DelassusOperator& delassus_;
  const VecX& q_;
  VecX& r_;
  int rows_;
  VecX work_;
};

// A local law: `bool active(int i) const` (false: contact i moves nothing, it is skipped and
// keeps its impulse) and `LocalUpdate solve(int i, const ContactSweep&)`; optionally
// `void begin_sweep()`, called before each sweep.
//
// One sweep over the contacts of `order`, in that order.
template <typename Law, typename Order>
void sweep_contacts(ContactSweep& sweep, const Order& order, Law& law) {
  if constexpr (requires { law.begin_sweep(); }) law.begin_sweep();
  for (const int i : order) {
    if (!law.active(i)) continue;
    sweep.commit(i, law.solve(i, sweep));
  }
}

// Sweeps until `measure(iteration)` (run on the initial guess and after each iteration the
// monitor says is due; true: stop) stops or max_iterations sweeps are done. Returns the sweeps
// done.
template <typename Law, typename Measure>
int gauss_seidel(ContactSweep& sweep, const std::vector<int>& order,
                 const IterativeSolverOptions& options, const IterationMonitor& monitor, Law& law,
                 Measure&& measure) {
  int iteration = 0;
  bool stop = measure(0);
  while (!stop && iteration < options.max_iterations) {
    ++iteration;
    sweep_contacts(sweep, order, law);
    if (monitor.due(iteration)) stop = measure(iteration);
  }
  return iteration;
}

}  // namespace moreau
