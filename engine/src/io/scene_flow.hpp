#pragma once
// The scene's channel_flow section (docs/scene-format.md#channel_flow): the inflow plane,
// layers and outlet of the granular channel flow of Preclik et al. Sec. 4.3
// (moreau/simulation/channel_flow.hpp). Private to the engine.
#include "moreau/io/scene.hpp"
#include "scene_reader.hpp"

namespace moreau::scene_io {

const OptionTable<ChannelFlowOptions>& channel_flow_table();

// Reads the section into scene.channel_flow (the material by name, bounds checked, then the
// options' own validation), naming the key of a bad value.
void read_channel_flow(const Node& node, Scene& scene, const Context& context);

}  // namespace moreau::scene_io
