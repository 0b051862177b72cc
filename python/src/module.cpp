// The Python module moreau._moreau: scenes, their simulation, the registries of schemes and
// solvers, one cone problem or FCLIB file solved, and the harness's reference values and
// verdicts. It uses only the public headers of the engine and the harness; the package
// moreau/__init__.py re-exports it and adds what is simpler in Python.
#include <pybind11/eigen.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "moreau/contact/delassus.hpp"
#include "moreau/core/error.hpp"
#include "moreau/fclib/fclib.hpp"
#include "moreau/harness/reference.hpp"
#include "moreau/harness/results.hpp"
#include "moreau/integrator/scheme_registry.hpp"
#include "moreau/integrator/semi_implicit_euler.hpp"
#include "moreau/integrator/stepper.hpp"
#include "moreau/io/checkpoint.hpp"
#include "moreau/io/scene.hpp"
#include "moreau/simulation/channel_flow.hpp"
#include "moreau/simulation/observers.hpp"
#include "moreau/simulation/simulation.hpp"
#include "moreau/solver/cone_problem.hpp"
#include "moreau/solver/solver.hpp"
#include "moreau/solver/solver_registry.hpp"

namespace py = pybind11;
using json = nlohmann::json;

namespace moreau::python {
namespace {

// ---- JSON <-> Python ------------------------------------------------------------------------

// A Python document (dict, list, str, bool, number, None) as JSON, so that parse_scene sees
// what load_scene would read from a file; `where` names the place for a value JSON cannot hold.
json to_json(const py::handle& value, const std::string& where) {
  if (value.is_none()) return nullptr;
  if (py::isinstance<py::bool_>(value)) return value.cast<bool>();
  if (py::isinstance<py::str>(value)) return value.cast<std::string>();
  if (py::isinstance<py::dict>(value)) {
    json object = json::object();
    for (const auto& [key, item] : value.cast<py::dict>()) {
      if (!py::isinstance<py::str>(key))
        throw InputError(where + ": key " + py::repr(key).cast<std::string>() + " is not a string");
      const std::string name = key.cast<std::string>();
      object[name] = to_json(item, where.empty() ? name : where + "." + name);
    }
    return object;
  }
  if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
    json array = json::array();
    std::size_t i = 0;
    for (const auto& item : value)
      array.push_back(to_json(item, where + "[" + std::to_string(i++) + "]"));
    return array;
  }
  // Integers stay integers (a scene's counts must be whole); NumPy scalars arrive here too.
  const auto object = py::reinterpret_borrow<py::object>(value);
  if (py::hasattr(object, "__index__")) return py::int_(object).cast<long long>();
  if (py::hasattr(object, "__float__")) return py::float_(object).cast<double>();
  throw InputError(where + ": a " + py::str(value.get_type().attr("__name__")).cast<std::string>() +
                   " has no JSON form");
}

py::object to_python(const json& value) {
  switch (value.type()) {
    case json::value_t::null:
      return py::none();
    case json::value_t::boolean:
      return py::bool_(value.get<bool>());
    case json::value_t::number_integer:
      return py::int_(value.get<long long>());
    case json::value_t::number_unsigned:
      return py::int_(value.get<unsigned long long>());
    case json::value_t::number_float:
      return py::float_(value.get<double>());
    case json::value_t::string:
      return py::str(value.get<std::string>());
    case json::value_t::array: {
      py::list list;
      for (const json& item : value) list.append(to_python(item));
      return list;
    }
    case json::value_t::object: {
      py::dict dict;
      for (const auto& [key, item] : value.items()) dict[py::str(key)] = to_python(item);
      return dict;
    }
    default:
      return py::none();
  }
}

// ---- options ----------------------------------------------------------------------------

template <class Table>
py::list describe_options(const Table& table) {
  py::list out;
  for (const auto& field : table) {
    py::dict option;
    option["key"] = field.key;
    option["type"] = option_type_text(field);
    option["unit"] = field.unit;
    option["description"] = field.doc;
    out.append(std::move(option));
  }
  return out;
}

// One keyword argument of solve() as the solver section's key `key`: a bool, a word, a number,
// or for "order" a word or a permutation of the contacts, checked by the solver's option table
// (OptionError naming the key, as for a scene).
void set_option(const std::string& solver, AnySolverOptions& options, const std::string& key,
                const py::handle& value) {
  if (key == "order" && options.contact_order()) {
    ContactOrderOptions& order = *options.contact_order();
    if (py::isinstance<py::str>(value)) {
      const std::string word = value.cast<std::string>();
      if (word == "natural")
        order.order = ContactOrder::natural;
      else if (word == "reverse")
        order.order = ContactOrder::reverse;
      else if (word == "random")
        order.order = ContactOrder::random;
      else
        throw OptionError(key, "\"" + word +
                                   "\" is not one of \"natural\", \"reverse\", \"random\" or a "
                                   "permutation of the contacts");
    } else {
      order.custom_order = value.cast<std::vector<int>>();
      order.order = ContactOrder::custom;
    }
    return;
  }
  if (py::isinstance<py::bool_>(value))
    set_solver_option(solver, options, key, value.cast<bool>());
  else if (py::isinstance<py::str>(value))
    set_solver_option(solver, options, key, value.cast<std::string>());
  else if (py::hasattr(value, "__float__"))
    set_solver_option(solver, options, key,
                      py::float_(py::reinterpret_borrow<py::object>(value)).cast<double>());
  else
    throw OptionError(key, "a " + py::str(value.get_type().attr("__name__")).cast<std::string>() +
                               " is neither a number, a bool nor a word");
}

AnySolverOptions solver_options(const std::string& solver, const py::dict& given) {
  AnySolverOptions options = default_solver_options(solver);
  for (const auto& [key, value] : given)
    set_option(solver, options, key.cast<std::string>(), value);
  options.validate();
  return options;
}

FrictionModel friction_model(const std::string& name) {
  if (name == "coulomb") return FrictionModel::coulomb;
  if (name == "convex_relaxation") return FrictionModel::convex_relaxation;
  throw InputError("friction_model: \"" + name +
                   "\" is not one of \"coulomb\" or \"convex_relaxation\"");
}

// ---- one cone problem ---------------------------------------------------------------------

// u = W r + q with the cone law of `rows` rows per contact, solved by the registered solver
// `solver` from `r0` (zeros when not given) with the GIL released.
std::pair<VecX, SolverStats> solve(SparseMatrix W, VecX q, VecX mu, const std::string& solver,
                                   int rows, const std::string& model, const py::dict& options,
                                   std::optional<VecX> r0) {
  const AnySolverOptions own = solver_options(solver, options);
  const std::unique_ptr<ContactSolver> contact_solver = make_solver(solver, own);
  const SparseDelassus delassus(std::move(W), rows);
  ConeProblem problem;
  problem.delassus = &delassus;
  problem.q = std::move(q);
  problem.mu = std::move(mu);
  problem.friction_model = friction_model(model);
  if (problem.q.size() != delassus.size())
    throw InputError("q has " + std::to_string(problem.q.size()) + " entries, W is " +
                     std::to_string(delassus.size()) + " x " + std::to_string(delassus.size()));
  if (problem.mu.size() != delassus.contact_count())
    throw InputError("mu has " + std::to_string(problem.mu.size()) + " entries for " +
                     std::to_string(delassus.contact_count()) + " contacts");
  problem.validate();
  VecX r = r0 ? std::move(*r0) : VecX::Zero(delassus.size());
  if (r.size() != delassus.size())
    throw InputError("r0 has " + std::to_string(r.size()) + " entries, the problem " +
                     std::to_string(delassus.size()));
  SolverStats stats;
  {
    py::gil_scoped_release release;
    stats = contact_solver->solve(problem, r);
  }
  return {std::move(r), std::move(stats)};
}

SparseMatrix csr_matrix(py::array_t<long long, py::array::c_style | py::array::forcecast> indptr,
                        py::array_t<long long, py::array::c_style | py::array::forcecast> indices,
                        py::array_t<double, py::array::c_style | py::array::forcecast> data,
                        long rows, long cols) {
  if (indptr.ndim() != 1 || indptr.shape(0) != rows + 1)
    throw InputError("W: indptr has " + std::to_string(indptr.size()) + " entries for " +
                     std::to_string(rows) + " rows");
  if (indices.size() != data.size()) throw InputError("W: indices and data differ in length");
  std::vector<Eigen::Triplet<double>> triplets;
  triplets.reserve(static_cast<std::size_t>(data.size()));
  const auto p = indptr.unchecked<1>();
  const auto j = indices.unchecked<1>();
  const auto x = data.unchecked<1>();
  for (long row = 0; row < rows; ++row) {
    if (p(row) < 0 || p(row + 1) < p(row) || p(row + 1) > data.size())
      throw InputError("W: indptr is not increasing within the data");
    for (long long k = p(row); k < p(row + 1); ++k) {
      if (j(k) < 0 || j(k) >= cols)
        throw InputError("W: column index " + std::to_string(j(k)) + " outside the matrix");
      triplets.emplace_back(static_cast<int>(row), static_cast<int>(j(k)), x(k));
    }
  }
  SparseMatrix W(rows, cols);
  W.setFromTriplets(triplets.begin(), triplets.end());
  return W;
}

// ---- an FCLIB file --------------------------------------------------------------------------

py::tuple solve_fclib(const std::string& path, const std::string& solver, const py::dict& options) {
  const AnySolverOptions own = solver_options(solver, options);
  const std::unique_ptr<ContactSolver> contact_solver = make_solver(solver, own);
  const fclib::File file = fclib::read_file(path);
  // A global problem M v = H r + f is solved as its local reduction, v recovered from r.
  std::unique_ptr<fclib::GlobalReduction> reduction;
  if (file.global) reduction = std::make_unique<fclib::GlobalReduction>(*file.global);
  const fclib::LocalProblem& local = reduction ? reduction->local() : *file.local;
  const fclib::LocalSystem system(local);
  VecX r = VecX::Zero(local.q.size());
  SolverStats stats;
  {
    py::gil_scoped_release release;
    stats = contact_solver->solve(system.problem(), r);
  }
  py::dict info;
  info["kind"] = file.local ? "local" : "global";
  info["contacts"] = local.contact_count();
  info["dimension"] = local.spacedim;
  info["symmetric"] = system.symmetric();
  info["fclib_merit"] = fclib::natural_map_merit(local, r);
  info["u"] = VecX(local.W.matrix * r + local.q);
  if (reduction) info["v"] = reduction->velocity(r);
  return py::make_tuple(std::move(r), std::move(stats), std::move(info));
}

// ---- simulation -------------------------------------------------------------------------

// Asks every step for its contacts, so that contacts() can give them also for the DEM, which
// fills them only on request.
class ContactRequest final : public StepObserver {
 public:
  bool wants_contacts(long /*step*/) const override { return true; }
};

// What one step reported, copied so that it stays valid when the simulation steps on.
struct Report {
  long step = 0;
  double time = 0.0;
  long active_contacts = 0;
  int rows_per_contact = 1;
  SolverStats solver_stats;
  double solve_cpu_seconds = 0.0;
  std::optional<VecX> compatible_impulses;  // the compatible CD's impulse per contact
};

// A scene stepped by the stepper its scheme names (make_stepper), the way `moreau run` steps
// it: its solver-failure policy and, for a channel flow, the inflow after every step; written
// output (CSV, VTK, summary) is left to the caller.
class PySimulation {
 public:
  PySimulation(const Scene& scene, const std::optional<std::filesystem::path>& restart)
      : scene_(std::make_unique<Scene>(scene)), policy_(scene.on_solver_failure, std::cerr) {
    if (scene_->channel_flow && restart)
      throw InputError(restart->string() +
                       ": a channel_flow run cannot restart from a checkpoint (the inflow's "
                       "plane, generator and counters are not in it)");
    // Before the stepper is built: the DEM builds its neighbours from the state it is given.
    if (scene_->channel_flow) inflow_.emplace(scene_->world, *scene_->channel_flow);
    CheckpointContents contents;
    if (restart) contents = read_checkpoint_contents(*restart, scene_->world);
    simulation_.emplace(make_stepper(*scene_));
    Stepper& stepper = simulation_->stepper();
    stepper.resume_at(contents.step);
    if (restart) restore_scheme_state(contents, stepper, *restart);
    restart_metadata_ = contents.metadata;
    simulation_->add_observer(contacts_);
    simulation_->add_observer(policy_);
    if (inflow_) simulation_->add_world_update([this](Stepper& s) { inflow_->after_step(s); });
  }

