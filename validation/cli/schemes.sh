#!/bin/sh
# `moreau run` under every scheme from the scene files: the sliding ball of Dumont
# Sec. 4.1 (theta, NLGS-EAL) rolls from t* = 2 v0 / (7 mu g) at 5/7 v0; the Painleve rod
# (impulse_velocity, md_gs) and the sedimentation (theta) complete with converged solves; a DEM
# run; a key the scheme does not read is refused with its path.
set -eu
moreau=$1
scenes=$2
work=$3
rm -rf "$work"
mkdir -p "$work"

"$moreau" run "$scenes/sliding_ball.json" -o "$work/ball" -q
grep -q '"scheme": "theta"' "$work/ball/summary.json" || { echo "sliding ball: not theta"; exit 1; }
grep -q '"non_converged_steps": 0' "$work/ball/summary.json" ||
  { echo "sliding ball: NLGS did not converge"; exit 1; }
# Rows of the ball (body 1) every 10 steps: the first with slip |vx + R wz| < 1e-6 v0 lies in
# the output interval after t* = 2 * 1.5 / (7 * 0.7 * 9.81) = 0.062410 s; the last has 5/7 v0.
awk -F, -v R=0.005 'NR > 1 && $3 == 1 {
    slip = $11 + R * $16; if (slip < 0) slip = -slip
    if (!found && slip < 1.5e-6) { found = 1; t = $2 }
    v = $11 }
  END {
    tstar = 2 * 1.5 / (7 * 0.7 * 9.81)
    if (!found || t < tstar || t > tstar + 10 * 1e-4) { print "rolling at t = " t ", t* = " tstar; exit 1 }
    d = v - 5 / 7 * 1.5; if (d < 0) d = -d
    if (d > 1e-9) { print "final speed " v ", expected 5/7 v0"; exit 1 }
    print "sliding ball: rolling at t = " t " (t* = " tstar "), v = " v }' "$work/ball/bodies.csv"

"$moreau" run "$scenes/painleve_rod.json" -o "$work/rod" -q
grep -q '"scheme": "impulse_velocity"' "$work/rod/summary.json" || { echo "rod: scheme"; exit 1; }
grep -q '"non_converged_steps": 0' "$work/rod/summary.json" || { echo "rod: md_gs failed"; exit 1; }

"$moreau" run "$scenes/sedimentation.json" -o "$work/sed" -n 40 -q
grep -q '"scheme": "theta"' "$work/sed/summary.json" || { echo "sedimentation: scheme"; exit 1; }
grep -q '"status": "completed"' "$work/sed/summary.json" || { echo "sedimentation: status"; exit 1; }

"$moreau" run "$scenes/beam_compatible.json" -o "$work/dem" --scheme dem -n 100 -q
grep -q '"scheme": "dem"' "$work/dem/summary.json" || { echo "dem: scheme"; exit 1; }

# A key of another scheme names itself and the schemes that read it.
sed 's/"scheme": "theta", "theta": 0.5/"scheme": "semi_implicit_euler", "theta": 0.5/' \
  "$scenes/sliding_ball.json" > "$work/wrong.json"
status=0
message=$("$moreau" check "$work/wrong.json" 2>&1) || status=$?
test "$status" -eq 2 || { echo "a theta key under semi_implicit_euler was accepted"; exit 1; }
# (Both theta keys of the scene are unread; the first in key order is named.)
echo "$message" |
  grep -qE 'integrator\.(tangential_restitution|theta): not read by scheme "semi_implicit_euler"; it is a parameter of: theta' ||
  { echo "unexpected message: $message"; exit 1; }
# A bound that depends on the solver (md_gs blends with omega in (0, 1]) is checked once, at
# load time: `moreau check` refuses the scene with the same message as `moreau run`, naming the
# file, the key, the value and the interval.
sed 's/"name": "md_gs",/"name": "md_gs", "relaxation": 1.5,/' "$scenes/painleve_rod.json" \
  > "$work/omega.json"
expected='omega.json: solver.relaxation: 1.5 is outside (0, 1] for solver "md_gs"'
for command in "check" "run -q -o $work/omega"; do
  status=0
  message=$("$moreau" $command "$work/omega.json" 2>&1) || status=$?
  test "$status" -eq 2 || { echo "moreau $command accepted md_gs relaxation 1.5 ($status)"; exit 1; }
  echo "$message" | grep -qF "$expected" ||
    { echo "moreau $command: unexpected message: $message"; exit 1; }
