#pragma once
// The records of the biaxial runs: each sample's preparation and each test's measures in
// results.json, and the curves of Fig. 4.4-4.7 with the driver's diagnostics in curves.csv.
#include <string>
#include <vector>

#include "moreau/harness/results.hpp"
#include "response.hpp"
#include "sample.hpp"

namespace biaxial {

// k_N as the pieces and the measures name it: "inf", "1e+08", ...
std::string stiffness_label(double k);

void record_sample(moreau::ExperimentResults& results, const Sample& sample);
void record_run(moreau::ExperimentResults& results, const Outcome& o);

// curves.csv in `directory`, one row per load step of every test (not registered: a run of
// --only writes it for the merge).
void write_curves(const std::string& directory, const std::vector<Outcome>& outcomes);

}  // namespace biaxial
