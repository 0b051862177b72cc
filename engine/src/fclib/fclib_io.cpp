// FCLIB HDF5 reading and writing through the HDF5 C library, with the layout of fclib.h:
// integers as one-element int datasets, vectors as rank-1 double datasets, strings as scalar
// fixed-length string datasets, sparse matrices as groups {m, n, nz, nzmax, p, i, x}.
#include <hdf5.h>

#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "moreau/core/error.hpp"
#include "moreau/fclib/fclib.hpp"

namespace moreau::fclib {
namespace {

// Owns one HDF5 identifier; the close function matches its kind (file, group, ...).
class Handle {
 public:
  Handle(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  Handle(Handle&& other) noexcept : id_(std::exchange(other.id_, -1)), close_(other.close_) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle& operator=(Handle&&) = delete;
  ~Handle() {
    if (id_ >= 0) close_(id_);
  }
  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

// Names every error after the file and the dataset it concerns.
struct Context {
  std::string file;

  [[noreturn]] void fail(const std::string& dataset, const std::string& what) const {
    throw InputError("FCLIB file " + file + ": " + dataset + ": " + what);
  }
};

bool exists(hid_t location, const std::string& name) {
  return H5Lexists(location, name.c_str(), H5P_DEFAULT) > 0;
}

Handle open_group(const Context& context, hid_t location, const std::string& name,
                  const std::string& path) {
  if (!exists(location, name)) context.fail(path, "group is missing");
  Handle group(H5Gopen2(location, name.c_str(), H5P_DEFAULT), H5Gclose);
  if (!group.valid()) context.fail(path, "cannot open the group");
  return group;
}

Handle open_dataset(const Context& context, hid_t location, const std::string& name,
                    const std::string& path) {
  if (!exists(location, name)) context.fail(path, "dataset is missing");
  Handle dataset(H5Dopen2(location, name.c_str(), H5P_DEFAULT), H5Dclose);
  if (!dataset.valid()) context.fail(path, "cannot open the dataset");
  return dataset;
}

// The most elements one dataset may declare (2^26: 512 MiB of doubles). Uncompressed datasets
// are also held to what the file stores, so that the memory a file can make the reader take is a
// few times the file's size, and at most a few GiB for a compressed one.
constexpr hsize_t kMaxElements = hsize_t{1} << 26;

// What an unwritten dataset (declared, never written: it stores nothing) means where it is met.
// Files of the collection declare /solution datasets they never write; such a dataset holds no
// solution and reads as absent. A problem's own data must be written.
enum class Unwritten { refused, absent };

// The number of elements a dataset declares, checked against the file's real storage before
// anything sized by it is allocated: a dataset that declares elements and stores none, or
// fewer bytes than it declares, is refused naming the dataset (or, where `unwritten` allows,
// an unwritten one counts as empty).
hsize_t checked_count(const Context& context, const Handle& dataset, const std::string& path,
                      Unwritten unwritten = Unwritten::refused) {
  const Handle space(H5Dget_space(dataset.get()), H5Sclose);
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 0) context.fail(path, "has no readable dataspace");
  if (rank > 1)
    context.fail(path, "is a rank-" + std::to_string(rank) + " array; FCLIB stores rank-1 arrays");
  const hssize_t points = H5Sget_simple_extent_npoints(space.get());
  if (points < 0) context.fail(path, "has no readable extent");
  const auto count = static_cast<hsize_t>(points);
  if (count == 0) return 0;
  const hsize_t stored = H5Dget_storage_size(dataset.get());
  if (stored == 0 && unwritten == Unwritten::absent) return 0;
  if (count > kMaxElements)
    context.fail(path, "declares " + std::to_string(count) +
                           " elements, more than a problem file may hold (" +
                           std::to_string(kMaxElements) + ")");
  if (stored == 0)
    context.fail(path, "declares " + std::to_string(count) + " elements but stores none");
  const Handle type(H5Dget_type(dataset.get()), H5Tclose);
  const Handle creation(H5Dget_create_plist(dataset.get()), H5Pclose);
  const bool compressed = creation.valid() && H5Pget_nfilters(creation.get()) > 0;
  const std::size_t element = H5Tget_size(type.get());
  if (!compressed && H5Tis_variable_str(type.get()) <= 0 && stored < count * element)
    context.fail(path, "declares " + std::to_string(count) + " elements of " +
                           std::to_string(element) + " bytes, but the file stores " +
                           std::to_string(stored) + " bytes");
  return count;
}

// The checked element count of dataset `name`.
hsize_t declared_count(const Context& context, hid_t location, const std::string& name,
                       const std::string& path) {
  return checked_count(context, open_dataset(context, location, name, path), path);
}

std::vector<int> read_ints(const Context& context, hid_t location, const std::string& name,
                           const std::string& path) {
  const Handle dataset = open_dataset(context, location, name, path);
  std::vector<int> values(checked_count(context, dataset, path));
  if (!values.empty() &&
      H5Dread(dataset.get(), H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) < 0) {
    context.fail(path, "cannot be read as integers");
  }
  return values;
}

int read_int(const Context& context, hid_t location, const std::string& name,
             const std::string& path) {
  const std::vector<int> values = read_ints(context, location, name, path);
  if (values.size() != 1) {
    context.fail(path, "holds " + std::to_string(values.size()) + " values, expected one");
  }
  return values[0];
}

VecX read_vector(const Context& context, hid_t location, const std::string& name,
                 const std::string& path, Unwritten unwritten = Unwritten::refused) {
  const Handle dataset = open_dataset(context, location, name, path);
  VecX values(static_cast<Eigen::Index>(checked_count(context, dataset, path, unwritten)));
  if (values.size() > 0 &&
      H5Dread(dataset.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) < 0) {
    context.fail(path, "cannot be read as floating-point numbers");
  }
  return values;
}

// FCLIB's strings (info/title, description, math_info) are one string each; an array of them
// is refused rather than read in part.
std::string read_string(const Context& context, hid_t location, const std::string& name,
                        const std::string& path) {
  const Handle dataset = open_dataset(context, location, name, path);
  const Handle type(H5Dget_type(dataset.get()), H5Tclose);
  if (H5Tget_class(type.get()) != H5T_STRING) context.fail(path, "is not a string");
  const hsize_t count = checked_count(context, dataset, path);
  if (count != 1)
    context.fail(path, "holds " + std::to_string(count) + " strings; FCLIB stores one");
  if (H5Tis_variable_str(type.get()) > 0) {
    char* text = nullptr;
    if (H5Dread(dataset.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, &text) < 0) {
      context.fail(path, "cannot be read as a string");
    }
    std::string result = text ? text : "";
    H5free_memory(text);
    return result;
  }
  std::vector<char> buffer(H5Tget_size(type.get()) + 1, '\0');
  if (H5Dread(dataset.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, buffer.data()) < 0) {
    context.fail(path, "cannot be read as a string");
  }
  return std::string(buffer.data());
}

void check_finite(const Context& context, const std::string& path, const double* values,
                  Eigen::Index count) {
  for (Eigen::Index k = 0; k < count; ++k) {
    if (!std::isfinite(values[k])) {
      context.fail(path, "entry " + std::to_string(k) + " is not finite");
    }
  }
}

// A size the problem fixes for a matrix (rows or columns), where it is known before the matrix.
struct Expected {
  std::optional<Eigen::Index> rows;
  std::optional<Eigen::Index> columns;
  std::string rows_from;  // the vectors that fix them
  std::string columns_from;
};

StoredMatrix read_matrix(const Context& context, hid_t location, const std::string& name,
                         const std::string& path, const Expected& expected = {}) {
  const Handle group = open_group(context, location, name, path);
  const hid_t g = group.get();
  const int m = read_int(context, g, "m", path + "/m");
  const int n = read_int(context, g, "n", path + "/n");
  const int nz = read_int(context, g, "nz", path + "/nz");
  if (m < 0 || n < 0) {
    context.fail(path, "negative size " + std::to_string(m) + " x " + std::to_string(n));
  }
  // The declared shape against what the problem's vectors fix, before anything is sized by it.
  const auto disagree = [&](const std::string& vector, Eigen::Index entries, int declared) {
    context.fail(path, "is " + std::to_string(m) + " x " + std::to_string(n) + " but " + vector +
                           " has " + std::to_string(entries) + " entries (expected " +
                           std::to_string(declared) + ")");
  };
  if (expected.rows && *expected.rows != m) disagree(expected.rows_from, *expected.rows, m);
  if (expected.columns && *expected.columns != n)
    disagree(expected.columns_from, *expected.columns, n);
  if (static_cast<hsize_t>(m) > kMaxElements || static_cast<hsize_t>(n) > kMaxElements)
    context.fail(path, "size " + std::to_string(m) + " x " + std::to_string(n) +
                           " exceeds what a problem file may hold (" +
                           std::to_string(kMaxElements) + " rows or columns)");
  // The arrays' declared lengths against the storage code, before any of them is read.
  const hsize_t p_count = declared_count(context, g, "p", path + "/p");
  const hsize_t i_count = declared_count(context, g, "i", path + "/i");
  const hsize_t x_count = declared_count(context, g, "x", path + "/x");
  if (i_count != x_count)
    context.fail(path, "i holds " + std::to_string(i_count) + " entries and x " +
                           std::to_string(x_count) + "; they must hold one per entry");
  if (nz >= 0 && (p_count < static_cast<hsize_t>(nz) || i_count < static_cast<hsize_t>(nz)))
    context.fail(path, "nz = " + std::to_string(nz) + " but p, i, x hold " +
                           std::to_string(p_count) + ", " + std::to_string(i_count) + ", " +
                           std::to_string(x_count) + " entries");
  if ((nz == -1 || nz == -2) && p_count != static_cast<hsize_t>(nz == -1 ? n : m) + 1)
    context.fail(path + "/p", "holds " + std::to_string(p_count) + " pointers, expected " +
                                  std::to_string((nz == -1 ? n : m) + 1));
  const std::vector<int> p = read_ints(context, g, "p", path + "/p");
  const std::vector<int> i = read_ints(context, g, "i", path + "/i");
  const VecX x = read_vector(context, g, "x", path + "/x");

  StoredMatrix stored;
  std::vector<Eigen::Triplet<double>> entries;
  // Rows and columns of each entry, checked against the declared size.
  const auto add = [&](int row, int column, double value, std::size_t k) {
    if (row < 0 || row >= m || column < 0 || column >= n) {
      context.fail(path, "entry " + std::to_string(k) + " at (" + std::to_string(row) + ", " +
                             std::to_string(column) + ") is outside the " + std::to_string(m) +
                             " x " + std::to_string(n) + " matrix");
    }
    if (!std::isfinite(value))
      context.fail(path + "/x", "entry " + std::to_string(k) + " is not finite");
    entries.emplace_back(row, column, value);
  };
  if (nz >= 0) {
    stored.storage = Storage::triplet;
    const auto count = static_cast<std::size_t>(nz);
    if (p.size() < count || i.size() < count || static_cast<std::size_t>(x.size()) < count) {
      context.fail(path, "nz = " + std::to_string(nz) + " but p, i, x hold " +
                             std::to_string(p.size()) + ", " + std::to_string(i.size()) + ", " +
                             std::to_string(x.size()) + " entries");
    }
    for (std::size_t k = 0; k < count; ++k) add(i[k], p[k], x[static_cast<Eigen::Index>(k)], k);
  } else if (nz == -1 || nz == -2) {
    stored.storage = nz == -1 ? Storage::csc : Storage::csr;
    const int outer = nz == -1 ? n : m;
    if (p.size() != static_cast<std::size_t>(outer) + 1) {
      context.fail(path + "/p", "holds " + std::to_string(p.size()) + " pointers, expected " +
                                    std::to_string(outer + 1));
    }
    if (p[0] != 0)
      context.fail(path + "/p", "starts at " + std::to_string(p[0]) + "; pointers start at 0");
    for (int k = 0; k < outer; ++k) {
      if (p[k] > p[k + 1])
        context.fail(path + "/p", "pointer " + std::to_string(k + 1) + " (" +
                                      std::to_string(p[k + 1]) + ") is below pointer " +
                                      std::to_string(k) + " (" + std::to_string(p[k]) +
                                      "): pointers must not decrease");
    }
    const auto count = static_cast<std::size_t>(p[outer]);
    if (i.size() < count || static_cast<std::size_t>(x.size()) < count) {
      context.fail(path, "p ends at " + std::to_string(count) + " but i, x hold " +
                             std::to_string(i.size()) + ", " + std::to_string(x.size()));
    }
    for (int k = 0; k < outer; ++k) {
      for (int e = p[k]; e < p[k + 1]; ++e) {
        const auto entry = static_cast<std::size_t>(e);
        if (nz == -1) {
          add(i[entry], k, x[e], entry);
        } else {
          add(k, i[entry], x[e], entry);
        }
      }
    }
  } else {
    context.fail(path + "/nz", std::to_string(nz) + " is not a storage code (>= 0, -1 or -2)");
  }
  stored.matrix.resize(m, n);
  // Repeated triplets add up, as in CSparse's cs_compress.
  stored.matrix.setFromTriplets(entries.begin(), entries.end());
  stored.matrix.makeCompressed();
  return stored;
}

std::optional<Info> read_info(const Context& context, hid_t location, const std::string& path) {
  if (!exists(location, "info")) return std::nullopt;
  const Handle group = open_group(context, location, "info", path + "/info");
  Info info;
  const auto field = [&](const char* name, std::string& value) {
    if (exists(group.get(), name)) {
      value = read_string(context, group.get(), name, path + "/info/" + name);
    }
  };
  field("title", info.title);
  field("description", info.description);
  field("math_info", info.math_info);
  return info;
}

std::optional<StoredMatrix> read_optional_matrix(const Context& context, hid_t location,
                                                 const std::string& name, const std::string& path,
                                                 const Expected& expected = {}) {
  if (!exists(location, name)) return std::nullopt;
  return read_matrix(context, location, name, path, expected);
}

LocalProblem read_local(const Context& context, hid_t file) {
  const std::string root = "/fclib_local";
  const Handle group = open_group(context, file, "fclib_local", root);
  const hid_t g = group.get();
  LocalProblem problem;
  problem.spacedim = read_int(context, g, "spacedim", root + "/spacedim");
  // The vectors first: q fixes W's size before W is read.
  const Handle vectors = open_group(context, g, "vectors", root + "/vectors");
  problem.q = read_vector(context, vectors.get(), "q", root + "/vectors/q");
  problem.mu = read_vector(context, vectors.get(), "mu", root + "/vectors/mu");
  if (exists(vectors.get(), "s")) {
    problem.s = read_vector(context, vectors.get(), "s", root + "/vectors/s");
  }
  const Eigen::Index rows = problem.q.size();
  problem.W = read_matrix(context, g, "W", root + "/W",
                          {rows, rows, root + "/vectors/q", root + "/vectors/q"});
  problem.V = read_optional_matrix(context, g, "V", root + "/V");
  problem.R = read_optional_matrix(context, g, "R", root + "/R");
  problem.info = read_info(context, g, root);
  return problem;
}

GlobalProblem read_global(const Context& context, hid_t file) {
  const std::string root = "/fclib_global";
  const Handle group = open_group(context, file, "fclib_global", root);
  const hid_t g = group.get();
  GlobalProblem problem;
  problem.spacedim = read_int(context, g, "spacedim", root + "/spacedim");
  // The vectors first: f, w and b fix the matrices' sizes before the matrices are read.
  const Handle vectors = open_group(context, g, "vectors", root + "/vectors");
  problem.f = read_vector(context, vectors.get(), "f", root + "/vectors/f");
  problem.w = read_vector(context, vectors.get(), "w", root + "/vectors/w");
  problem.mu = read_vector(context, vectors.get(), "mu", root + "/vectors/mu");
  if (exists(vectors.get(), "b")) {
    problem.b = read_vector(context, vectors.get(), "b", root + "/vectors/b");
  }
  const Eigen::Index dofs = problem.f.size();
  const std::string f_path = root + "/vectors/f";
  problem.M = read_matrix(context, g, "M", root + "/M", {dofs, dofs, f_path, f_path});
  problem.H = read_matrix(context, g, "H", root + "/H",
                          {dofs, problem.w.size(), f_path, root + "/vectors/w"});
  problem.G = read_optional_matrix(
      context, g, "G", root + "/G",
      {dofs, problem.b ? std::optional<Eigen::Index>(problem.b->size()) : std::nullopt, f_path,
       root + "/vectors/b"});
  problem.info = read_info(context, g, root);
  return problem;
}

Solution read_solution(const Context& context, hid_t location, const std::string& path) {
  Solution solution;
  const auto field = [&](const char* name, VecX& value) {
    if (exists(location, name)) {
      value = read_vector(context, location, name, path + "/" + name, Unwritten::absent);
      check_finite(context, path + "/" + name, value.data(), value.size());
    }
  };
  field("v", solution.v);
  field("u", solution.u);
  field("r", solution.r);
  field("l", solution.l);
  return solution;
}

// A stored solution must match the problem's sizes where it is present.
void check_solution(const Context& context, const File& file, const Solution& solution,
                    const std::string& path) {
  const Eigen::Index rows = file.local ? file.local->q.size() : file.global->w.size();
  const Eigen::Index dofs = file.global ? file.global->f.size() : 0;
  const auto check = [&](const VecX& value, const char* name, Eigen::Index expected) {
    if (value.size() != 0 && value.size() != expected) {
      context.fail(path + "/" + name, "has " + std::to_string(value.size()) +
                                          " entries, the problem has " + std::to_string(expected));
    }
  };
  check(solution.r, "r", rows);
  check(solution.u, "u", rows);
  if (file.global) check(solution.v, "v", dofs);
}

// ---- writing ----

void check_status(const std::string& file, const std::string& path, herr_t status) {
  if (status < 0) throw InputError("FCLIB file " + file + ": " + path + ": cannot be written");
}

Handle create_group(const std::string& file, hid_t location, const std::string& name) {
  Handle group(H5Gcreate2(location, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
  if (!group.valid()) throw InputError("FCLIB file " + file + ": cannot create group " + name);
  return group;
}

void write_array(const std::string& file, hid_t location, const std::string& name, hid_t type,
                 const void* data, hsize_t count) {
  const Handle space(H5Screate_simple(1, &count, nullptr), H5Sclose);
  const Handle dataset(
      H5Dcreate2(location, name.c_str(), type, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
      H5Dclose);
  if (!dataset.valid()) throw InputError("FCLIB file " + file + ": cannot create " + name);
  if (count > 0) {
    check_status(file, name, H5Dwrite(dataset.get(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data));
  }
}

void write_int(const std::string& file, hid_t location, const std::string& name, int value) {
  write_array(file, location, name, H5T_NATIVE_INT, &value, 1);
}

void write_ints(const std::string& file, hid_t location, const std::string& name,
                const std::vector<int>& values) {
  write_array(file, location, name, H5T_NATIVE_INT, values.data(), values.size());
}

void write_vector(const std::string& file, hid_t location, const std::string& name,
                  const VecX& values) {
  write_array(file, location, name, H5T_NATIVE_DOUBLE, values.data(),
              static_cast<hsize_t>(values.size()));
}

void write_string(const std::string& file, hid_t location, const std::string& name,
                  const std::string& value) {
  const Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), value.size() + 1);
  H5Tset_strpad(type.get(), H5T_STR_NULLTERM);
  const Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  const Handle dataset(H5Dcreate2(location, name.c_str(), type.get(), space.get(), H5P_DEFAULT,
                                  H5P_DEFAULT, H5P_DEFAULT),
                       H5Dclose);
  if (!dataset.valid()) throw InputError("FCLIB file " + file + ": cannot create " + name);
  check_status(file, name,
               H5Dwrite(dataset.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, value.c_str()));
}

void write_matrix(const std::string& file, hid_t location, const std::string& name,
                  const StoredMatrix& stored) {
  const Handle group = create_group(file, location, name);
  const hid_t g = group.get();
  const ColumnMatrix& a = stored.matrix;
  const auto rows = static_cast<int>(a.rows());
  const auto columns = static_cast<int>(a.cols());
  std::vector<int> p;
  std::vector<int> i;
  VecX x;
  int nz = 0;
  if (stored.storage == Storage::csr) {
    Eigen::SparseMatrix<double, Eigen::RowMajor> b = a;
    b.makeCompressed();
    nz = -2;
    p.assign(b.outerIndexPtr(), b.outerIndexPtr() + rows + 1);
    i.assign(b.innerIndexPtr(), b.innerIndexPtr() + b.nonZeros());
    x = Eigen::Map<const VecX>(b.valuePtr(), b.nonZeros());
  } else {
    ColumnMatrix b = a;
    b.makeCompressed();
    x = Eigen::Map<const VecX>(b.valuePtr(), b.nonZeros());
    if (stored.storage == Storage::csc) {
      nz = -1;
      p.assign(b.outerIndexPtr(), b.outerIndexPtr() + columns + 1);
      i.assign(b.innerIndexPtr(), b.innerIndexPtr() + b.nonZeros());
    } else {
      nz = static_cast<int>(b.nonZeros());
      for (int column = 0; column < columns; ++column) {
        for (ColumnMatrix::InnerIterator it(b, column); it; ++it) {
          i.push_back(static_cast<int>(it.row()));
          p.push_back(column);
        }
      }
    }
  }
  write_int(file, g, "m", rows);
  write_int(file, g, "n", columns);
  write_int(file, g, "nz", nz);
  write_int(file, g, "nzmax", static_cast<int>(x.size()));
  write_ints(file, g, "p", p);
  write_ints(file, g, "i", i);
  write_vector(file, g, "x", x);
}

void write_info(const std::string& file, hid_t location, const std::optional<Info>& info) {
  if (!info) return;
  const Handle group = create_group(file, location, "info");
  write_string(file, group.get(), "title", info->title);
  write_string(file, group.get(), "description", info->description);
  write_string(file, group.get(), "math_info", info->math_info);
}

void write_solution(const std::string& file, hid_t location, const Solution& solution) {
  const auto field = [&](const char* name, const VecX& value) {
    if (value.size() > 0) write_vector(file, location, name, value);
  };
  field("v", solution.v);
  field("u", solution.u);
  field("r", solution.r);
  field("l", solution.l);
}

}  // namespace

std::string to_string(Storage storage) {
  switch (storage) {
    case Storage::triplet:
      return "triplet";
    case Storage::csc:
      return "csc";
    case Storage::csr:
      return "csr";
  }
  return "unknown";
}

File read_file(const std::filesystem::path& path) {
  const Context context{path.string()};
  if (!std::filesystem::exists(path)) context.fail("/", "the file does not exist");
  if (H5Fis_hdf5(path.c_str()) <= 0) context.fail("/", "not an HDF5 file");
  const Handle handle(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!handle.valid()) context.fail("/", "cannot be opened");
  const hid_t file = handle.get();

  File result;
  if (exists(file, "fclib_global_rolling")) {
    context.fail("/fclib_global_rolling",
                 "global problems with rolling friction (spacedim 5) are not supported");
  }
  if (exists(file, "fclib_local")) {
    result.local = read_local(context, file);
    validate(*result.local, context.file);
  } else if (exists(file, "fclib_global")) {
    result.global = read_global(context, file);
    validate(*result.global, context.file);
  } else {
    context.fail("/", "holds neither /fclib_local nor /fclib_global");
  }
  if (exists(file, "solution")) {
    const Handle group = open_group(context, file, "solution", "/solution");
    result.solution = read_solution(context, group.get(), "/solution");
    check_solution(context, result, *result.solution, "/solution");
  }
  if (exists(file, "guesses")) {
    const Handle group = open_group(context, file, "guesses", "/guesses");
    const int count =
        read_int(context, group.get(), "number_of_guesses", "/guesses/number_of_guesses");
    for (int k = 1; k <= count; ++k) {
      const std::string name = std::to_string(k);
      const Handle guess = open_group(context, group.get(), name, "/guesses/" + name);
      result.guesses.push_back(read_solution(context, guess.get(), "/guesses/" + name));
      check_solution(context, result, result.guesses.back(), "/guesses/" + name);
    }
  }
  return result;
}

void write_file(const std::filesystem::path& path, const File& file) {
  const std::string name = path.string();
  if (file.local.has_value() == file.global.has_value()) {
    throw InputError("FCLIB file " + name + ": exactly one of a local and a global problem");
  }
  const Handle handle(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose);
  if (!handle.valid()) throw InputError("FCLIB file " + name + ": cannot be created");
  if (file.local) {
    const LocalProblem& problem = *file.local;
    const Handle group = create_group(name, handle.get(), "fclib_local");
    write_int(name, group.get(), "spacedim", problem.spacedim);
    write_matrix(name, group.get(), "W", problem.W);
    if (problem.V) write_matrix(name, group.get(), "V", *problem.V);
    if (problem.R) write_matrix(name, group.get(), "R", *problem.R);
    const Handle vectors = create_group(name, group.get(), "vectors");
    write_vector(name, vectors.get(), "q", problem.q);
    write_vector(name, vectors.get(), "mu", problem.mu);
    if (problem.s) write_vector(name, vectors.get(), "s", *problem.s);
    write_info(name, group.get(), problem.info);
  } else {
    const GlobalProblem& problem = *file.global;
    const Handle group = create_group(name, handle.get(), "fclib_global");
    write_int(name, group.get(), "spacedim", problem.spacedim);
    write_matrix(name, group.get(), "M", problem.M);
    write_matrix(name, group.get(), "H", problem.H);
    if (problem.G) write_matrix(name, group.get(), "G", *problem.G);
    const Handle vectors = create_group(name, group.get(), "vectors");
    write_vector(name, vectors.get(), "f", problem.f);
    write_vector(name, vectors.get(), "w", problem.w);
    write_vector(name, vectors.get(), "mu", problem.mu);
    if (problem.b) write_vector(name, vectors.get(), "b", *problem.b);
    write_info(name, group.get(), problem.info);
  }
  if (file.solution) {
    const Handle group = create_group(name, handle.get(), "solution");
    write_solution(name, group.get(), *file.solution);
  }
  if (!file.guesses.empty()) {
    const Handle group = create_group(name, handle.get(), "guesses");
    write_int(name, group.get(), "number_of_guesses", static_cast<int>(file.guesses.size()));
    for (std::size_t k = 0; k < file.guesses.size(); ++k) {
      const Handle guess = create_group(name, group.get(), std::to_string(k + 1));
      write_solution(name, guess.get(), file.guesses[k]);
    }
  }
}

}  // namespace moreau::fclib
