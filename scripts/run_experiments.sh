#!/usr/bin/env bash
# Main job: set up, build, run every experiment and write the report.
#   scripts/run_experiments.sh [quick|full]     (default: full = published scale where registered)
# The report goes to report/REPORT.md, raw results to build/experiment-output/<scale>/<name>/.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
scale=${1:-full}
case "$scale" in quick|full) ;; *) echo "usage: $0 [quick|full]" >&2; exit 2;; esac
flags=()
if [ "$scale" = full ]; then flags+=(-DMOREAU_FULL_SCALE=ON); else flags+=(-DMOREAU_FULL_SCALE=OFF); fi
"$here/scripts/setup.sh" "$here/build" "${flags[@]}"
status=0
# Every registered experiment run: quick ones always, published-scale ones with the option.
(cd "$here/build" && ctest -L experiment --output-on-failure) || status=$?
/usr/bin/python3 "$here/scripts/make_report.py" "$here/build/experiment-output" "$here/report"
exit $status
