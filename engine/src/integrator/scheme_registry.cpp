#include "moreau/integrator/scheme_registry.hpp"

#include <algorithm>

namespace moreau {
namespace {

// Filled at static initialization by the registrars, so reached through a function (its order
// across translation units is unspecified) and kept sorted by name.
std::vector<SchemeRegistration>& registry() {
  static std::vector<SchemeRegistration> schemes;
  return schemes;
}

}  // namespace

bool register_scheme(SchemeRegistration registration) {
  std::vector<SchemeRegistration>& schemes = registry();
  const auto at = std::lower_bound(
      schemes.begin(), schemes.end(), registration.name,
      [](const SchemeRegistration& s, const std::string& name) { return s.name < name; });
  if (at != schemes.end() && at->name == registration.name)
    throw InputError("scheme '" + registration.name + "' is registered twice");
  schemes.insert(at, std::move(registration));
  return true;
}

const std::vector<SchemeRegistration>& registered_schemes() { return registry(); }

std::vector<std::string> scheme_names() {
  std::vector<std::string> names;
  for (const SchemeRegistration& scheme : registry()) names.push_back(scheme.name);
  return names;
}

const SchemeRegistration& find_scheme(const std::string& name) {
  for (const SchemeRegistration& scheme : registry())
    if (scheme.name == name) return scheme;
  std::string known;
  for (const SchemeRegistration& scheme : registry())
    known += (known.empty() ? "" : ", ") + scheme.name;
  throw InputError("unknown scheme '" + name + "'; known schemes: " + known);
}

AnySchemeOptions default_scheme_options(const std::string& name) {
  return find_scheme(name).defaults;
}

std::unique_ptr<Stepper> make_stepper(const std::string& name, World& world,
                                      const AnySchemeOptions& options,
                                      std::unique_ptr<ContactSolver> solver) {
  const SchemeRegistration& scheme = find_scheme(name);
  if (options.type() != scheme.defaults.type())
    throw InputError("scheme '" + name + "' takes " + scheme.defaults.type_name() + ", got " +
                     options.type_name());
  return scheme.make(world, options, std::move(solver));
}

}  // namespace moreau
