#!/bin/sh
# Every file of the FCLIB collection solved by `moreau fclib solve` and judged by a merit
# computed from the written file alone (scripts/fclib_independent_merit.py: own HDF5 reading,
# own reduction with M as stored, own cone projection), never by the solver's bookkeeping.
# Per file: the independent FCLIB merit must agree with the merit `moreau` reports (relative
# 1e-3, or 1e-10 absolute: both are sums of the same residuals in another order), and a run
# reported "converged" must have an independent FCLIB merit within the tolerance asked for
# (the same 1e-3 relative slack): `converged` means the FCLIB merit met --tol, whatever the
# solver's own stopping test said. A maximum-dissipation solver (md_*) solves another impact
# model than the file's Coulomb problem and must never report `converged`. The only file
# `moreau` may refuse is the rolling-friction one (spacedim 5, unsupported, exit status 2).
# usage: fclib_independent_merit.sh MOREAU DATA_DIRECTORY WORK_DIRECTORY SOLVER MAX_ITERATIONS TOLERANCE
set -eu
moreau=$1
data=$2
work=$3
solver=$4
limit=$5
tolerance=$6
here=$(cd "$(dirname "$0")" && pwd)
checker="$here/../../scripts/fclib_independent_merit.py"
rm -rf "$work"
mkdir -p "$work"
failures=0
checked=0
for file in "$data"/*.hdf5; do
  name=$(basename "$file" .hdf5)
  status=0
  summary=$("$moreau" fclib solve "$file" --solver "$solver" --tol "$tolerance" --max-iter "$limit" \
    --output "$work/$name.hdf5" 2>"$work/$name.err") || status=$?
  if [ "$status" -ne 0 ]; then
    if [ "$status" -eq 2 ] && grep -q "rolling friction" "$work/$name.err"; then
      echo "$name: refused (rolling friction), as expected"
      continue
    fi
    echo "$name: moreau failed with status $status: $(cat "$work/$name.err")"
    failures=$((failures + 1))
    continue
  fi
  reported=$(echo "$summary" | sed -n 's/.*"merit": *\([^,]*\),*/\1/p')
  converged=$(echo "$summary" | grep -c '"converged": true' || true)
  independent=$(/usr/bin/python3 "$checker" "$work/$name.hdf5" 1e300) || {
    echo "$name: the independent check could not read the written file"
    failures=$((failures + 1))
    continue
  }
  verdict=$(/usr/bin/python3 -c "
import sys
reported, independent, converged = float('$reported'), float('$independent'), $converged == 1
tolerance, other_model = float('$tolerance'), '$solver'.startswith('md_')
agree = abs(reported - independent) <= max(1e-3 * max(reported, independent), 1e-10)
solved = independent <= tolerance * (1 + 1e-3)
honest = (solved and not other_model) or not converged
print('ok' if agree and honest else
      'reported %.3e, independent %.3e, converged %s (tolerance %g)' % (reported, independent, converged, tolerance))")
  checked=$((checked + 1))
  echo "$name: $solver converged=$converged reported $reported independent $independent: $verdict"
  [ "$verdict" = ok ] || failures=$((failures + 1))
done
echo "$checked files checked, $failures failures"
test "$checked" -ge 15
test "$failures" -eq 0
