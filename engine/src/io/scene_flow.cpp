#include "scene_flow.hpp"

#include "moreau/core/error.hpp"
#include "scene_schema.hpp"

namespace moreau::scene_io {

const OptionTable<ChannelFlowOptions>& channel_flow_table() {
  using O = ChannelFlowOptions;
  static const OptionTable<O> table{
      number_option("inlet_x", &O::inlet_x, Bounds::none(), "m"),
      number_option("outlet_x", &O::outlet_x, Bounds::none(), "m"),
      number_option("y_min", &O::y_min, Bounds::none(), "m"),
      number_option("y_max", &O::y_max, Bounds::none(), "m"),
      number_option("z_min", &O::z_min, Bounds::none(), "m"),
      number_option("z_max", &O::z_max, Bounds::none(), "m"),
      number_option("radius", &O::radius, Bounds::above(0.0), "m"),
      custom_option<O>("material", "string", "the built-in material"),
      number_option("grid_spacing", &O::grid_spacing, Bounds::above(0.0), "m"),
      number_option("speed", &O::speed, Bounds::above(0.0), "m/s"),
      number_option("perturbation", &O::perturbation, Bounds::at_least(0.0), "m/s"),
      integer_option("seed", &O::seed, Bounds::at_least(0)),
      bool_option("fill", &O::fill),
      integer_option("cells_x", &O::cells_x, Bounds::at_least(1)),
      integer_option("cells_y", &O::cells_y, Bounds::at_least(1)),
  };
  return table;
}

void read_channel_flow(const Node& node, Scene& scene, const Context& context) {
  ChannelFlowOptions options;
  read_options(node, channel_flow_table(), options);
  check_options(node, channel_flow_table(), options);
  if (auto x = node.find("material")) options.material = read_material(*x, context);
  try {
    options.validate();
  } catch (const InputError& e) {
    node.fail(e.what());
  }
  scene.channel_flow = options;
}

}  // namespace moreau::scene_io
