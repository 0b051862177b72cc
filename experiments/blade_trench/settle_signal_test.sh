#!/bin/sh
# A settling told to stop (SIGTERM) writes its checkpoint and ends with the "stopped" status
# (4), and the next start continues it from that checkpoint to the settled packing.
#   settle_signal_test.sh BLADE_TRENCH REFERENCE_DIR WORK_DIR
set -eu
exe=$1
reference=$2
work=$3
rm -rf "$work"
mkdir -p "$work"
fail() { echo "FAIL: $1" >&2; exit 1; }
set -- --scale quick --spheres 1200 --settle-only --threads 1 --reference "$reference" --cache "$work/cache" \
  --output "$work/out"
# 1,200 grains (the quick trench grown by --spheres): a few seconds of settling, so that the
# signal reaches it well before the fill is at rest even on a loaded machine.
# The program itself in the background (not a function: that would be a subshell, and the
# signal would end the subshell instead).
"$exe" "$@" > "$work/first.txt" 2>&1 &
pid=$!
# The first progress line: the settling is under way, before its first checkpoint (0.1 s).
tries=0
until grep -q "^settling (" "$work/first.txt" 2>/dev/null; do
  tries=$((tries + 1))
  [ "$tries" -le 600 ] || { kill -KILL "$pid"; fail "no settling progress within 60 s"; }
  sleep 0.1
done
kill -TERM "$pid"
status=0
wait "$pid" || status=$?
[ "$status" -eq 4 ] || { cat "$work/first.txt"; fail "a stopped settling exited with $status, not 4"; }
grep -q "stopped: settling stopped by a signal after a checkpoint in stage" "$work/first.txt" ||
  { cat "$work/first.txt"; fail "no 'stopped by a signal' message"; }
"$exe" "$@" > "$work/second.txt" 2>&1 || { cat "$work/second.txt"; fail "the resumed settling failed"; }
grep -q "settling: resumed in stage" "$work/second.txt" ||
  { cat "$work/second.txt"; fail "the second start did not continue from the checkpoint"; }
grep -q "spheres settled" "$work/second.txt" ||
  { cat "$work/second.txt"; fail "the second start did not settle the fill"; }
echo "settle_signal: passed"
