#!/bin/sh
# `moreau run` of the variational contact dynamics scene (Krabbenhoft/NURBS chapter eq. 4.15):
# disks and polygons fall into a box; every step's conic solve converges, the CSV files are
# written and the VTK output has the polygon outlines (polygons.pvd, VTK_POLYGON cells).
set -eu
moreau=$1
scenes=$2
work=$3
rm -rf "$work"
mkdir -p "$work"

"$moreau" run "$scenes/variational_column.json" -o "$work/column" -q
summary="$work/column/summary.json"
grep -q '"scheme": "variational_theta"' "$summary" || { echo "column: not variational_theta"; exit 1; }
grep -q '"status": "completed"' "$summary" || { echo "column: status"; exit 1; }
grep -q '"non_converged_steps": 0' "$summary" || { echo "column: a conic solve did not converge"; exit 1; }
grep -q '"solver": "ipm-direct"' "$summary" || { echo "column: solver"; exit 1; }
test -s "$work/column/bodies.csv" || { echo "column: no bodies.csv"; exit 1; }
test -s "$work/column/contacts.csv" || { echo "column: no contacts.csv"; exit 1; }
test -s "$work/column/polygons.pvd" || { echo "column: no polygons.pvd"; exit 1; }
last=$(ls "$work"/column/polygons_*.vtp | tail -1)
# Four polygon bodies, one VTK_POLYGON (type 7) cell each.
grep -q 'NumberOfPolys="4"' "$last" || { echo "column: $last does not hold the 4 polygons"; exit 1; }
# At rest after 1.5 s: every body is inside the box (0 <= x <= 0.6, y >= 0 minus the overlap).
awk -F, 'NR > 1 && $1 == 300 && $3 < 6 {
    if ($4 < 0 || $4 > 0.6 || $5 < -0.001) { print "body " $3 " left the box: " $4 ", " $5; exit 1 } }' \
  "$work/column/bodies.csv"

# A restart carries the scheme's own state (the shear history, Krabbenhoft eq. 4.8): the run
# restarted from its step-100 checkpoint ends in the same state as the uninterrupted one.
sed 's|"output": {|"output": {"checkpoint_every": 100, |' "$scenes/variational_column.json" \
  > "$work/column_checkpoints.json"
grep -q '"checkpoint_every": 100' "$work/column_checkpoints.json" ||
  { echo "restart: could not add checkpoint_every to the scene"; exit 1; }
"$moreau" run "$work/column_checkpoints.json" -o "$work/whole" -q
grep -q '"shear_history"' "$work/whole/checkpoint_100.json" ||
  { echo "restart: the checkpoint carries no shear history"; exit 1; }
"$moreau" run "$work/column_checkpoints.json" -o "$work/restarted" -q \
  --restart "$work/whole/checkpoint_100.json"
# The same bodies, time and shear history after the last step (the file's scene label aside).
grep -v '"scene"' "$work/whole/checkpoint_300.json" > "$work/whole.json"
grep -v '"scene"' "$work/restarted/checkpoint_300.json" > "$work/restarted.json"
cmp -s "$work/whole.json" "$work/restarted.json" ||
  { echo "restart: the restarted run ends in another state than the uninterrupted one"; exit 1; }
echo "variational column: completed, polygons written, restart continues exactly"
