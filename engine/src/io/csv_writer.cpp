#include "moreau/io/csv_writer.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <ostream>
#include <system_error>

#include "moreau/core/error.hpp"
#include "moreau/integrator/semi_implicit_euler.hpp"

namespace moreau {
namespace {

std::ofstream open_for_writing(const std::filesystem::path& path) {
  std::ofstream out(path, std::ios::out | std::ios::trunc);
  if (!out) throw InputError(path.string() + ": cannot create the output file");
  return out;
}

void check_written(std::ofstream& out, const std::filesystem::path& path) {
  out.flush();
  if (!out) throw InputError(path.string() + ": writing the output file failed (disk full?)");
}

}  // namespace

void write_number(std::ostream& out, double value) {
  std::array<char, 32> buffer{};
  const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  out.write(buffer.data(), result.ptr - buffer.data());
}

void write_body_csv_header(std::ostream& out, Dimension dimension) {
  out << "step,time,body,x,y,z,qw,qx,qy,qz,vx,vy,vz,wx,wy,wz";
  if (dimension == Dimension::two) out << ",angle";
  out << '\n';
}

void write_body_csv_rows(std::ostream& out, const World& world, long step) {
  for (std::size_t i = 0; i < world.bodies.size(); ++i) {
    const RigidBody& body = world.bodies[i];
    out << step << ',';
    write_number(out, world.time);
    out << ',' << i;
    const Quat& q = body.orientation;
    const std::array<double, 13> values = {body.position.x(),
                                           body.position.y(),
                                           body.position.z(),
                                           q.w(),
                                           q.x(),
                                           q.y(),
                                           q.z(),
                                           body.linear_velocity.x(),
                                           body.linear_velocity.y(),
                                           body.linear_velocity.z(),
                                           body.angular_velocity.x(),
                                           body.angular_velocity.y(),
                                           body.angular_velocity.z()};
    for (double value : values) {
      out << ',';
      write_number(out, value);
    }
    if (world.dimension == Dimension::two) {
      // q and -q are the same rotation; with w >= 0 the angle 2 atan2(z, w) is in [-pi, pi].
      const double sign = q.w() < 0.0 ? -1.0 : 1.0;
      out << ',';
      write_number(out, 2.0 * std::atan2(sign * q.z(), sign * q.w()));
    }
    out << '\n';
  }
}

void write_contact_csv_header(std::ostream& out, bool compatible) {
  out << "step,time,contact,body_a,body_b,px,py,pz,nx,ny,nz,gap,f_n,f_t1,f_t2";
  if (compatible) out << ",f_n_compatible";
  out << '\n';
}

void write_contact_csv_rows(std::ostream& out, const StepReport& report, double time_step,
                            bool compatible) {
  const int rows = report.rows_per_contact;
  // A step that did not run the compatible solve (it was switched off for it) has no value.
  const CompatibleSolve* solve = compatible ? compatible_solve(report) : nullptr;
  for (std::size_t i = 0; i < report.contacts.size(); ++i) {
    const Contact& contact = report.contacts[i];
    out << report.step << ',';
    write_number(out, report.time);
    out << ',' << i << ',' << contact.body_a << ',' << contact.body_b;
    const std::array<double, 7> geometry = {
        contact.point.x(),  contact.point.y(),  contact.point.z(), contact.normal.x(),
        contact.normal.y(), contact.normal.z(), contact.gap};
    for (double value : geometry) {
      out << ',';
      write_number(out, value);
    }
    for (int k = 0; k < 3; ++k) {
      out << ',';
      const long row = static_cast<long>(i) * rows + k;
      write_number(out, k < rows ? report.impulses(row) / time_step : 0.0);
    }
    if (compatible) {
      out << ',';
      write_number(out, solve ? solve->impulses(static_cast<long>(i)) / time_step
                              : std::numeric_limits<double>::quiet_NaN());
    }
    out << '\n';
  }
}

CsvWriter::CsvWriter(const std::filesystem::path& directory, Dimension dimension, bool compatible)
    : bodies_path_(directory / "bodies.csv"),
      contacts_path_(directory / "contacts.csv"),
      compatible_(compatible) {
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  if (error)
    throw InputError(directory.string() +
                     ": cannot create the output directory: " + error.message());
  bodies_ = open_for_writing(bodies_path_);
  contacts_ = open_for_writing(contacts_path_);
  write_body_csv_header(bodies_, dimension);
  write_contact_csv_header(contacts_, compatible_);
}

void CsvWriter::write_bodies(const World& world, long step) {
  write_body_csv_rows(bodies_, world, step);
}

void CsvWriter::write_contacts(const StepReport& report, double time_step) {
  write_contact_csv_rows(contacts_, report, time_step, compatible_);
}

void CsvWriter::flush() {
  check_written(bodies_, bodies_path_);
  check_written(contacts_, contacts_path_);
}

}  // namespace moreau
