#pragma once
// CSV output of body states and contact forces: one row per body (per contact) and output
// step, a header line first. Numbers are written with the shortest text that reads back to
// the same double, so a CSV file round-trips exactly.
#include <filesystem>
#include <fstream>
#include <iosfwd>

#include "moreau/integrator/stepper.hpp"
#include "moreau/model/world.hpp"

namespace moreau {

// Writes the shortest decimal text that reads back to exactly `value` ("0.1", "1e-08", "inf").
void write_number(std::ostream& out, double value);

// bodies.csv: step, time (s), body (index), x, y, z (centre of mass, m), qw, qx, qy, qz
// (orientation), vx, vy, vz (m/s), wx, wy, wz (rad/s, world frame) and, in a 2D world, angle
// (rotation about z, rad, in [-pi, pi]).
void write_body_csv_header(std::ostream& out, Dimension dimension);
void write_body_csv_rows(std::ostream& out, const World& world, long step);

// contacts.csv: step, time (s, end of the step), contact (index within the step), body_a,
// body_b, px, py, pz (contact point, m), nx, ny, nz (unit normal from a to b), gap (m), f_n,
// f_t1, f_t2: the force body a exerts on body b in the frame (normal, tangent1, tangent2), N,
// i.e. the step's impulses divided by the time step (Olsen & Kamrin eq. 13). Rows the problem does
// not have (frictionless, or t2 in 2D) are written as 0. With `compatible` a last column
// f_n_compatible holds the compatible CD force, the compatible impulse (compatible_solve()) / time
// step.
void write_contact_csv_header(std::ostream& out, bool compatible = false);
void write_contact_csv_rows(std::ostream& out, const StepReport& report, double time_step,
                            bool compatible = false);

// bodies.csv and contacts.csv in one directory, for the steps a run chooses to write.
class CsvWriter {
 public:
  // Creates `directory` if needed and starts both files (truncating old ones) with their
  // headers. Throws InputError naming the path if a file cannot be created. `compatible` adds
  // the f_n_compatible column to contacts.csv.
  CsvWriter(const std::filesystem::path& directory, Dimension dimension, bool compatible = false);

  void write_bodies(const World& world, long step);
  void write_contacts(const StepReport& report, double time_step);
  // Pushes buffered rows to disk; throws InputError naming the file if a write failed.
  void flush();

  const std::filesystem::path& bodies_path() const { return bodies_path_; }
  const std::filesystem::path& contacts_path() const { return contacts_path_; }

 private:
  std::filesystem::path bodies_path_;
  std::filesystem::path contacts_path_;
  std::ofstream bodies_;
  std::ofstream contacts_;
  bool compatible_ = false;
};

}  // namespace moreau