  Report step(long steps) {
    if (steps < 0) throw InputError("step: n must be >= 0, got " + std::to_string(steps));
    {
      py::gil_scoped_release release;
      const std::lock_guard<std::mutex> lock(mutex_);
      simulation_->run(steps);
    }
    return report();
  }

  Report report() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    const StepReport& last = stepper().last_report();
    Report out;
    out.step = last.step;
    out.time = last.time;
    out.active_contacts = last.active_contacts;
    out.rows_per_contact = last.rows_per_contact;
    out.solver_stats = last.solver_stats;
    out.solve_cpu_seconds = last.solve_cpu_seconds;
    if (const CompatibleSolve* compatible = compatible_solve(last))
      out.compatible_impulses = compatible->impulses;
    return out;
  }

  py::dict bodies() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    const std::vector<RigidBody>& bodies = stepper().world().bodies;
    const auto n = static_cast<py::ssize_t>(bodies.size());
    py::array_t<double> position({n, py::ssize_t{3}}), orientation({n, py::ssize_t{4}});
    py::array_t<double> linear({n, py::ssize_t{3}}), angular({n, py::ssize_t{3}});
    auto x = position.mutable_unchecked<2>();
    auto q = orientation.mutable_unchecked<2>();
    auto v = linear.mutable_unchecked<2>();
    auto w = angular.mutable_unchecked<2>();
    py::list names;
    for (py::ssize_t i = 0; i < n; ++i) {
      const RigidBody& body = bodies[static_cast<std::size_t>(i)];
      names.append(body.name);
      for (int k = 0; k < 3; ++k) {
        x(i, k) = body.position(k);
        v(i, k) = body.linear_velocity(k);
        w(i, k) = body.angular_velocity(k);
      }
      q(i, 0) = body.orientation.w();
      q(i, 1) = body.orientation.x();
      q(i, 2) = body.orientation.y();
      q(i, 3) = body.orientation.z();
    }
    py::dict out;
    out["names"] = names;
    out["positions"] = position;
    out["orientations"] = orientation;
    out["linear_velocities"] = linear;
    out["angular_velocities"] = angular;
    return out;
  }

  py::dict contacts() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    const StepReport& last = stepper().last_report();
    const auto m = static_cast<py::ssize_t>(last.contacts.size());
    const int rows = last.rows_per_contact;
    py::array_t<int> pairs({m, py::ssize_t{2}});
    py::array_t<double> points({m, py::ssize_t{3}}), normals({m, py::ssize_t{3}}), gaps(m);
    // A step whose impulses were not reported (none solved) gives zeros of the right shape.
    const bool have_impulses = last.impulses.size() == m * rows;
    py::array_t<double> impulses({m, static_cast<py::ssize_t>(rows)});
    auto ab = pairs.mutable_unchecked<2>();
    auto p = points.mutable_unchecked<2>();
    auto nrm = normals.mutable_unchecked<2>();
    auto g = gaps.mutable_unchecked<1>();
    auto r = impulses.mutable_unchecked<2>();
    for (py::ssize_t i = 0; i < m; ++i) {
      const Contact& contact = last.contacts[static_cast<std::size_t>(i)];
      ab(i, 0) = contact.body_a;
      ab(i, 1) = contact.body_b;
      for (int k = 0; k < 3; ++k) {
        p(i, k) = contact.point(k);
        nrm(i, k) = contact.normal(k);
      }
      g(i) = contact.gap;
      for (int k = 0; k < rows; ++k) r(i, k) = have_impulses ? last.impulses(i * rows + k) : 0.0;
    }
    py::dict out;
    out["bodies"] = pairs;
    out["points"] = points;
    out["normals"] = normals;
    out["gaps"] = gaps;
    out["impulses"] = impulses;
    return out;
  }

  // The state after the steps taken, with the scheme's own state (the variational scheme's
  // shear history, the DEM's springs) as `moreau run` writes it, so that a restart continues
  // the same run.
  void checkpoint(const std::filesystem::path& path, const py::object& metadata) const {
    CheckpointContents contents;
    contents.metadata = metadata.is_none() ? json(nullptr) : to_json(metadata, "metadata");
    const std::lock_guard<std::mutex> lock(mutex_);
    contents.step = stepper().steps_taken();
    contents.scene = scene_->source;
    write_stepper_checkpoint(path, stepper(), std::move(contents));
  }

  const Stepper& stepper() const { return simulation_->stepper(); }
  const Scene& scene() const { return *scene_; }
  long total_steps() const { return scene_step_count(*scene_, stepper().time_step()); }
  py::object restart_metadata() const { return to_python(restart_metadata_); }

 private:
  std::unique_ptr<Scene> scene_;  // the stepper holds its world: declared first, freed last
  std::optional<ChannelInflow> inflow_;
  ContactRequest contacts_;
  FailurePolicy policy_;
  std::optional<Simulation> simulation_;
  json restart_metadata_;
  // Between step(), which runs without the GIL, and readers in other threads.
  mutable std::mutex mutex_;
};

