#pragma once
// The fidelity analysis of Table 1 (README.md): the readings of the floor reaction the paper
// leaves open, classic CD's spread over PGS visiting orders and warm starts, and classic CD at
// bases between the quick and the published scale.
#include <string>
#include <vector>

#include "forces.hpp"
#include "methods.hpp"
#include "moreau/harness/results.hpp"

namespace cannonball {

using moreau::ExperimentResults;

// ---- Fidelity analysis of Table 1: readings, warm start, PGS orders ----

// The readings of "the reaction force distribution supporting the base of the pyramid" (Olsen &
// Kamrin Sec. 8.3) that the paper leaves open: the vertical load or the full force vector, with or
// without the base spheres' own weight, per base sphere or per contact between the base and the
// first layer. The suite's checked reading is the first one.
struct FloorReading {
  const char* name;
  bool full_vector;
  bool with_base_weight;
  bool per_contact;
};

inline constexpr FloorReading kFloorReadings[] = {
    {"vertical load per base sphere, without the base weight (checked)", false, false, false},
    {"vertical load per base sphere, with the base weight", false, true, false},
    {"force vector per base sphere, without the base weight", true, false, false},
    {"force vector per base sphere, with the base weight", true, true, false},
    {"vertical load per base-layer contact", false, false, true},
    {"force vector per base-layer contact", true, false, true},
};

double reading_error(const std::vector<ForceRecord>& method, const std::vector<ForceRecord>& dem,
                     const World& world, const std::vector<int>& base_bodies,
                     const FloorReading& reading);

// Load locked into contacts between spheres of the same layer (the in-plane contacts), in
// sphere weights: the self-stress warm-started classic CD keeps from the impacts (README.md).
struct InPlaneLoad {
  int contacts = 0;   // in-plane contacts carrying a nonzero force
  double load = 0.0;  // sum of their forces / one sphere's weight
};

InPlaneLoad in_plane_load(const std::vector<ForceRecord>& forces, const World& reference_world);

// One classic-CD result as the analysis reports it (floor error in every reading, largest force,
// symmetry, in-plane load), written to readings.csv and results.json.
struct ClassicSummary {
  std::string name;
  double floor_error = 0.0;  // the checked reading
  double max_force_excess = 0.0;
  double asymmetry = 0.0;
  InPlaneLoad in_plane;
  std::vector<double> readings;  // floor error in each of kFloorReadings
};

ClassicSummary summarize(const std::string& label, const std::string& name,
                         const MethodResult& classic, const MethodResult& dem,
                         const World& reference_world, const std::vector<int>& base_bodies,
                         int base, CsvTable& readings_csv);

void measure_summary(ExperimentResults& results, const std::string& label, const ClassicSummary& s,
                     const std::string& note);

// The second result: classic CD warm-started through the drop (each step's solve starts from the
// previous step's impulses). The impacts lock load into the in-plane contacts, which inverts the
// floor map; the forces go to contacts.csv for the in-plane figure.
std::vector<ClassicSummary> warm_started_rows(int base, Variant variant, const MethodResult& dem,
                                              const World& reference_world,
                                              const std::vector<int>& base_bodies, long steps,
                                              double tolerance, CsvTable& readings_csv,
                                              CsvTable& contact_csv);

// PGS cold-started in several fixed random visiting orders: the spread that the paper's
// "sensitivity on contact ordering" (Sec. 8.2.1) implies, since it does not state its order.
std::vector<ClassicSummary> pgs_random_orders(int base, Variant variant, int orders,
                                              const MethodResult& dem, const World& reference_world,
                                              const std::vector<int>& base_bodies, long steps,
                                              double tolerance, CsvTable& readings_csv);

// Median of one field over the random orders.
double median_of(const std::vector<ClassicSummary>& rows, double ClassicSummary::*field);

// Classic CD at larger bases than the quick scale, uniform Hookean, against compatible CD after
// APGD on the same run as the reference (it matches the DEM to ~1e-6 at every scale measured
// here, see the checks), which avoids the DEM runs that dominate the cost. Written to
// base_sweep.csv: floor error in every reading and the largest force against the reference's.
void base_sweep(ExperimentResults& results, const std::vector<int>& bases, long steps,
                double tolerance, CsvTable& csv);

}  // namespace cannonball
