#!/bin/sh
# `moreau run` drives a scene's channel_flow section (Preclik et al. Sec. 4.3): the plane pushes
# layers in at the inlet and particles past the outlet are deleted, so the body count rises from
# the initial filling and levels off once the channel drains as fast as it is fed; no particle is
# written further past the outlet than one step's motion (the output shows the state at the end
# of a step, before the outlet deletes what crossed it in that step). A restart is refused (the inflow's state is in no
# checkpoint).
set -eu
moreau=$1
scene=$2
work=$3
rm -rf "$work"
mkdir -p "$work"

"$moreau" run "$scene" -o "$work/run" -q 2>/dev/null
grep -q '"status": "completed"' "$work/run/summary.json" || { echo "status"; exit 1; }
# Bodies per output step (every 100 steps of 10 us; the outlet is at x = 6 mm).
counts=$(awk -F, 'NR > 1 { n[$1]++ } END { for (s in n) print s, n[s] }' "$work/run/bodies.csv" |
  sort -n | awk '{ printf "%s ", $2 }')
first=$(echo "$counts" | awk '{ print $1 }')
peak=$(echo "$counts" | awk '{ m = 0; for (i = 1; i <= NF; i++) if ($i > m) m = $i; print m }')
last=$(echo "$counts" | awk '{ print $NF }')
test "$peak" -gt "$first" || { echo "no layer entered: $counts"; exit 1; }
# Once the first particles leave (after about 6 ms at 1 m/s), the count stops growing.
test "$last" -le "$peak" || { echo "no particle left: $counts"; exit 1; }
# 2e-5 m: one step of 10 us at up to 2 m/s.
awk -F, 'NR > 1 && $4 > 0.006 + 2e-5 { print "body " $3 " at x = " $4 " past the outlet"; exit 1 }' \
  "$work/run/bodies.csv"

"$moreau" run "$scene" -o "$work/checkpointed" -n 200 -q 2>/dev/null
status=0
"$moreau" run "$scene" -o "$work/restart" --restart "$work/checkpointed/summary.json" -q \
  > "$work/restart.txt" 2>&1 || status=$?
test "$status" -eq 2 || { echo "a restart of a channel flow was accepted ($status)"; exit 1; }
grep -q "cannot restart from a checkpoint" "$work/restart.txt" ||
  { echo "unexpected message: $(cat "$work/restart.txt")"; exit 1; }
echo "channel flow: bodies per output step $counts"
