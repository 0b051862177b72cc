#!/bin/sh
# Installs the build into a fresh prefix (`cmake --install`), then builds the consumer project
# against it with find_package(Moreau) and runs it on scenes/sphere_on_plane.json: the ball ends
# at rest on the floor (height = its radius 0.05 m, within the collision margin). The installed
# `moreau` program runs from the prefix with the installed library, and so does the installed
# Python module when the build has one.
set -eu
build=$1
source=$2
work=$3
rm -rf "$work"
mkdir -p "$work"

cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
test -f "$work/prefix/lib/cmake/Moreau/MoreauConfig.cmake" || { echo "no package config"; exit 1; }
test -f "$work/prefix/include/moreau/io/scene.hpp" || { echo "no public headers"; exit 1; }
"$work/prefix/bin/moreau" schemes | grep -q '^semi_implicit_euler' ||
  { echo "the installed moreau does not run"; exit 1; }

if [ -d "$build/python/moreau" ]; then
  packages="$work/prefix/lib/python3/dist-packages"
  test -d "$packages/moreau" || { echo "the Python module is not installed"; exit 1; }
  PYTHONPATH="$packages" /usr/bin/python3 -c "
import moreau
assert moreau.__file__.startswith('$packages'), moreau.__file__
assert 'semi_implicit_euler' in [s['name'] for s in moreau.schemes()]
" || { echo "the installed Python module does not import"; exit 1; }
fi

cmake -S "$source/validation/install/consumer" -B "$work/consumer" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$work/prefix" > "$work/configure.log"
cmake --build "$work/consumer" > "$work/build.log"
# The consumer must link the installed library, not the build tree's.
ldd "$work/consumer/consumer" | grep -q "$work/prefix" ||
  { echo "consumer does not use the installed library:"; ldd "$work/consumer/consumer"; exit 1; }
output=$("$work/consumer/consumer" "$source/scenes/sphere_on_plane.json")
echo "$output"
echo "$output" | awk '/height/ { h = $NF; if (h < 0.045 || h > 0.055) { print "ball not at rest on the floor: " h; exit 1 } }'
