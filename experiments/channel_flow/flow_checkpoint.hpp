#pragma once
// The checkpoint of one channel-flow run (README.md "Resuming from checkpoints"): the world (the
// particles present, the plane where it is) in the engine's checkpoint, and beside it, as the
// piece's fields, what the run has measured so far and the inflow's counters and generator, so
// that a run continued in another process computes what the uninterrupted run computes.
#include <nlohmann/json.hpp>

#include "flow_runs.hpp"
#include "moreau/simulation/channel_flow.hpp"

namespace channel_flow {

inline constexpr const char* kCheckpointKind = "channel flow run";

// What a checkpoint must have been written with: the scene, the seed, the geometry and the
// sampling and solver settings. Not the duration: a run continues to a longer one.
nlohmann::json run_identity(const RunSpec& spec);

nlohmann::json run_fields(const Outcome& outcome, const moreau::ChannelInflowState& inflow,
                          const moreau::CellFields& steady_mean);
// Restores `outcome`'s measures so far and `steady_mean`'s sums, and returns the inflow's state.
// Throws nlohmann::json::exception for a missing or mistyped field (resumable::parse_fields
// names the file) and InputError for a cell outside the grid.
moreau::ChannelInflowState read_run_fields(const nlohmann::json& fields, Outcome& outcome,
                                           moreau::CellFields& steady_mean);

}  // namespace channel_flow