std::string comparison_name(Comparison comparison) { return to_string(comparison); }

Measured measured_kind(const std::string& name) {
  if (name == "exact") return Measured::exact;
  if (name == "lower_bound") return Measured::lower_bound;
  if (name == "upper_bound") return Measured::upper_bound;
  throw InputError("measured_is: \"" + name +
                   "\" is not one of \"exact\", \"lower_bound\" or \"upper_bound\"");
}

}  // namespace

void bind(py::module_& m) {
  py::register_exception<InputError>(m, "InputError", PyExc_ValueError);
  py::register_exception<SimulationError>(m, "SimulationError", PyExc_RuntimeError);

  // ---- registries ----
  m.def(
      "schemes",
      [] {
        py::list out;
        for (const SchemeRegistration& scheme : registered_schemes()) {
          py::dict entry;
          entry["name"] = scheme.name;
          entry["description"] = scheme.description;
          entry["section"] = scheme.section;
          entry["takes_solver"] = scheme.takes_solver;
          entry["options"] = describe_options(scheme.options);
          if (!scheme.nested_key.empty()) {
            entry["nested_key"] = scheme.nested_key;
            entry["nested_options"] = describe_options(scheme.nested_options);
          }
          out.append(std::move(entry));
        }
        return out;
      },
      "The registered time-stepping schemes, by name: name, description, section, "
      "takes_solver, options (and nested_key, nested_options).");
  m.def(
      "solvers",
      [] {
        py::list out;
        for (const SolverRegistration& solver : registered_solvers()) {
          py::dict entry;
          entry["name"] = solver.name;
          entry["description"] = solver.description;
          py::list laws;
          if (solver.laws.coulomb) laws.append("coulomb");
          if (solver.laws.convex_relaxation) laws.append("convex_relaxation");
          if (solver.laws.frictionless) laws.append("frictionless");
          if (solver.laws.maximum_dissipation) laws.append("maximum_dissipation");
          entry["laws"] = laws;
          entry["options"] = describe_options(solver.options);
          if (!solver.nested_key.empty()) {
            entry["nested_key"] = solver.nested_key;
            entry["nested_options"] = describe_options(solver.nested_options);
          }
          out.append(std::move(entry));
        }
        return out;
      },
      "The registered contact solvers, by name: name, description, laws (coulomb, "
      "convex_relaxation, frictionless, maximum_dissipation), options.");

  // ---- scenes ----
  py::class_<Scene>(m, "Scene", "A scene file as read and validated by the engine.")
      .def_readonly("source", &Scene::source)
      .def_readonly("scheme", &Scene::scheme)
      .def_readonly("solver", &Scene::solver)
      .def_readonly("steps", &Scene::steps)
      .def_property_readonly("time_step", &Scene::time_step)
      .def_property_readonly("dimension",
                             [](const Scene& s) { return static_cast<int>(s.world.dimension); })
      .def_property_readonly("body_count", [](const Scene& s) { return s.world.bodies.size(); })
      .def_property_readonly("output_directory", [](const Scene& s) { return s.output.directory; })
      .def("set_scheme", &Scene::set_scheme, py::arg("name"),
           "Another registered scheme, as `moreau run --scheme`.")
      .def("set_solver", &Scene::set_solver, py::arg("name"),
           "Another registered solver, as `moreau run --solver`.")
      .def("__repr__", [](const Scene& s) {
        return "<moreau.Scene " + s.source + ": " + std::to_string(s.world.bodies.size()) +
               " bodies, scheme " + s.scheme + ", solver " + s.solver + ", " +
               std::to_string(s.steps) + " steps>";
      });
  m.def("load_scene", &load_scene, py::arg("path"),
        "Reads and validates a scene file; InputError with the CLI's message otherwise.");
  m.def(
      "parse_scene",
      [](const py::object& document, const std::string& name) {
        return parse_scene(to_json(document, ""), name);
      },
      py::arg("document"), py::arg("name") = "<python>",
      "A scene from a dict of the scene file's form; `name` prefixes every message.");

  // ---- simulation ----
  py::class_<SolverStats>(m, "SolverStats", "How a contact solve went.")
      .def_readonly("solver", &SolverStats::solver)
      .def_property_readonly("termination",
                             [](const SolverStats& s) { return to_string(s.termination); })
      .def_readonly("converged", &SolverStats::converged)
      .def_readonly("iterations", &SolverStats::iterations)
      .def_readonly("has_merit", &SolverStats::has_merit)
      .def_readonly("merit", &SolverStats::merit)
      .def_readonly("criterion", &SolverStats::criterion)
      .def_readonly("criterion_value", &SolverStats::criterion_value)
      .def_readonly("merit_history", &SolverStats::merit_history)
      .def_readonly("tolerance", &SolverStats::tolerance)
      .def_readonly("wall_seconds", &SolverStats::wall_seconds)
      .def_readonly("threads", &SolverStats::threads)
      .def_readonly("krylov_iterations", &SolverStats::krylov_iterations)
      .def_readonly("kleinert_error", &SolverStats::kleinert_error)
      .def_readonly("stop_reason", &SolverStats::stop_reason)
      .def("__repr__", [](const SolverStats& s) {
        return "<moreau.SolverStats " + s.solver + ": " + to_string(s.termination) + " after " +
               std::to_string(s.iterations) + " iterations, " + s.criterion + " " +
               py::repr(py::float_(s.criterion_value)).cast<std::string>() + ">";
      });

  py::class_<Report>(m, "Report", "What the last step reported.")
      .def_readonly("step", &Report::step)
      .def_readonly("time", &Report::time)
      .def_readonly("active_contacts", &Report::active_contacts)
      .def_readonly("rows_per_contact", &Report::rows_per_contact)
      .def_readonly("solver_stats", &Report::solver_stats)
      .def_readonly("solve_cpu_seconds", &Report::solve_cpu_seconds)
      .def_readonly("compatible_impulses", &Report::compatible_impulses,
                    "The compatible CD impulse per contact (Olsen & Kamrin Alg. 1), or None.")
      .def("__repr__", [](const Report& r) {
        return "<moreau.Report step " + std::to_string(r.step) +
               ", t = " + py::repr(py::float_(r.time)).cast<std::string>() + " s, " +
               std::to_string(r.active_contacts) + " contacts, " +
               to_string(r.solver_stats.termination) + ">";
      });

  py::class_<PySimulation>(m, "Simulation",
                           "A scene stepped by the stepper its scheme names, as `moreau run` "
                           "steps it (without writing output).")
      .def(py::init<const Scene&, const std::optional<std::filesystem::path>&>(), py::arg("scene"),
           py::arg("restart") = py::none(),
           "restart: a checkpoint of the same scene to continue from.")
      .def("step", &PySimulation::step, py::arg("n") = 1,
           "Takes n steps with the GIL released; returns the last step's report.")
      .def(
          "run",
          [](PySimulation& s) {
            return s.step(std::max(0L, s.total_steps() - s.stepper().steps_taken()));
          },
          "Takes the steps that remain of the scene's run length.")
      .def_property_readonly("time", [](const PySimulation& s) { return s.stepper().world().time; })
      .def_property_readonly("steps_taken",
                             [](const PySimulation& s) { return s.stepper().steps_taken(); })
      .def_property_readonly("total_steps", &PySimulation::total_steps)
      .def_property_readonly("time_step",
                             [](const PySimulation& s) { return s.stepper().time_step(); })
      .def_property_readonly("scheme", [](const PySimulation& s) { return s.stepper().scheme(); })
      .def_property_readonly("report", &PySimulation::report)
      .def_property_readonly("restart_metadata", &PySimulation::restart_metadata)
      .def("bodies", &PySimulation::bodies,
           "names, positions (N x 3), orientations (N x 4: w, x, y, z), linear_velocities and "
           "angular_velocities (N x 3).")
      .def("contacts", &PySimulation::contacts,
           "The last step's contacts: bodies (M x 2), points and normals (M x 3), gaps (M), "
           "impulses (M x rows_per_contact, contact frame n, t1, t2).")
      .def("checkpoint", &PySimulation::checkpoint, py::arg("path"),
           py::arg("metadata") = py::none(),
           "Writes a checkpoint that Simulation(scene, restart=path) continues from.");

  // ---- one cone problem, one FCLIB file ----
  m.def("_solve_dense",
        [](const Eigen::MatrixXd& W, VecX q, VecX mu, const std::string& solver, int rows,
           const std::string& model, const py::dict& options, std::optional<VecX> r0) {
          return solve(W.sparseView(0.0, 0.0), std::move(q), std::move(mu), solver, rows, model,
                       options, std::move(r0));
        });
  m.def("_solve_csr",
        [](py::array_t<long long, py::array::c_style | py::array::forcecast> indptr,
           py::array_t<long long, py::array::c_style | py::array::forcecast> indices,
           py::array_t<double, py::array::c_style | py::array::forcecast> data, long n_rows,
           long n_cols, VecX q, VecX mu, const std::string& solver, int rows,
           const std::string& model, const py::dict& options, std::optional<VecX> r0) {
          return solve(csr_matrix(indptr, indices, data, n_rows, n_cols), std::move(q),
                       std::move(mu), solver, rows, model, options, std::move(r0));
        });
  m.def("_solve_fclib", &solve_fclib);

  // ---- harness ----
  py::class_<ReferenceValue>(m, "ReferenceValue", "A published value of reference/*/expected.json.")
      .def_readonly("name", &ReferenceValue::name)
      .def_readonly("published", &ReferenceValue::published)
      .def_readonly("published_high", &ReferenceValue::published_high)
      .def_readonly("statement", &ReferenceValue::statement)
      .def_property_readonly("comparison",
                             [](const ReferenceValue& v) { return comparison_name(v.comparison); })
      .def_readonly("tolerance", &ReferenceValue::tolerance)
      .def_readonly("source", &ReferenceValue::source)
      .def_readonly("reason", &ReferenceValue::reason)
      .def_readonly("scales", &ReferenceValue::scales)
      .def_readonly("known_differences", &ReferenceValue::known_differences)
      .def("applies_to", &ReferenceValue::applies_to, py::arg("scale"))
      .def("__repr__", [](const ReferenceValue& v) {
        return "<moreau.ReferenceValue " + v.name + ": " + comparison_name(v.comparison) + " " +
               py::repr(py::float_(v.published)).cast<std::string>() + ">";
      });

  py::class_<CheckResult>(m, "CheckResult", "A measured value judged against a reference value.")
      .def_readonly("reference", &CheckResult::reference)
      .def_readonly("measured", &CheckResult::measured)
      .def_property_readonly("measured_is",
                             [](const CheckResult& c) { return to_string(c.measured_is); })
      .def_readonly("note", &CheckResult::note)
      .def_property_readonly("verdict", [](const CheckResult& c) { return to_string(c.verdict); })
      .def_readonly("stale_known_difference", &CheckResult::stale_known_difference)
      .def("__repr__", [](const CheckResult& c) {
        return "<moreau.CheckResult " + c.reference.name + ": " + to_string(c.verdict) + ">";
      });

  py::class_<Reference>(m, "Reference", "The published values of one experiment.")
      .def_static("load", &Reference::load, py::arg("directory"),
                  "Reads <directory>/expected.json (reference/<experiment>).")
      .def_property_readonly("experiment", &Reference::experiment)
      .def_property_readonly("values", &Reference::values)
      .def("get", &Reference::get, py::arg("name"), py::return_value_policy::copy)
      .def("__getitem__", &Reference::get, py::return_value_policy::copy)
      .def("__contains__",
           [](const Reference& r, const std::string& name) {
             for (const ReferenceValue& v : r.values())
               if (v.name == name) return true;
             return false;
           })
      .def("__len__", [](const Reference& r) { return r.values().size(); });

  m.def(
      "judge",
      [](const ReferenceValue& reference, double measured, const std::string& scale,
         const std::string& measured_is) {
        return judge(reference, scale, measured, measured_kind(measured_is));
      },
      py::arg("reference"), py::arg("measured"), py::arg("scale") = "quick",
      py::arg("measured_is") = "exact",
      "The harness's verdict on `measured`: \"pass\", \"fail\", \"known difference\" or \"not "
      "evaluated\".");
  m.def("passes", &passes, py::arg("reference"), py::arg("measured"));

  py::class_<ExperimentResults>(m, "ExperimentResults",
                                "The checks of one run, written as results.json.")
      .def(py::init<std::string, std::string, Reference>(), py::arg("experiment"), py::arg("scale"),
           py::arg("reference"))
      .def("check",
           py::overload_cast<const std::string&, double, const std::string&>(
               &ExperimentResults::check),
           py::arg("name"), py::arg("measured"), py::arg("note") = "",
           py::return_value_policy::copy)
      .def(
          "check_holds",
          [](ExperimentResults& r, const std::string& name, bool holds, const std::string& note) {
            return r.check(name, holds, note);
          },
          py::arg("name"), py::arg("holds"), py::arg("note") = "")
      .def(
          "check_bound",
          [](ExperimentResults& r, const std::string& name, double bound,
             const std::string& measured_is, const std::string& note) {
            return r.check_bound(name, bound, measured_kind(measured_is), note);
          },
          py::arg("name"), py::arg("bound"), py::arg("measured_is"), py::arg("note") = "")
      .def("not_evaluated", &ExperimentResults::not_evaluated, py::arg("name"), py::arg("reason"),
           py::return_value_policy::copy)
      .def("measure", &ExperimentResults::measure, py::arg("name"), py::arg("value"),
           py::arg("unit"), py::arg("note") = "")
      .def("add_file", &ExperimentResults::add_file, py::arg("relative_path"), py::arg("kind"))
      .def("all_passed", &ExperimentResults::all_passed)
      .def_property_readonly("checks", &ExperimentResults::checks)
      .def("verdicts", &ExperimentResults::verdicts)
      .def("write", &ExperimentResults::write, py::arg("directory"),
           "Writes results.json into `directory` and prints the table.")
      .def("exit_code", &ExperimentResults::exit_code);
}

}  // namespace moreau::python

PYBIND11_MODULE(_moreau, m) {
  m.doc() = "Moreau: nonsmooth contact dynamics (the C++ engine's Python binding)";
  m.attr("__version__") = MOREAU_VERSION;
  moreau::python::bind(m);
}
