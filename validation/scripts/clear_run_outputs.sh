#!/bin/sh
# scripts/clear_run_outputs.py, which the main job runs before a scale: the last run's results
# go, the checkpoints of a run that resumes stay, and a test list it cannot read is an error.
#   clear_run_outputs.sh SCRIPT WORK_DIR
set -eu
script=$1
work=$2
rm -rf "$work"
out=$work/full
mkdir -p "$out/straight/checkpoints" "$out/resuming/checkpoints/dem" "$out/resuming/figures"
touch "$out/straight/results.json" "$out/straight/checkpoints/checkpoint_10.json" \
  "$out/resuming/results.json" "$out/resuming/checkpoints/dem/checkpoint_10.json" \
  "$out/resuming/draft_series.csv" "$out/stray.txt"
cat > "$work/tests.json" <<JSON
{"kind": "ctestInfo", "tests": [
  {"name": "straight", "command": ["exe", "--scale", "full", "--output", "$out/straight"]},
  {"name": "resuming", "command": ["exe", "--resume", "--output", "$out/resuming"]},
  {"name": "unit", "command": ["unit_test"]}]}
JSON
/usr/bin/python3 "$script" "$out" "$work/tests.json" > "$work/printed.txt"
fail() { echo "FAIL: $1" >&2; exit 1; }
[ -f "$out/resuming/checkpoints/dem/checkpoint_10.json" ] || fail "the resuming run's checkpoint is gone"
for gone in straight stray.txt resuming/results.json resuming/draft_series.csv resuming/figures; do
  [ ! -e "$out/$gone" ] || fail "$gone was kept"
done
grep -q "kept $out/resuming/checkpoints" "$work/printed.txt" || fail "the kept folder was not named"
[ "$(wc -l < "$work/printed.txt")" -eq 1 ] || fail "more than one folder was named as kept"
# A missing folder is nothing to clear.
/usr/bin/python3 "$script" "$work/absent" "$work/tests.json"
# A test list that is not JSON: exit status 2 and a message naming the file; nothing removed.
echo "not json" > "$work/broken.json"
status=0
/usr/bin/python3 "$script" "$out" "$work/broken.json" 2> "$work/error.txt" || status=$?
[ "$status" -eq 2 ] || fail "a broken test list gave status $status"
grep -q "broken.json: cannot read the test list" "$work/error.txt" || fail "the error does not name the file"
[ -f "$out/resuming/checkpoints/dem/checkpoint_10.json" ] || fail "a broken test list removed a checkpoint"
echo "clear_run_outputs: passed"