done
# Checkpoint and restart: the theta scheme keeps no state between steps (NLGS starts from r = 0),
# so 1000 steps, a checkpoint and 1000 more give the uninterrupted run's state bit for bit.
sed 's/"output": {"every": 10/"output": {"checkpoint_every": 1000, "every": 10/' \
  "$scenes/sliding_ball.json" > "$work/ball.json"
"$moreau" run "$work/ball.json" -o "$work/half" -n 1000 -q
"$moreau" run "$work/ball.json" -o "$work/rest" -q --restart "$work/half/checkpoint_1000.json"
test "$(tail -1 "$work/rest/bodies.csv")" = "$(tail -1 "$work/ball/bodies.csv")" ||
  { echo "restart from step 1000 differs from the uninterrupted run"; exit 1; }
sed 's/"name": "ball"/"name": "sphere"/' "$work/half/checkpoint_1000.json" > "$work/bad.json"
status=0
message=$("$moreau" run "$work/ball.json" -o "$work/bad" -q --restart "$work/bad.json" 2>&1) ||
  status=$?
test "$status" -eq 2 || { echo "a checkpoint of other bodies was accepted"; exit 1; }
echo "$message" | grep -q 'bad.json: bodies\[1\].name: expected "ball"' ||
  { echo "unexpected message: $message"; exit 1; }
# The impulse-velocity scheme exports its contact problem; `fclib solve` takes the NLGS options.
"$moreau" run "$scenes/sphere_on_plane.json" -o "$work/iv" -n 320 -q --scheme impulse_velocity \
  --export-fclib 320
"$moreau" fclib solve "$work/iv/fclib/step_320_local.hdf5" --solver nlgs-eal --nlgs-alpha 0.5 \
  --tol 1e-10 | grep -q '"converged": true' || { echo "NLGS-EAL did not solve the export"; exit 1; }
status=0
"$moreau" fclib solve "$work/iv/fclib/step_320_local.hdf5" --solver pgs --nlgs-alpha 0.5 \
  2>/dev/null || status=$?
test "$status" -eq 2 || { echo "--nlgs-alpha was accepted for pgs (status $status)"; exit 1; }
# The IPM stops on Kleinert et al.'s error(gamma, u) when asked (solver.stopping); the summary
# names the measure, which every converged step keeps below the tolerance; other solvers refuse
# the key.
sed 's/"name": "apgd", "tolerance": 1e-4, "max_iterations": 500,/"name": "ipm", "tolerance": 1e-4, "max_iterations": 200, "stopping": "kleinert_error",/' \
  "$scenes/rattle_pile.json" > "$work/ipm_error.json"
"$moreau" run "$work/ipm_error.json" -o "$work/ipm_error" -n 5 -q
grep -q '"stopping_criterion": "kleinert_error"' "$work/ipm_error/summary.json" ||
  { echo "ipm: the summary does not name kleinert_error"; exit 1; }
grep -q '"non_converged_steps": 0' "$work/ipm_error/summary.json" ||
  { echo "ipm: a step did not reach error(gamma, u) 1e-4"; exit 1; }
awk -F': ' '/"max_criterion_value"/ { v = $2 + 0; if (!(v <= 1e-4 && v > 0)) { print "max error " v; exit 1 } }' \
  "$work/ipm_error/summary.json"
# The IPM's CG iterations are totalled in the summary (Kleinert et al.'s Table 1 reports them):
# each of the pile's five steps solves its contacts, at least one CG iteration per Newton step.
awk -F': ' '/"total_krylov_iterations"/ { v = $2 + 0; found = 1; if (!(v >= 5)) { print "Krylov total " v; exit 1 } }
  END { if (!found) { print "no total_krylov_iterations"; exit 1 } }' "$work/ipm_error/summary.json"
sed 's/"name": "apgd",/"name": "pgs", "stopping": "kleinert_error",/' "$scenes/rattle_pile.json" \
  > "$work/pgs_stopping.json"
status=0
message=$("$moreau" check "$work/pgs_stopping.json" 2>&1) || status=$?
test "$status" -eq 2 || { echo "pgs accepted solver.stopping"; exit 1; }
echo "$message" | grep -q 'solver.stopping: not read by solver "pgs"' ||
  { echo "unexpected message: $message"; exit 1; }
rm -rf "$work"
echo "schemes: ok"
