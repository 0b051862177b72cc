#include "claims.hpp"

#include <algorithm>
#include <limits>

namespace sedimentation {

using namespace moreau;

namespace {

PenetrationStatistic penetration_statistic(const Outcome& o) {
  PenetrationStatistic out;
  for (const StepRow& r : o.rows) {
    out.largest = std::max(out.largest, r.max_penetration);
    if (r.max_penetration > 1e-15) ++out.steps_above;
  }
  return out;
}

}  // namespace

void check_orderings(ExperimentResults& results, const std::string& part,
                     const std::vector<Outcome>& outcomes, bool strictly_fewer) {
  const int standard = std::min(iterations_of(outcomes, LocalMethod::sbp),
                                iterations_of(outcomes, LocalMethod::sal));
  const int newton = std::max(iterations_of(outcomes, LocalMethod::ebp),
                              iterations_of(outcomes, LocalMethod::eal));
  const bool fewer = strictly_fewer ? newton < standard : newton <= standard;
  results.check(part + (strictly_fewer ? "_newton_methods_fewer_iterations"
                                       : "_newton_methods_no_more_iterations"),
                fewer,
                "max(EBP, EAL) = " + std::to_string(newton) +
                    " against min(SBP, SAL) = " + std::to_string(standard));
  double others = std::numeric_limits<double>::infinity();
  for (const LocalMethod m : {LocalMethod::sbp, LocalMethod::sal, LocalMethod::ebp})
    others = std::min(others, penetration_of(outcomes, m));
  // A zero EAL penetration (it is ~1e-19 m/s in the paper) counts as the smallest positive double.
  const double eal =
      std::max(penetration_of(outcomes, LocalMethod::eal), std::numeric_limits<double>::min());
  results.check(part + "_eal_smallest_penetration", others / eal,
                "min(SBP, SAL, EBP) / EAL of the largest penetration term -min(0, u~_n) at the "
                "measured step");
}

void penetration_over_all_steps(ExperimentResults& results, const std::string& part,
                                const World& initial, const Settings& settings,
                                const std::vector<Outcome>& line_search_runs, CsvTable& steps) {
  Settings plain = settings;
  plain.newton_line_search = false;
  PenetrationStatistic ebp, eal;
  for (const LocalMethod m : {LocalMethod::ebp, LocalMethod::eal}) {
    const Outcome o = run(to_string(m) + " plain Newton", initial, m, 0.0, plain);
    write_steps(steps, part, o);
    const PenetrationStatistic stat = penetration_statistic(o);
    (m == LocalMethod::ebp ? ebp : eal) = stat;
    const std::string label = "(" + part + ") " + o.label;
    results.measure(label + ": largest penetration term over all steps", stat.largest, "m/s");
    results.measure(label + ": steps with penetration term > 1e-15 m/s",
                    static_cast<double>(stat.steps_above), "");
    results.measure(label + ": steps stopped before eps_glob",
                    static_cast<double>(o.unconverged_steps), "");
  }
  for (const Outcome& o : line_search_runs) {
    if (o.method != LocalMethod::ebp && o.method != LocalMethod::eal) continue;
    const PenetrationStatistic stat = penetration_statistic(o);
    const std::string label = "(" + part + ") " + o.label + " with line search";
    results.measure(label + ": largest penetration term over all steps", stat.largest, "m/s",
                    "the Armijo line search (not in Dumont) leaves v_n = (1 - t) v_n0 on "
                    "damped steps");
    results.measure(label + ": steps with penetration term > 1e-15 m/s",
                    static_cast<double>(stat.steps_above), "");
  }
  results.check(part + "_eal_smallest_penetration_over_all_steps",
                ebp.largest / std::max(eal.largest, std::numeric_limits<double>::min()),
                "EBP / EAL of the largest penetration term over all steps, plain local Newton "
                "(EBP above 1e-15 m/s in " +
                    std::to_string(ebp.steps_above) + " steps, EAL in " +
                    std::to_string(eal.steps_above) + ")");
}

void ebp_converged_local_newton(ExperimentResults& results, const World& initial,
                                const Settings& settings) {
  Settings tight = settings;
  tight.newton_tolerance = 1e-10;
  const Outcome o = run("ebp alpha 5 eps_Newt 1e-10", initial, LocalMethod::ebp, 5.0, tight);
  const std::string note = "diagnostic, not the published setting (eps_Newt = 1e-10)";
  const std::string m = "(c) EBP alpha = 5, eps_Newt = 1e-10";
  results.measure(m + ": NLGS iterations at the measured step", o.last.common.iterations, "", note);
  results.measure(m + ": converged at the measured step", o.last.common.converged ? 1.0 : 0.0, "",
                  note);
  results.measure(m + ": local Newton iterations at the measured step",
                  static_cast<double>(o.last.newton_iterations), "", note);
  results.measure(m + ": steps stopped before eps_glob", static_cast<double>(o.unconverged_steps),
                  "", note);
  results.measure(m + ": CPU time of the run", o.cpu_seconds, "s", note);
}

}  // namespace sedimentation
