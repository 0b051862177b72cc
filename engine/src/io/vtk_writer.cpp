#include "moreau/io/vtk_writer.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <ostream>
#include <string>
#include <system_error>
#include <vector>

#include "moreau/core/error.hpp"
#include "moreau/io/csv_writer.hpp"

namespace moreau {
namespace {

bool is_bounded(const RigidBody& body) {
  return std::isfinite(bounding_radius(body.shape.geometry));
}

Vec3 shape_centre(const RigidBody& body) {
  return body.position + body.orientation * body.shape.offset;
}

int shape_code(const ShapeGeometry& geometry) {
  if (std::holds_alternative<Box>(geometry)) return 1;
  if (std::holds_alternative<Capsule>(geometry)) return 2;
  if (std::holds_alternative<Polygon>(geometry)) return 3;
  return 0;
}

Vec3 half_extents(const ShapeGeometry& geometry) {
  if (const auto* box = std::get_if<Box>(&geometry)) return box->half_extents;
  if (const auto* capsule = std::get_if<Capsule>(&geometry))
    return Vec3(capsule->half_length + capsule->radius, capsule->radius, capsule->radius);
  if (const auto* polygon = std::get_if<Polygon>(&geometry)) return Vec3::Constant(polygon->radius);
  return Vec3::Constant(std::get<Sphere>(geometry).radius);
}

int motion_code(Motion motion) {
  switch (motion) {
    case Motion::dynamic:
      return 0;
    case Motion::fixed:
      return 1;
    case Motion::prescribed:
      return 2;
  }
  return 0;
}

// Writes one <DataArray> whose values come from `value(k, component)` for k < count.
template <class F>
void data_array(std::ostream& out, const char* type, const char* name, int components,
                std::size_t count, F&& value) {
  out << "        <DataArray type=\"" << type << "\" Name=\"" << name << "\" NumberOfComponents=\""
      << components << "\" format=\"ascii\">\n";
  for (std::size_t k = 0; k < count; ++k) {
    out << "          ";
    for (int c = 0; c < components; ++c) {
      if (c > 0) out << ' ';
      write_number(out, value(k, c));
    }
    out << '\n';
  }
  out << "        </DataArray>\n";
}

void begin_piece(std::ostream& out, std::size_t points, std::size_t verts, std::size_t lines,
                 std::size_t polys = 0) {
  out << "<?xml version=\"1.0\"?>\n"
         "<VTKFile type=\"PolyData\" version=\"1.0\" byte_order=\"LittleEndian\" "
         "header_type=\"UInt64\">\n"
         "  <PolyData>\n"
      << "    <Piece NumberOfPoints=\"" << points << "\" NumberOfVerts=\"" << verts
      << "\" NumberOfLines=\"" << lines << "\" NumberOfStrips=\"0\" NumberOfPolys=\"" << polys
      << "\">\n";
}

void end_piece(std::ostream& out) {
  out << "    </Piece>\n"
         "  </PolyData>\n"
         "</VTKFile>\n";
}

void write_points(std::ostream& out, const std::vector<Vec3>& points) {
  out << "      <Points>\n";
  data_array(out, "Float64", "points", 3, points.size(),
             [&](std::size_t k, int c) { return points[k](c); });
  out << "      </Points>\n";
}

// Verts or Lines: cells of `size` consecutive points each.
void write_cells(std::ostream& out, const char* element, std::size_t cells, int size) {
  out << "      <" << element << ">\n";
  data_array(out, "Int64", "connectivity", 1, cells * size,
             [](std::size_t k, int) { return static_cast<double>(k); });
  data_array(out, "Int64", "offsets", 1, cells,
             [&](std::size_t k, int) { return static_cast<double>((k + 1) * size); });
  out << "      </" << element << ">\n";
}

bool has_polygons(const World& world) {
  return std::any_of(world.bodies.begin(), world.bodies.end(), [](const RigidBody& b) {
    return std::holds_alternative<Polygon>(b.shape.geometry);
  });
}

const std::filesystem::path& make_output_directory(const std::filesystem::path& directory) {
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  if (error)
    throw InputError(directory.string() +
                     ": cannot create the output directory: " + error.message());
  return directory;
}

template <class F>
void write_file(const std::filesystem::path& path, F&& write) {
  std::ofstream out(path, std::ios::out | std::ios::trunc);
  if (!out) throw InputError(path.string() + ": cannot create the output file");
  write(out);
  out.flush();
  if (!out) throw InputError(path.string() + ": writing the output file failed (disk full?)");
}

constexpr const char* kCollectionEnd = "  </Collection>\n</VTKFile>\n";

std::string numbered(const char* stem, long step) {
  char name[64];
  std::snprintf(name, sizeof name, "%s_%08ld.vtp", stem, step);
  return name;
}

}  // namespace

void write_particles_vtp(std::ostream& out, const World& world) {
  std::vector<const RigidBody*> bodies;
  std::vector<long> ids;
  std::vector<Vec3> points;
  for (std::size_t i = 0; i < world.bodies.size(); ++i) {
    if (!is_bounded(world.bodies[i])) continue;
    bodies.push_back(&world.bodies[i]);
    ids.push_back(static_cast<long>(i));
    points.push_back(shape_centre(world.bodies[i]));
  }
  const std::size_t n = bodies.size();
  begin_piece(out, n, n, 0);
  out << "      <PointData Scalars=\"radius\" Vectors=\"velocity\">\n";
  data_array(out, "Int64", "body", 1, n, [&](std::size_t k, int) { return double(ids[k]); });
  data_array(out, "Float64", "radius", 1, n,
             [&](std::size_t k, int) { return bounding_radius(bodies[k]->shape.geometry); });
  data_array(out, "Float64", "velocity", 3, n,
             [&](std::size_t k, int c) { return bodies[k]->linear_velocity(c); });
  data_array(out, "Float64", "angular_velocity", 3, n,
             [&](std::size_t k, int c) { return bodies[k]->angular_velocity(c); });
  data_array(out, "Float64", "orientation", 4, n, [&](std::size_t k, int c) {
    const Quat& q = bodies[k]->orientation;
    return c == 0 ? q.w() : q.vec()(c - 1);
  });
  data_array(out, "Int32", "shape", 1, n,
             [&](std::size_t k, int) { return double(shape_code(bodies[k]->shape.geometry)); });
  data_array(out, "Float64", "half_extents", 3, n,
             [&](std::size_t k, int c) { return half_extents(bodies[k]->shape.geometry)(c); });
  data_array(out, "Int32", "motion", 1, n,
             [&](std::size_t k, int) { return double(motion_code(bodies[k]->motion)); });
  out << "      </PointData>\n";
  write_points(out, points);
  write_cells(out, "Verts", n, 1);
  end_piece(out);
}

void write_polygons_vtp(std::ostream& out, const World& world) {
  std::vector<const RigidBody*> bodies;
  std::vector<long> ids;
  std::vector<Vec3> points;
  std::vector<std::size_t> ends;  // offsets: one past the last point of each cell
  for (std::size_t i = 0; i < world.bodies.size(); ++i) {
    const RigidBody& b = world.bodies[i];
    const auto* polygon = std::get_if<Polygon>(&b.shape.geometry);
    if (!polygon) continue;
    bodies.push_back(&b);
    ids.push_back(static_cast<long>(i));
    for (const Vec2& v : polygon->outline)
      points.push_back(b.position + b.orientation * (b.shape.offset + Vec3(v.x(), v.y(), 0.0)));
    ends.push_back(points.size());
  }
  const std::size_t n = bodies.size();
  begin_piece(out, points.size(), 0, 0, n);
  out << "      <CellData Scalars=\"body\" Vectors=\"velocity\">\n";
  data_array(out, "Int64", "body", 1, n, [&](std::size_t k, int) { return double(ids[k]); });
  data_array(out, "Float64", "velocity", 3, n,
             [&](std::size_t k, int c) { return bodies[k]->linear_velocity(c); });
  data_array(out, "Float64", "angular_velocity", 3, n,
             [&](std::size_t k, int c) { return bodies[k]->angular_velocity(c); });
  data_array(out, "Int32", "pieces", 1, n, [&](std::size_t k, int) {
    return double(std::get<Polygon>(bodies[k]->shape.geometry).pieces.size());
  });
  data_array(out, "Int32", "motion", 1, n,
             [&](std::size_t k, int) { return double(motion_code(bodies[k]->motion)); });
  out << "      </CellData>\n";
  write_points(out, points);
  out << "      <Polys>\n";
  data_array(out, "Int64", "connectivity", 1, points.size(),
             [](std::size_t k, int) { return static_cast<double>(k); });
  data_array(out, "Int64", "offsets", 1, n,
             [&](std::size_t k, int) { return static_cast<double>(ends[k]); });
  out << "      </Polys>\n";
  end_piece(out);
}

void write_contact_network_vtp(std::ostream& out, const World& world, const StepReport* report,
                               double time_step) {
  const std::size_t n = report ? report->contacts.size() : 0;
  std::vector<Vec3> points;
  std::vector<Vec3> forces;  // world frame, on body b
  std::vector<double> normal_forces;
  for (std::size_t i = 0; i < n; ++i) {
    const Contact& contact = report->contacts[i];
    for (int body : {contact.body_a, contact.body_b}) {
      const RigidBody& b = world.bodies[body];
      points.push_back(is_bounded(b) ? shape_centre(b) : contact.point);
    }
    const Vec3 axes[3] = {contact.normal, contact.tangent1, contact.tangent2};
    Vec3 force = Vec3::Zero();
    for (int k = 0; k < report->rows_per_contact; ++k)
      force += report->impulses(static_cast<long>(i) * report->rows_per_contact + k) / time_step *
               axes[k];
    forces.push_back(force);
    normal_forces.push_back(report->impulses(static_cast<long>(i) * report->rows_per_contact) /
                            time_step);
  }
  begin_piece(out, points.size(), 0, n);
  out << "      <CellData Scalars=\"force\" Vectors=\"force_vector\">\n";
  data_array(out, "Float64", "force", 1, n, [&](std::size_t k, int) { return forces[k].norm(); });
  data_array(out, "Float64", "normal_force", 1, n,
             [&](std::size_t k, int) { return normal_forces[k]; });
  data_array(out, "Float64", "force_vector", 3, n,
             [&](std::size_t k, int c) { return forces[k](c); });
  data_array(out, "Float64", "gap", 1, n,
             [&](std::size_t k, int) { return report->contacts[k].gap; });
  data_array(out, "Int64", "body_a", 1, n,
             [&](std::size_t k, int) { return double(report->contacts[k].body_a); });
  data_array(out, "Int64", "body_b", 1, n,
             [&](std::size_t k, int) { return double(report->contacts[k].body_b); });
  out << "      </CellData>\n";
  write_points(out, points);
  write_cells(out, "Lines", n, 2);
  end_piece(out);
}

// A .pvd collection that grows by one data set per output step. Each entry overwrites the
// closing tags and writes them again, so the file is valid after every step; it is never
// truncated or replaced (on ext4 either forces the data to disk, which would make every
// output step cost milliseconds).
PvdCollection::PvdCollection(const std::filesystem::path& path)
    : path_(path), out_(path, std::ios::out | std::ios::trunc) {
  if (!out_) throw InputError(path_.string() + ": cannot create the output file");
  out_ << "<?xml version=\"1.0\"?>\n"
          "<VTKFile type=\"Collection\" version=\"1.0\" byte_order=\"LittleEndian\">\n"
          "  <Collection>\n"
       << kCollectionEnd;
  out_.flush();
}

void PvdCollection::add(double time, const std::string& file) {
  out_.seekp(-static_cast<std::streamoff>(std::char_traits<char>::length(kCollectionEnd)),
             std::ios::end);
  out_ << "    <DataSet timestep=\"";
  write_number(out_, time);
  out_ << "\" group=\"\" part=\"0\" file=\"" << file << "\"/>\n" << kCollectionEnd;
  out_.flush();
  if (!out_) throw InputError(path_.string() + ": writing the output file failed (disk full?)");
}

VtkWriter::VtkWriter(const std::filesystem::path& directory)
    : directory_(make_output_directory(directory)),
      particles_(directory_ / "particles.pvd"),
      contacts_(directory_ / "contacts.pvd") {}

void VtkWriter::write(const World& world, long step, const StepReport* report, double time_step) {
  const std::string particles = numbered("particles", step);
  const std::string contacts = numbered("contacts", step);
  write_file(directory_ / particles, [&](std::ostream& out) { write_particles_vtp(out, world); });
  write_file(directory_ / contacts,
             [&](std::ostream& out) { write_contact_network_vtp(out, world, report, time_step); });
  particles_.add(world.time, particles);
  contacts_.add(world.time, contacts);
  if (!polygons_ && !has_polygons(world)) return;
  if (!polygons_) polygons_.emplace(directory_ / "polygons.pvd");
  const std::string polygons = numbered("polygons", step);
  write_file(directory_ / polygons, [&](std::ostream& out) { write_polygons_vtp(out, world); });
  polygons_->add(world.time, polygons);
}

}  // namespace moreau
