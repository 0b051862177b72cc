#include "moreau/variational/quasi_static_driver.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <variant>

#include "contact_screening.hpp"
#include "moreau/contact/contact_system.hpp"
#include "moreau/core/error.hpp"
#include "moreau/model/body.hpp"
#include "moreau/model/shape.hpp"
#include "moreau/variational/rigid_escape.hpp"
#include "solver_report.hpp"

namespace moreau {
namespace {

constexpr int kParticleRows = 3;  // x, y, rotation about z
// The shortest relaxation dt, as a fraction of the load step's: a fixed force then moves a point
// by a millionth of what it moves in a load step (dt^2), so a solve still failing, or still
// moving a point beyond the collision margin, there does so for another reason than the step's
// length.
constexpr double kShortestRelaxation = 1e-3;
// Contact screening's first working set in a step from rest: the gaps that twice the walls'
// displacement of the step could close (the particles they push move by about as much).
constexpr double kScreeningMotionFactor = 2.0;

double cross2(const Vec3& r, const Vec3& v) { return r.x() * v.y() - r.y() * v.x(); }

void check_load(const World& world, const LoadStep& load) {
  for (std::size_t k = 0; k < load.walls.size(); ++k) {
    const WallLoad& w = load.walls[k];
    const std::string where = "load step: walls[" + std::to_string(k) + "]";
    if (w.body < 0 || w.body >= static_cast<int>(world.bodies.size()))
      throw InputError(where + ".body: no body " + std::to_string(w.body));
    if (world.bodies[w.body].is_dynamic())
      throw InputError(where + ".body: body " + std::to_string(w.body) +
                       " is dynamic; a wall must be prescribed or fixed");
    if (!w.direction.allFinite() || std::abs(w.direction.norm() - 1.0) > 1e-9 ||
        w.direction.z() != 0.0)
      throw InputError(where + ".direction: must be a unit vector in the xy plane");
    if (!std::isfinite(w.value)) throw InputError(where + ".value: not finite");
  }
}

int root(std::vector<int>& parent, int b) {
  while (parent[b] != b) b = parent[b] = parent[parent[b]];
  return b;
}

// Marks the unloaded clusters of particles that touch only each other (no wall, no fixed or
// prescribed body): their rigid motion is free, so the equilibrium rows are dependent there
// (a loaded one has no equilibrium: left to the solve to report). Returns whether any was.
bool remove_floating_clusters(const World& world, const std::vector<Contact>& contacts,
                              const std::vector<bool>& loaded, std::vector<bool>& removed) {
  const int bodies = static_cast<int>(world.bodies.size());
  std::vector<int> parent(bodies);
  for (int b = 0; b < bodies; ++b) parent[b] = b;
  for (const Contact& c : contacts) {
    if (world.bodies[c.body_a].is_dynamic() && world.bodies[c.body_b].is_dynamic())
      parent[root(parent, c.body_a)] = root(parent, c.body_b);
  }
  std::vector<bool> anchored(bodies, false);
  for (const Contact& c : contacts) {
    for (const int b : {c.body_a, c.body_b}) {
      const int other = b == c.body_a ? c.body_b : c.body_a;
      if (world.bodies[b].is_dynamic() && !world.bodies[other].is_dynamic())
        anchored[root(parent, b)] = true;
    }
  }
  for (int b = 0; b < bodies; ++b) {
    if (world.bodies[b].is_dynamic() && loaded[b]) anchored[root(parent, b)] = true;
  }
  bool any = false;
  for (int b = 0; b < bodies; ++b) {
    if (!world.bodies[b].is_dynamic() || removed[b] || anchored[root(parent, b)]) continue;
    removed[b] = true;
    any = true;
  }
  return any;
}

// Drops the contacts of unloaded rattlers (particles that some rigid motion moves away from all
// their contacts, `variational::rigid_escape`: one contact or none, a particle held by contacts
// on one side, an elongated one pinched at its ends that a turn frees) and of unloaded floating
// clusters, until none is left; a loaded particle without contacts has no static solution.
// `loaded`: the particles that carry a load (others may be added by the caller).
std::vector<Contact> remove_rattlers(const World& world, std::vector<Contact> contacts,
                                     const std::vector<bool>& loaded, bool frictional,
                                     std::vector<bool>& removed) {
  const int bodies = static_cast<int>(world.bodies.size());
  removed.assign(bodies, false);
  for (bool changed = true; changed;) {
    changed = false;
    std::vector<std::vector<variational::EscapeContact>> touching(bodies);
    for (const Contact& c : contacts) {
      const double mu = !frictional ? 0.0
                                    : world.friction.get(world.bodies[c.body_a].material,
                                                         world.bodies[c.body_b].material);
      touching[c.body_a].push_back({c.point - world.bodies[c.body_a].position, -c.normal, mu});
      touching[c.body_b].push_back({c.point - world.bodies[c.body_b].position, c.normal, mu});
    }
    for (int b = 0; b < bodies; ++b) {
      if (!world.bodies[b].is_dynamic() || removed[b]) continue;
      if (loaded[b] && touching[b].empty())
        throw SimulationError(
            "quasi-static step: particle " + std::to_string(b) + " (" + world.bodies[b].name +
            ") is loaded and has no contact: the static problem (Krabbenhoft/NURBS "
            "chapter eq. 4.16) has no solution");
      if (!loaded[b] && variational::is_rattler(touching[b])) {
        removed[b] = true;
        changed = true;
      }
    }
    std::erase_if(contacts,
                  [&](const Contact& c) { return removed[c.body_a] || removed[c.body_b]; });
    if (!changed) changed = remove_floating_clusters(world, contacts, loaded, removed);
  }
  return contacts;
}

bool touches(const std::vector<Contact>& contacts, int body) {
  return std::any_of(contacts.begin(), contacts.end(),
                     [&](const Contact& c) { return c.body_a == body || c.body_b == body; });
}

// The rattler test holds every neighbour, a force-driven wall included. Where that wall would
// then touch only rattlers, it presses them: its load reaches the sample through them (the wall
// resting on a particle that a shear band pushed out, which the load squeezes aside), so they
// count as loaded and stay in the step. Eq. 4.16 then has no equilibrium for such a particle (a
// status, not an error), and eq. 4.15 with a pseudo-time step moves it aside as the wall
// advances. Only a force-driven wall with no particle within the collision margin is an error.
std::vector<Contact> without_rattlers(const World& world, const std::vector<Contact>& candidates,
                                      const std::vector<Vec6>& load, const LoadStep& step,
                                      bool frictional, long& rattlers) {
  const int bodies = static_cast<int>(world.bodies.size());
  std::vector<bool> loaded(bodies, false);
  for (int b = 0; b < bodies; ++b) loaded[b] = world.bodies[b].is_dynamic() && load[b].norm() > 0.0;
  std::vector<bool> removed;
  std::vector<Contact> contacts;
  for (bool pressed_more = true; pressed_more;) {
    pressed_more = false;
    contacts = remove_rattlers(world, candidates, loaded, frictional, removed);
    for (const WallLoad& w : step.walls) {
      if (w.control != WallControl::force || w.value == 0.0 || touches(contacts, w.body)) continue;
      for (const Contact& c : candidates) {
        if (c.body_a != w.body && c.body_b != w.body) continue;
        const int particle = c.body_a == w.body ? c.body_b : c.body_a;
        if (!world.bodies[particle].is_dynamic() || loaded[particle]) continue;
        loaded[particle] = true;
        pressed_more = true;
      }
    }
  }
  rattlers = 0;
  for (int b = 0; b < bodies; ++b) rattlers += removed[b] ? 1 : 0;
  return contacts;
}

// The equilibrium rows of eq. 4.16 (A f = b): three per particle with contacts (of
// `row_contacts` where given: the detected contacts of a screened step, so that a particle
// whose contacts are all left out keeps its loaded rows), one per force-driven wall (its
// direction). Column 2i is p_i of `contacts` (force n on body b, -n on body a), 2i+1 is q_i
// (along t). Rows that no force reaches are dropped when unloaded.
struct Equilibrium {
  SparseMatrix matrix;
  VecX rhs;
  std::vector<int> row_body;  // body of each row
  std::vector<int> row_dof;   // 0 x, 1 y, 2 rotation; -1: wall direction
};

Equilibrium equilibrium(const World& world, const std::vector<Contact>& contacts,
                        const std::vector<Vec6>& load, const LoadStep& step,
                        const std::vector<Contact>* row_contacts = nullptr) {
  const int bodies = static_cast<int>(world.bodies.size());
  std::vector<int> first_row(bodies, -1);
  std::vector<Vec3> wall_direction(bodies, Vec3::Zero());
  Equilibrium eq;
  std::vector<double> rhs;
  auto add_rows = [&](int b, int dofs, const Vec6& f) {
    if (first_row[b] >= 0) return;
    first_row[b] = static_cast<int>(rhs.size());
    for (int d = 0; d < dofs; ++d) {
      eq.row_body.push_back(b);
      eq.row_dof.push_back(dofs == 1 ? -1 : d);
      rhs.push_back(dofs == 1 ? -f(0) : (d < 2 ? -f(d) : -f(5)));
    }
  };
  for (const WallLoad& w : step.walls) {
    if (w.control != WallControl::force) continue;
    wall_direction[w.body] = w.direction;
    add_rows(w.body, 1, Vec6::Constant(w.value));
  }
  for (const Contact& c : row_contacts ? *row_contacts : contacts) {
    for (int b : {c.body_a, c.body_b}) {
      if (world.bodies[b].is_dynamic()) add_rows(b, kParticleRows, load[b]);
    }
  }
  std::vector<Eigen::Triplet<double>> triplets;
  for (int i = 0; i < static_cast<int>(contacts.size()); ++i) {
    const Contact& c = contacts[i];
    for (int side = 0; side < 2; ++side) {
      const int b = side == 0 ? c.body_a : c.body_b;
      if (first_row[b] < 0) continue;
      const double sign = side == 0 ? -1.0 : 1.0;
      const Vec3 lever = c.point - world.bodies[b].position;
      for (int col = 0; col < 2; ++col) {
        const Vec3 f = sign * (col == 0 ? c.normal : c.tangent1);
        if (world.bodies[b].is_dynamic()) {
          triplets.emplace_back(first_row[b], 2 * i + col, f.x());
          triplets.emplace_back(first_row[b] + 1, 2 * i + col, f.y());
          triplets.emplace_back(first_row[b] + 2, 2 * i + col, cross2(lever, f));
        } else {
          triplets.emplace_back(first_row[b], 2 * i + col, wall_direction[b].dot(f));
        }
      }
    }
  }
  SparseMatrix full(static_cast<int>(rhs.size()), 2 * static_cast<int>(contacts.size()));
  full.setFromTriplets(triplets.begin(), triplets.end());
  // Keep the rows some force reaches (or that carry a load: the solve then reports them).
  std::vector<int> kept;
  for (int r = 0; r < full.rows(); ++r) {
    if (full.row(r).norm() > 0.0 || rhs[r] != 0.0) kept.push_back(r);
  }
  std::vector<Eigen::Triplet<double>> kept_triplets;
  for (int k = 0; k < static_cast<int>(kept.size()); ++k) {
    for (SparseMatrix::InnerIterator it(full, kept[k]); it; ++it)
      kept_triplets.emplace_back(k, static_cast<int>(it.col()), it.value());
  }
  eq.matrix.resize(static_cast<int>(kept.size()), full.cols());
  eq.matrix.setFromTriplets(kept_triplets.begin(), kept_triplets.end());
  eq.rhs.resize(static_cast<int>(kept.size()));
  std::vector<int> body, dof;
  for (int k = 0; k < static_cast<int>(kept.size()); ++k) {
    eq.rhs(k) = rhs[kept[k]];
    body.push_back(eq.row_body[kept[k]]);
    dof.push_back(eq.row_dof[kept[k]]);
  }
  eq.row_body = std::move(body);
  eq.row_dof = std::move(dof);
  return eq;
}

// The particles of the problem none of whose contacts carries a force above `threshold` (the
// solver's resolution): their displacement is not determined by eq. 4.16. With every force on a
// particle zero, its equilibrium rows hold for any multiplier that keeps its contacts
// admissible (dual degeneracy), and where the particle can move away from all of them (a
// particle on a free surface, or held by two contacts in line) that set is unbounded: the
// interior point method returns a point deep inside it, tens to thousands of metres away (in a
// biaxial sample of 200 disks). The dynamic problem (Krabbenhoft/NURBS chapter eq. 4.15), whose
// limit dt -> infinity eq. 4.16 is, moves a particle at rest only by the forces on it,
// theta dt^2 M^-1 H f: such a particle stays where it is.
std::vector<bool> idle_particles(const World& world, const std::vector<Contact>& contacts,
                                 const VecX& forces, double threshold) {
  const int bodies = static_cast<int>(world.bodies.size());
  std::vector<bool> idle(bodies, true);
  for (int i = 0; i < static_cast<int>(contacts.size()); ++i) {
    if (forces.segment<2>(2 * i).norm() <= threshold) continue;
    idle[contacts[i].body_a] = false;
    idle[contacts[i].body_b] = false;
  }
  return idle;
}

// E of the relaxed equilibrium rows (force_problem.hpp): M_bar = M / dt^2 on the translation
// rows, J / dt^2 on the rotation rows of each particle (eq. 4.5 with theta = 1), 0 on the rows of
// force-driven walls (no mass) and where the body's inverse mass is 0 (a locked rotation: its
// moment is carried by the lock, as eq. 4.16 has it).
VecX dynamic_relaxation(const World& world, const Equilibrium& eq, double pseudo_time_step) {
  VecX relaxation = VecX::Zero(static_cast<int>(eq.row_body.size()));
  for (int r = 0; r < relaxation.size(); ++r) {
    const int dof = eq.row_dof[r];
    if (dof < 0) continue;
    const InverseMass inverse = inverse_mass(world.bodies[eq.row_body[r]], world.dimension);
    const double inverse_entry = dof < 2 ? inverse.linear(dof) : inverse.angular(2, 2);
    if (inverse_entry > 0.0)
      relaxation(r) = 1.0 / (inverse_entry * pseudo_time_step * pseudo_time_step);
  }
  return relaxation;
}

struct Displacements {
  std::vector<Vec3> move;    // translation per body, m
  std::vector<double> turn;  // rotation about z per body, rad
  // The displacement of the body's material point at `point` (linearised, as eq. 4.16's gaps).
  Vec3 at(const World& world, int b, const Vec3& point) const {
    const Vec3 r = point - world.bodies[b].position;
    return move[b] + turn[b] * Vec3(-r.y(), r.x(), 0.0);
  }
};

// The step's displacements: minus the multipliers of the equilibrium rows (eq. 4.8 without the
// inertia terms) and the prescribed wall displacements.
Displacements step_displacements(const World& world, const Equilibrium& eq, const VecX& multipliers,
                                 const LoadStep& load) {
  const int bodies = static_cast<int>(world.bodies.size());
  Displacements d{std::vector<Vec3>(bodies, Vec3::Zero()), std::vector<double>(bodies, 0.0)};
  for (int r = 0; r < static_cast<int>(eq.row_body.size()); ++r) {
    const int b = eq.row_body[r];
    const double u = -multipliers(r);
    if (eq.row_dof[r] < 0) {
      for (const WallLoad& w : load.walls) {
        if (w.body == b) d.move[b] = u * w.direction;
      }
    } else if (eq.row_dof[r] < 2) {
      d.move[b](eq.row_dof[r]) = u;
    } else {
      d.turn[b] = u;
    }
  }
  for (const WallLoad& w : load.walls) {
    if (w.control == WallControl::displacement) d.move[w.body] = w.value * w.direction;
  }
  return d;
}

// Holds the idle particles in place where that keeps every contact of theirs admissible: the
// linearised gap g0 + n.(u_b - u_a) of each, with the particle held and its neighbours moved,
// at least -tolerance (their forces are zero, so no elastic overlap either). An idle particle
// whose neighbour moved towards it relied on its own displacement to make room (eq. 4.16
// satisfied the gaps jointly); holding it then would leave an overlap that the next step has
// to push apart (the angular biaxial runs measured 0.05-0.5 m at the start of a step), so it
// moves by eq. 4.16's displacement, which the rattler test has bounded by its gaps. Idle
// particles are visited in body order; a held one counts as fixed for those after it.
void hold_idle(const World& world, const std::vector<Contact>& contacts,
               const std::vector<bool>& idle, double tolerance, Displacements& d,
               QuasiStaticReport& report) {
  const int bodies = static_cast<int>(world.bodies.size());
  std::vector<std::vector<int>> touching(bodies);
  for (int i = 0; i < static_cast<int>(contacts.size()); ++i) {
    touching[contacts[i].body_a].push_back(i);
    touching[contacts[i].body_b].push_back(i);
  }
  for (int b = 0; b < bodies; ++b) {
    if (!world.bodies[b].is_dynamic() || !idle[b] || touching[b].empty()) continue;
    const Vec3 move = d.move[b];
    const double turn = d.turn[b];
    d.move[b].setZero();
    d.turn[b] = 0.0;
    const bool admissible = std::all_of(touching[b].begin(), touching[b].end(), [&](int i) {
      const Contact& c = contacts[i];
      return c.gap +
                 c.normal.dot(d.at(world, c.body_b, c.point) - d.at(world, c.body_a, c.point)) >=
             -tolerance;
    });
    if (admissible) {
      ++report.idle_particles;
    } else {
      d.move[b] = move;
      d.turn[b] = turn;
      ++report.idle_released;
    }
  }
}

// Moves the bodies by the step's displacements (velocities stay zero).
void apply_displacements(World& world, const Displacements& d) {
  for (int b = 0; b < static_cast<int>(world.bodies.size()); ++b) {
    RigidBody& body = world.bodies[b];
    body.position += d.move[b];
    if (d.turn[b] != 0.0)
      body.orientation =
          (Quat(Eigen::AngleAxisd(d.turn[b], Vec3::UnitZ())) * body.orientation).normalized();
    if (body.is_dynamic()) body.set_velocity(Vec6::Zero());
  }
}

// The displacement guard: the largest motion of a point of each particle in the step
// (|u| + |omega| x the reach of its shape about the body's centre), counted where it exceeds
// the collision margin. The step's contacts were those within the margin at x0 (eq. 4.16 is
// linearised there), so such a particle may have passed through a neighbour whose contact was
// not in the problem; the step reports it rather than refusing it (a rattler's or an idle
// particle's displacement is zero by construction (a released idle particle's is bounded by its
// gaps), so this is the particles that carry force or whose displacement eq. 4.16 leaves free along
// a neutral direction).
void guard_motion(const World& world, const Displacements& d, double margin,
                  QuasiStaticReport& report) {
  for (int b = 0; b < static_cast<int>(world.bodies.size()); ++b) {
    const RigidBody& body = world.bodies[b];
    if (!body.is_dynamic()) continue;
    // A sphere (a disk in the plane) turning about its centre moves no point of its outline.
    const bool round = std::holds_alternative<Sphere>(body.shape.geometry);
    const double reach =
        body.shape.offset.norm() + (round ? 0.0 : bounding_radius(body.shape.geometry));
    const double motion = d.move[b].norm() + std::abs(d.turn[b]) * reach;
    report.largest_motion = std::max(report.largest_motion, motion);
    if (motion > margin) ++report.overshooting_particles;
  }
}

// The total force of the contacts on a wall (body b receives +f, body a -f).
Vec3 wall_force(const std::vector<Contact>& contacts, const VecX& forces, int wall) {
  Vec3 total = Vec3::Zero();
  for (int i = 0; i < static_cast<int>(contacts.size()); ++i) {
    const Contact& c = contacts[i];
    const Vec3 f = forces(2 * i) * c.normal + forces(2 * i + 1) * c.tangent1;
    if (c.body_b == wall) total += f;
    if (c.body_a == wall) total -= f;
  }
  return total;
}

}  // namespace

void QuasiStaticOptions::validate(const World& world) const {
  contact.validate(world);
  collision.validate();
  interior_point.validate();
  if (!(dynamic_force_limit > 0.0))
    throw InputError("dynamic_force_limit must be > 0 N (infinity: no limit), got " +
                     std::to_string(dynamic_force_limit));
  if (max_relaxation_steps < 0)
    throw InputError("max_relaxation_steps must be >= 0, got " +
                     std::to_string(max_relaxation_steps));
  if (!(pseudo_time_step > 0.0))
    throw InputError(
        "pseudo_time_step must be > 0 s (infinity: the static problem eq. 4.16), got " +
        std::to_string(pseudo_time_step));
  const int n = static_cast<int>(world.bodies.size());
  for (const auto& [name, index] :
       {std::pair{"box.left", box.left}, std::pair{"box.right", box.right},
        std::pair{"box.bottom", box.bottom}, std::pair{"box.top", box.top}}) {
    if (index < -1 || index >= n)
      throw InputError(std::string(name) + ": no body " + std::to_string(index));
  }
}

QuasiStaticDriver::QuasiStaticDriver(World& world, QuasiStaticOptions options)
    : world_(world), options_(std::move(options)) {
  world_.validate();
  if (!world_.is_planar())
    throw InputError(
        "quasi-static driver: two-dimensional only (Krabbenhoft/NURBS chapter Sec. 4.2); set "
        "dimension 2");
  options_.validate(world_);
}

void QuasiStaticDriver::resume(variational::ShearHistory history, long steps_taken) {
  if (steps_taken < 0) throw InputError("quasi-static driver: resume at a negative step count");
  history_ = std::move(history);
  steps_ = steps_taken;
}

QuasiStaticReport QuasiStaticDriver::solve_step(const LoadStep& load, double pseudo_time_step,
                                                double dynamic_force_limit, double motion_limit) {
  const int bodies = static_cast<int>(world_.bodies.size());
  std::vector<Vec6> particle_load(bodies, Vec6::Zero());
  for (int b = 0; b < bodies; ++b) {
    if (options_.gravity && world_.bodies[b].is_dynamic())
      particle_load[b] = world_.external_force(b);
  }
  QuasiStaticReport report;
  // With a pseudo-time step eq. 4.15 bounds every particle's displacement by its dynamic force,
  // so no rattler is taken out: a neighbour moving into one pushes it aside. Taken out, its
  // contacts left the step, and the neighbours moved into it (the rigid disk biaxial run at
  // the published scale kept 37 overlaps deeper than 5 cm, the deepest 0.87 m).
  const bool from_rest = std::isfinite(pseudo_time_step);
  const std::vector<Contact> detected =
      from_rest
          ? detect_contacts(world_, options_.collision)
          : without_rattlers(world_, detect_contacts(world_, options_.collision), particle_load,
                             load, options_.contact.frictional, report.rattlers);

  // The prescribed wall displacements enter the gaps: g = g0 + H^T dx_walls.
  VecX wall_motion = VecX::Zero(kBodyDofs * bodies);
  double largest_wall_motion = 0.0;
  for (const WallLoad& w : load.walls) {
    if (w.control != WallControl::displacement) continue;
    wall_motion.segment<3>(kBodyDofs * w.body) = w.value * w.direction;
    largest_wall_motion = std::max(largest_wall_motion, std::abs(w.value) * w.direction.norm());
  }
  const std::vector<variational::ContactKey> detected_keys = variational::contact_keys(detected);
  variational::ForceProblem whole = variational::contact_force_problem(
      world_, detected, wall_motion, options_.contact, history_, detected_keys);
  if (!options_.contact.rigid_tangential())
    report.persistent_contacts = history_.persistent(detected_keys);
  for (const WallLoad& w : load.walls) {
    if (w.control == WallControl::force && w.value != 0.0 && !touches(detected, w.body))
      throw SimulationError("quasi-static step: wall body " + std::to_string(w.body) + " (" +
                            world_.bodies[w.body].name + ") carries a force " +
                            std::to_string(w.value) +
                            " N and touches no particle within the collision margin: no static "
                            "equilibrium (Krabbenhoft/NURBS chapter eq. 4.16)");
  }
  // Force scale of the stop test: the loads, or the force of a contact compressed by the
  // step's displacement scale (when the loads are zero and the sample gives way, every force
  // may vanish).
  const Equilibrium loads = equilibrium(world_, {}, particle_load, load, &detected);
  whole.force_scale = loads.rhs.size() > 0 ? loads.rhs.cwiseAbs().maxCoeff() : 0.0;
  if (whole.compliance.size() > 0 && !detected.empty()) {
    const double mean_compliance = whole.compliance.sum() / whole.compliance.size();
    const double scale = whole.linear.cwiseAbs().maxCoeff();
    whole.force_scale =
        std::max(whole.force_scale, (scale > 0.0 ? scale : whole.length_scale) / mean_compliance);
  }
  const auto solved = [this](const conic::InteriorPointStats& ipm) {
    return ipm.status == conic::InteriorPointStatus::converged ||
           (ipm.status == conic::InteriorPointStatus::numerical_limit &&
            std::max({ipm.primal_residual, ipm.equality_residual, ipm.complementarity}) <=
                options_.interior_point.tolerance);
  };

  // Contact screening (QuasiStaticOptions::screen_contacts, contact_screening.hpp) of a step
  // of eq. 4.15 from rest: first the contacts that carry a shear history, whose gap the walls'
  // displacement could close twice over, or of a force-driven wall (it has no inertia: its
  // load needs its contacts); the rest are proven open or join.
  std::vector<char> working(detected.size(), 1);
  if (options_.screen_contacts && from_rest) {
    whole.displacement_scale = variational::stop_displacement_scale(whole);
    const double resolution = variational::history_resolution(
        history_, options_.interior_point.tolerance, whole.force_scale);
    std::vector<char> force_wall(bodies, 0);
    for (const WallLoad& w : load.walls) force_wall[w.body] = w.control == WallControl::force;
    for (std::size_t i = 0; i < detected.size(); ++i) {
      const Contact& c = detected[i];
      working[i] = c.gap <= kScreeningMotionFactor * largest_wall_motion || force_wall[c.body_a] ||
                   force_wall[c.body_b] || history_.carried_force(detected_keys[i]) > resolution;
    }
  }
  std::vector<int> chosen, left_out;
  variational::ForceProblem problem;
  variational::ForceSolution solution;
  Equilibrium eq;
  for (;;) {
    variational::split_contacts(working, chosen, left_out);
    report.contacts = variational::pick(detected, chosen);
    problem = variational::select_contacts(whole, chosen);
    // Idle particles are told by forces below the tolerance (idle_particles).
    problem.degenerate_contact_floor = false;
    eq = equilibrium(world_, report.contacts, particle_load, load, &detected);
    problem.equality = eq.matrix;
    problem.equality_rhs = eq.rhs;
    if (from_rest) problem.equality_relaxation = dynamic_relaxation(world_, eq, pseudo_time_step);
    solution = variational::solve_force_problem(problem, options_.interior_point);
    report.solve_seconds += solution.wall_seconds;
    ++report.screening_rounds;
    if (left_out.empty()) break;
    if (!solved(solution.stats)) {
      // A part of the problem can be harder than the whole (a particle free of the contacts
      // that would hold it moves far): the whole problem decides.
      working.assign(detected.size(), 1);
      continue;
    }
    // The left-out contacts' displacement beyond the walls' (already in whole.linear).
    const Displacements step = step_displacements(world_, eq, solution.multipliers, load);
    VecX moved = VecX::Zero(kBodyDofs * bodies);
    for (int b = 0; b < bodies; ++b) {
      moved.segment<3>(kBodyDofs * b) = step.move[b];
      moved(kBodyDofs * b + 5) = step.turn[b];
    }
    moved -= wall_motion;
    if (!variational::admit_closing_contacts(
            world_, detected, whole, left_out, moved,
            options_.interior_point.tolerance * whole.displacement_scale, working))
      break;
  }
  report.screened_contacts = static_cast<long>(left_out.size());
  const std::vector<Contact>& contacts = report.contacts;
  const int n = static_cast<int>(contacts.size());
  const std::vector<variational::ContactKey> keys = variational::pick(detected_keys, chosen);
  report.interior_point = solution.stats;
  const conic::InteriorPointStats& ipm = solution.stats;
  report.solved = solved(ipm);
  report.numerical_limit_solves =
      report.solved && ipm.status == conic::InteriorPointStatus::numerical_limit ? 1 : 0;
  report.forces = n > 0 ? solution.forces : VecX::Zero(0);
  Displacements moved{std::vector<Vec3>(bodies, Vec3::Zero()), std::vector<double>(bodies, 0.0)};
  if (report.converged()) {
    // The solver's resolution of a force: its stop test leaves an inactive contact a force of
    // about tolerance x the force scale (force_problem.hpp).
    const double resolution = options_.interior_point.tolerance * problem.force_scale;
    moved = step_displacements(world_, eq, solution.multipliers, load);
    if (problem.equality_relaxation.size() > 0) {
      // Eq. 4.15 determines every particle's displacement (its dynamic forces): none is idle.
      report.largest_dynamic_force =
          problem.equality_relaxation.cwiseProduct(solution.multipliers).cwiseAbs().maxCoeff();
      if (report.largest_dynamic_force > dynamic_force_limit) {
        report.in_equilibrium = false;
        report.message =
            "quasi-static step: no static equilibrium: a dynamic force of " +
            std::to_string(report.largest_dynamic_force) +
            " (N or N m) exceeds dynamic_force_limit = " + std::to_string(dynamic_force_limit) +
            " (eq. 4.15 from rest; eq. 4.16 has no solution nearby)";
        guard_motion(world_, moved, options_.collision.margin, report);  // the motion refused
        moved.move.assign(bodies, Vec3::Zero());
        moved.turn.assign(bodies, 0.0);
      }
    } else {
      const std::vector<bool> idle = idle_particles(world_, contacts, report.forces, resolution);
      // Gaps to the solver's resolution in length: its stop test relative to the gaps' scale.
      hold_idle(world_, contacts, idle, options_.interior_point.tolerance * problem.length_scale,
                moved, report);
    }
    if (report.in_equilibrium) {
      guard_motion(world_, moved, options_.collision.margin, report);
      if (report.largest_motion > motion_limit) {
        report.in_equilibrium = false;
        report.message = "quasi-static step: a point moved by " +
                         std::to_string(report.largest_motion) + " m, more than " +
                         std::to_string(motion_limit) + " m: the step is not applied";
      } else {
        apply_displacements(world_, moved);
        if (!options_.contact.rigid_tangential())
          history_.store(keys, contacts, variational::tangential_forces(solution, n));
      }
    }
  } else {
    report.message = report.interior_point.message;
  }
  for (const WallLoad& w : load.walls) {
    report.walls.push_back({w.body, world_.bodies[w.body].position,
                            moved.move[w.body].dot(w.direction),
                            wall_force(contacts, report.forces, w.body)});
  }
  const SampleBox& box = options_.box;
  if (box.left >= 0 && box.right >= 0)
    report.width = world_.bodies[box.right].position.x() - world_.bodies[box.left].position.x();
  if (box.bottom >= 0 && box.top >= 0)
    report.height = world_.bodies[box.top].position.y() - world_.bodies[box.bottom].position.y();
  report.area = report.width * report.height;
  return report;
}

const QuasiStaticReport& QuasiStaticDriver::step(const LoadStep& load) {
  check_load(world_, load);
  QuasiStaticReport report =
      options_.max_relaxation_steps > 0
          ? relaxed_step(load)
          : solve_step(load, options_.pseudo_time_step, options_.dynamic_force_limit,
                       std::numeric_limits<double>::infinity());
  report.step = steps_ + 1;
  ++steps_;
  report_ = std::move(report);
  return report_;
}

// Kinetic relaxation (QuasiStaticOptions::max_relaxation_steps). A load step of eq. 4.15 from
// rest whose dynamic forces exceed the limit found no static equilibrium near the start: the
// load starts a rearrangement (a chain buckles, a particle is squeezed out of a closing gap).
// The load goes on in one step of eq. 4.15, and the rearrangement is followed by steps of eq.
// 4.15 from rest under the loaded boundary (displacement-driven walls held, force-driven ones
// loaded) until the dynamic forces are below the limit; that last step reports the
// equilibrium. No step that moves a point beyond the collision margin is applied (it may have
// crossed contacts outside its problem, and the overlaps it would leave make the next steps
// violent): it is taken again with a shorter dt, in which the displacement-driven walls move by
// the same fraction of their displacement (their rate stays the load step's; the rest of it
// follows in the next steps). The motion of a fixed dynamic force scales with
// dt^2, so each dt is the last one times sqrt(target / motion), target half the margin; once
// the rearrangement slows the steps lengthen again (at most doubling per step, the usual
// safeguard of a step-size controller, and never beyond the load step's dt) instead of creeping
// at the shortest dt. A solve that fails is taken again with a quarter of the dt, and the steps
// of the load step then lengthen to at most half the dt that failed: where the walls' motion of
// that dt locks a rigid sample (its linearised gaps admit no displacement; the interior point
// method's iterates run off, stopped by its stall rule), it would fail there again, at the cost
// of a solve each time (the rigid disk sample of the published biaxial test: 19-32 solves per
// load step with the dt doubling back into the failure, 10-16 with the cap and the stall rule).
// Where the steps run out, or the dt falls below kShortestRelaxation of the load step's, the world
// and the shear history return to the start of the load step: nothing of it is applied.
QuasiStaticReport QuasiStaticDriver::relaxed_step(const LoadStep& load) {
  const double dt = options_.pseudo_time_step;
  const double margin = options_.collision.margin;
  const double unlimited = std::numeric_limits<double>::infinity();
  QuasiStaticReport report = solve_step(load, dt, unlimited, margin);
  if (report.converged() && report.largest_dynamic_force <= options_.dynamic_force_limit)
    return report;
  long limit_solves = report.numerical_limit_solves;
  std::vector<RigidBody> start_bodies = world_.bodies;
  const variational::ShearHistory start_history = history_;
  std::vector<double> wall_travel(load.walls.size(), 0.0);
  // The part of the load step's wall displacement that a step of dt_k applies: dt_k / dt of it,
  // the walls moving at the load step's rate (below); 0 once all of it is on (the
  // displacement-driven walls held, the force-driven ones loaded).
  const auto part_of_load = [&](double fraction) {
    LoadStep part = load;
    for (WallLoad& w : part.walls) {
      if (w.control == WallControl::displacement) w.value *= fraction;
    }
    return part;
  };
  const bool moves_walls = std::any_of(load.walls.begin(), load.walls.end(), [](const WallLoad& w) {
    return w.control == WallControl::displacement && w.value != 0.0;
  });
  const double target = 0.5 * margin;
  double step_dt = dt;
  // Half the dt of the last failed solve: the steps do not lengthen back to a dt that failed in
  // this load step (a rigid sample that the walls' motion of that dt locks fails there again).
  double longest_dt = dt;
  double applied = 0.0, fraction = 1.0;  // of the displacement, on so far and in the last solve
  long relaxations = 0;
  bool loaded = false, relaxed = false;
  std::string why;
  for (;;) {
    // report holds the last solve: applied, refused (beyond the margin) or failed.
    double factor = 2.0;
    if (!report.solved) {
      // A failed solve is taken again with a quarter of the dt: the dynamic rows M / dt^2 then
      // weigh more against the contacts (eq. 4.15), and the step moves less.
      if (relaxations >= options_.max_relaxation_steps || step_dt < kShortestRelaxation * dt) {
        why = report.message;
        break;
      }
      factor = 0.25;
      longest_dt = 0.5 * step_dt;
    } else {
      if (report.in_equilibrium) {  // applied
        for (std::size_t k = 0; k < load.walls.size(); ++k)
          wall_travel[k] += report.walls[k].displacement;
        applied += fraction;
        loaded = applied >= 1.0 - 1e-12;
        if (loaded && report.largest_dynamic_force <= options_.dynamic_force_limit) {
          relaxed = true;
          break;
        }
      } else if (step_dt < kShortestRelaxation * dt) {
        // Refused for its motion at a dt whose inertial motion is a millionth of the load
        // step's (and whose part of the walls' displacement a thousandth): a force-driven wall
        // forces it through rigid contacts, which no dt changes; a shorter load step does.
        why = "the walls move a point by " + std::to_string(report.largest_motion) +
              " m whatever the dt, beyond the collision margin: the load step is too long";
        break;
      }
      if (relaxations >= options_.max_relaxation_steps) {
        why = std::to_string(relaxations) +
              " relaxation steps did not bring the dynamic forces below the limit";
        break;
      }
      const double motion = report.largest_motion;
      if (motion > 0.0) factor = std::min(std::sqrt(target / motion), 2.0);
    }
    step_dt = std::min(longest_dt, step_dt * factor);
    // The displacement-driven walls move at the load step's rate: a step of step_dt applies
    // step_dt / dt of their displacement (what remains of it at most), so that a shorter dt
    // resolves a fast motion of the particles without moving the walls faster. Moved by the
    // whole displacement in a short step, rigid contacts force the same motion whatever the
    // dt, and elastic ones take the displacement into their overlaps while the particles'
    // inertia M / dt^2 holds them (in the quick angular biaxial sample at k_N = 1e8, a wall
    // force of 6.7e5 N at dt / 300 against 1.0e3 N at equilibrium), and the stored energy then
    // drives a rearrangement that unloads the wall. Once the displacement is on, the walls are
    // held.
    fraction = loaded ? 0.0 : moves_walls ? std::min(1.0 - applied, step_dt / dt) : 1.0;
    report = solve_step(part_of_load(fraction), step_dt, unlimited, margin);
    ++relaxations;
    limit_solves += report.numerical_limit_solves;
  }
  // The last step is the equilibrium: its dynamic forces are below the limit (at a dt at most
  // the load step's, so its motion is at most the one that dt allows).
  if (relaxed) {
    for (std::size_t k = 0; k < load.walls.size(); ++k)
      report.walls[k].displacement = wall_travel[k];
  }
  report.relaxation_steps = relaxations;
  report.numerical_limit_solves = limit_solves;
  if (!relaxed) {
    world_.bodies = std::move(start_bodies);
    history_ = start_history;
    report.in_equilibrium = false;
    report.message = "quasi-static step: kinetic relaxation found no equilibrium (" + why +
                     "): the load step is not applied";
  }
  return report;
}

}  // namespace moreau
