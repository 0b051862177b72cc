#include "moreau/integrator/step_settings.hpp"

#include <cmath>

#include "moreau/core/error.hpp"

namespace moreau {

const OptionTable<StepSettings>& StepSettings::fields() {
  static const OptionTable<StepSettings> table{
      bool_option("frictional", &StepSettings::frictional)
          .described("frictional cone problem (as many rows per contact as the dimension) or "
                     "frictionless (one row)"),
  };
  return table;
}

void StepSettings::validate() const {
  if (!(time_step > 0.0) || !std::isfinite(time_step))
    throw OptionError("time_step", readable_number(time_step) + " must be finite and > 0 s");
  collision.validate();
}

}  // namespace moreau
