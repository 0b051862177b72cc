#include "readings.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

namespace cannonball {

using namespace moreau;

namespace {

double sphere_weight() { return kDensity * 4.0 / 3.0 * M_PI * std::pow(kRadius, 3) * kGravity; }

// Force on each base sphere from the dynamic spheres, keyed by (base body, dynamic body) for a
// contact and by (base body, -1) for the sum over its contacts; the weight entry (if asked) is
// the floor carrying the base sphere too.
std::map<std::pair<int, int>, Vec3> floor_forces(const std::vector<ForceRecord>& forces,
                                                 const World& world,
                                                 const std::vector<int>& base_bodies,
                                                 const FloorReading& reading) {
  std::map<std::pair<int, int>, Vec3> out;
  for (int b : base_bodies)
    if (!reading.per_contact)
      out[{b, -1}] = reading.with_base_weight ? Vec3(0.0, sphere_weight(), 0.0) : Vec3::Zero();
  std::map<int, bool> is_base;
  for (int b : base_bodies) is_base[b] = true;
  for (const ForceRecord& f : forces) {
    // Reaction of the base on the pile (upwards for a load): minus the force on the base body.
    Vec3 reaction;
    int base_body, other;
    if (is_base.count(f.body_b) && world.bodies[f.body_a].is_dynamic()) {
      reaction = -f.force_on_b, base_body = f.body_b, other = f.body_a;
    } else if (is_base.count(f.body_a) && world.bodies[f.body_b].is_dynamic()) {
      reaction = f.force_on_b, base_body = f.body_a, other = f.body_b;
    } else {
      continue;
    }
    // emplace: a default-constructed Eigen vector is uninitialized.
    out.emplace(std::make_pair(base_body, reading.per_contact ? other : -1), Vec3::Zero())
        .first->second += reaction;
  }
  return out;
}

}  // namespace

double reading_error(const std::vector<ForceRecord>& method, const std::vector<ForceRecord>& dem,
                     const World& world, const std::vector<int>& base_bodies,
                     const FloorReading& reading) {
  auto x = floor_forces(method, world, base_bodies, reading);
  auto ref = floor_forces(dem, world, base_bodies, reading);
  for (const auto& [key, value] : ref) x.emplace(key, Vec3::Zero());  // union of contacts
  double diff = 0.0, norm = 0.0;
  for (const auto& [key, value] : x) {
    const auto it = ref.find(key);
    const Vec3 r = it == ref.end() ? Vec3::Zero() : it->second;
    const Vec3 d = value - r;
    diff += reading.full_vector ? d.squaredNorm() : d.y() * d.y();
    norm += reading.full_vector ? r.squaredNorm() : r.y() * r.y();
  }
  return std::sqrt(diff / norm);
}

InPlaneLoad in_plane_load(const std::vector<ForceRecord>& forces, const World& reference_world) {
  InPlaneLoad out;
  for (const ForceRecord& f : forces) {
    const double dy = reference_world.bodies[f.body_a].position.y() -
                      reference_world.bodies[f.body_b].position.y();
    if (std::abs(dy) > 0.01 * kRadius || f.force_on_b.norm() == 0.0) continue;
    ++out.contacts;
    out.load += f.force_on_b.norm() / sphere_weight();
  }
  return out;
}

ClassicSummary summarize(const std::string& label, const std::string& name,
                         const MethodResult& classic, const MethodResult& dem,
                         const World& reference_world, const std::vector<int>& base_bodies,
                         int base, CsvTable& readings_csv) {
  ClassicSummary s;
  s.name = name;
  s.floor_error = relative_error(classic.floor, dem.floor);
  s.max_force_excess = max_force(classic.forces) / max_force(dem.forces) - 1.0;
  s.asymmetry = floor_asymmetry(classic.floor, base);
  s.in_plane = in_plane_load(classic.forces, reference_world);
  for (const FloorReading& reading : kFloorReadings) {
    s.readings.push_back(
        reading_error(classic.forces, dem.forces, reference_world, base_bodies, reading));
    readings_csv.row(label, name, reading.name, s.readings.back());
  }
  return s;
}

void measure_summary(ExperimentResults& results, const std::string& label, const ClassicSummary& s,
                     const std::string& note) {
  results.measure(label + ": " + s.name + " floor error", s.floor_error, "", note);
  results.measure(label + ": " + s.name + " largest force / DEM's - 1", s.max_force_excess, "",
                  note);
  results.measure(label + ": " + s.name + " floor asymmetry", s.asymmetry, "", note);
  results.measure(label + ": " + s.name + " in-plane contacts carrying force", s.in_plane.contacts,
                  "", note);
  results.measure(label + ": " + s.name + " in-plane load", s.in_plane.load, "sphere weights",
                  note);
  // The readings of the floor reaction (README.md) for the uniform Hookean variant; all are in
  // readings.csv.
  if (label != variant_name(Variant::uniform_hookean)) return;
  for (std::size_t k = 1; k < s.readings.size(); ++k)
    results.measure(label + ": " + s.name + " floor error, " + kFloorReadings[k].name,
                    s.readings[k], "", note);
}

std::vector<ClassicSummary> warm_started_rows(int base, Variant variant, const MethodResult& dem,
                                              const World& reference_world,
                                              const std::vector<int>& base_bodies, long steps,
                                              double tolerance, CsvTable& readings_csv,
                                              CsvTable& contact_csv) {
  std::vector<ClassicSummary> out;
  ClassicSetting warm;
  warm.warm_start = true;
  for (const char* solver : {"apgd", "pgs"}) {
    CdRun run =
        run_cd(base, variant, solver, steps, tolerance, tolerance, base_bodies, false, warm);
    run.classic.name += " warm-started";
    out.push_back(summarize(variant_name(variant), run.classic.name, run.classic, dem,
                            reference_world, base_bodies, base, readings_csv));
    write_forces(contact_csv, variant_name(variant), run.classic, reference_world);
  }
  return out;
}

std::vector<ClassicSummary> pgs_random_orders(int base, Variant variant, int orders,
                                              const MethodResult& dem, const World& reference_world,
                                              const std::vector<int>& base_bodies, long steps,
                                              double tolerance, CsvTable& readings_csv) {
  std::vector<ClassicSummary> out;
  for (int k = 1; k <= orders; ++k) {
    ClassicSetting setting;
    setting.order = ContactOrder::random;
    setting.seed = static_cast<unsigned>(k);
    const CdRun run =
        run_cd(base, variant, "pgs", steps, tolerance, tolerance, base_bodies, false, setting);
    out.push_back(summarize(variant_name(variant), "PGS random order " + std::to_string(k),
                            run.classic, dem, reference_world, base_bodies, base, readings_csv));
  }
  return out;
}

double median_of(const std::vector<ClassicSummary>& rows, double ClassicSummary::*field) {
  std::vector<double> v;
  for (const ClassicSummary& s : rows) v.push_back(s.*field);
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void base_sweep(ExperimentResults& results, const std::vector<int>& bases, long steps,
                double tolerance, CsvTable& csv) {
  for (const int b : bases) {
    std::vector<int> base_bodies;
    const World reference_world = pyramid_world(b, Variant::uniform_hookean, base_bodies);
    const CdRun apgd =
        run_cd(b, Variant::uniform_hookean, "apgd", steps, tolerance, tolerance, base_bodies);
    const MethodResult& reference = apgd.compatible;
    std::vector<std::pair<std::string, MethodResult>> rows{{"APGD", apgd.classic}};
    ClassicSetting setting;
    rows.emplace_back("PGS", run_cd(b, Variant::uniform_hookean, "pgs", steps, tolerance, tolerance,
                                    base_bodies, false, setting)
                                 .classic);
    setting.order = ContactOrder::random;
    for (unsigned seed = 1; seed <= 3; ++seed) {
      setting.seed = seed;
      rows.emplace_back("PGS random order " + std::to_string(seed),
                        run_cd(b, Variant::uniform_hookean, "pgs", steps, tolerance, tolerance,
                               base_bodies, false, setting)
                            .classic);
    }
    setting = ClassicSetting{};
    setting.warm_start = true;
    for (const char* solver : {"apgd", "pgs"})
      rows.emplace_back(
          std::string(solver == std::string("apgd") ? "APGD" : "PGS") + " warm-started",
          run_cd(b, Variant::uniform_hookean, solver, steps, tolerance, tolerance, base_bodies,
                 false, setting)
              .classic);
    const std::string at = "base " + std::to_string(b) + ", uniform Hookean, ";
    const std::string note = "reference: compatible CD after cold APGD (not the DEM)";
    for (const auto& [name, m] : rows) {
      const double excess = max_force(m.forces) / max_force(reference.forces) - 1.0;
      const InPlaneLoad in_plane = in_plane_load(m.forces, reference_world);
      for (const FloorReading& reading : kFloorReadings)
        csv.row(b, name, reading.name,
                reading_error(m.forces, reference.forces, reference_world, base_bodies, reading),
                excess, in_plane.load);
      results.measure(at + name + ": floor error", relative_error(m.floor, reference.floor), "",
                      note);
      results.measure(at + name + ": largest force / reference's - 1", excess, "", note);
      results.measure(at + name + ": in-plane load", in_plane.load, "sphere weights", note);
    }
  }
}

}  // namespace cannonball
