// Runs a scene through the installed engine: the registries' schemes and solvers, the scene's
// stepper for its run, and the last body's height, which the test compares with the sphere's
// radius (at rest on the plane).
#include <iostream>

#include "moreau/integrator/scheme_registry.hpp"
#include "moreau/io/scene.hpp"
#include "moreau/solver/solver_registry.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: consumer SCENE\n";
    return 2;
  }
  try {
    std::cout << "schemes " << moreau::scheme_names().size() << ", solvers "
              << moreau::solver_names().size() << '\n';
    moreau::Scene scene = moreau::load_scene(argv[1]);
    const std::unique_ptr<moreau::Stepper> stepper = moreau::make_stepper(scene);
    const long steps = moreau::scene_step_count(scene, stepper->time_step());
    for (long step = 0; step < steps; ++step) stepper->step();
    const moreau::RigidBody& body = scene.world.bodies.back();
    std::cout << "scheme " << stepper->scheme() << ", " << steps << " steps, body '" << body.name
              << "' at height " << body.position.y() << '\n';
  } catch (const moreau::InputError& e) {
    std::cerr << "consumer: " << e.what() << '\n';
    return 2;
  }
  return 0;
}
