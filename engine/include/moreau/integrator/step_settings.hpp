#pragma once
// What every time-stepping scheme of the suite reads, whatever its paper: the time step, whether
// contacts carry friction, and which pairs are contacts. A scheme's options struct derives from
// StepSettings and adds its own keys; a scene sets these once for every scheme (the top-level
// time_step, integrator.frictional and the collision section).
#include "moreau/collision/collision_detector.hpp"
#include "moreau/core/option_table.hpp"
#include "moreau/solver/cone_problem.hpp"

namespace moreau {

struct StepSettings {
  double time_step = 1e-3;  // s
  // The cone problem (as many rows per contact as the dimension) or frictionless contact
  // (one row, the normal impulse).
  bool frictional = true;
  // Pairs whose gap is below collision.margin enter the step's contact problem.
  CollisionOptions collision;

  // The keys of the integrator section (frictional); time_step is a top-level key and
  // collision a section of its own.
  static const OptionTable<StepSettings>& fields();
  // Throws InputError naming the field (time_step finite and > 0, the collision options).
  void validate() const;
};

// The integrator key friction_model of a scheme that offers the choice (its options struct's
// member friction_model): Coulomb's law through the De Saxce velocity, or the convex (cone
// complementarity) relaxation of Anitescu and Tasora.
template <class Options>
OptionField<Options> friction_model_option() {
  return choice_option("friction_model", &Options::friction_model,
                       {{"coulomb", FrictionModel::coulomb},
                        {"convex_relaxation", FrictionModel::convex_relaxation}})
      .described(
          "Coulomb's law through the De Saxce velocity, or its convex (cone complementarity) "
          "relaxation; the maximum-dissipation solvers md_* ignore it");
}

}  // namespace moreau
