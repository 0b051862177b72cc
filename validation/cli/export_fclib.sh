#!/bin/sh
# `moreau run --export-fclib` end to end: the ball of scenes/sphere_on_plane.json lands at
# t = 0.31 s; the steps after the landing are exported, read back by `moreau fclib info`, and
# solved again by another solver to the FCLIB tolerance. Bad step lists and DEM runs are
# refused with exit status 2.
# usage: export_fclib.sh MOREAU SCENE_DIRECTORY WORK_DIRECTORY
set -eu
moreau=$1
scenes=$2
work=$3
rm -rf "$work"
"$moreau" run "$scenes/sphere_on_plane.json" -o "$work" -n 330 -q --export-fclib 300:330:10
for step in 310 320 330; do
  for kind in local global; do
    test -f "$work/fclib/step_${step}_${kind}.hdf5" || { echo "missing step $step $kind"; exit 1; }
  done
done
# Step 300 has no contact yet (the ball is still 4 cm above the floor): nothing is written.
test ! -e "$work/fclib/step_300_local.hdf5" || { echo "a step without contacts was exported"; exit 1; }
"$moreau" fclib info "$work/fclib/step_320_global.hdf5" | grep -q "dofs:       6" ||
  { echo "the global problem of one sphere must have 6 dofs"; exit 1; }
summary=$("$moreau" fclib solve "$work/fclib/step_320_global.hdf5" --solver apgd --tol 1e-10 --max-iter 10000)
echo "$summary"
echo "$summary" | grep -q '"converged": true' || { echo "APGD did not solve the exported step"; exit 1; }
status=0
"$moreau" run "$scenes/sphere_on_plane.json" -o "$work/bad" -n 3 -q --export-fclib 5:2 2>/dev/null || status=$?
test "$status" -eq 2 || { echo "a reversed range was not refused (status $status)"; exit 1; }
status=0
"$moreau" run "$scenes/sphere_on_plane.json" -o "$work/bad" -n 3 -q --method dem --export-fclib all \
  2>/dev/null || status=$?
test "$status" -eq 2 || { echo "a DEM export was not refused (status $status)"; exit 1; }
rm -rf "$work"
echo "export_fclib: ok"
