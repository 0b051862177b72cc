#include "moreau/dem/contact_law.hpp"

#include <cmath>
#include <limits>

#include "moreau/core/error.hpp"

namespace moreau {

const OptionTable<DemMaterialLaw>& DemMaterialLaw::fields() {
  using L = DemMaterialLaw;
  static const OptionTable<L> table{
      choice_option("law", &L::law,
                    {{"hookean", NormalLaw::hookean}, {"hertzian", NormalLaw::hertzian}})
          .described("normal law F_n = k_n delta or k_n delta sqrt(delta / d)"),
      number_option("damping_ratio", &L::damping_ratio, Bounds::at_least(0.0))
          .described("normal viscous damping ratio zeta; 1 = critical"),
      bool_option("tangential", &L::tangential)
          .described("Cundall-Strack tangential spring capped by Coulomb"),
      [] {
        OptionField<L> field = number_option("tangential_stiffness_ratio",
                                             &L::tangential_stiffness_ratio, Bounds::at_least(0.0))
                                   .described("k_t / k_n");
        field.default_text = "2/7";
        return field;
      }(),
      number_option("tangential_damping_ratio", &L::tangential_damping_ratio, Bounds::at_least(0.0))
          .described("damping ratio of the tangential spring"),
  };
  return table;
}

double curvature_radius(const ShapeGeometry& geometry) {
  if (const auto* sphere = std::get_if<Sphere>(&geometry)) return sphere->radius;
  if (const auto* capsule = std::get_if<Capsule>(&geometry)) return capsule->radius;
  return std::numeric_limits<double>::infinity();
}

double PairLaw::elastic_force(double overlap) const {
  if (overlap <= 0.0) return 0.0;
  return law == NormalLaw::hookean ? stiffness * overlap
                                   : stiffness * overlap * std::sqrt(overlap / diameter);
}

double PairLaw::tangent_stiffness(double overlap) const {
  if (law == NormalLaw::hookean) return stiffness;
  return overlap <= 0.0 ? 0.0 : 1.5 * stiffness * std::sqrt(overlap / diameter);
}

double PairLaw::damping(double overlap) const {
  return 2.0 * damping_ratio * std::sqrt(tangent_stiffness(overlap) * effective_mass);
}

PairLaw pair_law(const World& world, int body_a, int body_b, const DemMaterialLaw& law) {
  const RigidBody& a = world.bodies[body_a];
  const RigidBody& b = world.bodies[body_b];
  const Material& ma = world.materials[a.material];
  const Material& mb = world.materials[b.material];
  auto compliance = [&](const Material& m, const RigidBody& body) {
    if (!(m.youngs_modulus > 0.0))
      throw InputError("DEM: material '" + m.name + "' of body '" + body.name +
                       "' needs a Young's modulus > 0");
    return (1.0 - m.poisson_ratio * m.poisson_ratio) / m.youngs_modulus;
  };
  const double effective_modulus = 1.0 / (compliance(ma, a) + compliance(mb, b));
  const double ra = curvature_radius(a.shape.geometry);
  const double rb = curvature_radius(b.shape.geometry);
  if (std::isinf(ra) && std::isinf(rb))
    throw InputError("DEM: contact between two flat shapes ('" + a.name + "', '" + b.name +
                     "') has no Hertz radius");
  const double effective_radius = std::isinf(ra) ? rb : std::isinf(rb) ? ra : ra * rb / (ra + rb);
  PairLaw out;
  out.law = law.law;
  // d of Silbert's sqrt(delta/d): the mean diameter of the pair (the sphere's diameter
  // against a flat wall); with k_n = 4/3 E* sqrt(R* d) the Hertzian law is Hertz's for any d.
  out.diameter = std::isinf(ra) ? 2.0 * rb : std::isinf(rb) ? 2.0 * ra : ra + rb;
  out.stiffness = 4.0 / 3.0 * effective_modulus * std::sqrt(effective_radius * out.diameter);
  double effective_mass;
  if (a.is_dynamic() && b.is_dynamic())
    effective_mass = a.mass * b.mass / (a.mass + b.mass);
  else
    effective_mass = a.is_dynamic() ? a.mass : b.mass;
  out.effective_mass = effective_mass;
  out.damping_ratio = law.damping_ratio;
  out.tangential_stiffness = law.tangential ? law.tangential_stiffness_ratio * out.stiffness : 0.0;
  out.tangential_damping =
      law.tangential ? 2.0 * law.tangential_damping_ratio *
                           std::sqrt(out.tangential_stiffness * 2.0 / 7.0 * effective_mass)
                     : 0.0;
  out.friction = law.tangential ? world.friction.get(a.material, b.material) : 0.0;
  return out;
}

}  // namespace moreau
