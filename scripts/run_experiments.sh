#!/usr/bin/env bash
# Main job: set up, build, run every experiment and write the report.
#   scripts/run_experiments.sh [quick|full|all]
#     quick: every experiment at its quick scale; full (default): also the published scale where
#     it fits the main job's budget; all: also the published-scale runs labelled "long" (days).
# The report goes to report/REPORT.md, raw results to build/experiment-output/<scale>/<name>/.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
scale=${1:-full}
case "$scale" in quick|full|all) ;; *) echo "usage: $0 [quick|full|all]" >&2; exit 2;; esac
flags=()
if [ "$scale" != quick ]; then flags+=(-DMOREAU_FULL_SCALE=ON); else flags+=(-DMOREAU_FULL_SCALE=OFF); fi
"$here/scripts/setup.sh" "$here/build" "${flags[@]}"
status=0
# Every registered experiment run: quick ones always, published-scale ones with the option.
exclude=()
if [ "$scale" != all ]; then exclude=(-LE long); fi
# --parallel: the one-thread runs share the cores; a run with more threads occupies as many
# (PROCESSORS, experiments/CMakeLists.txt), and the longest start first (COST).
(cd "$here/build" && ctest -L experiment "${exclude[@]}" --output-on-failure --parallel "$(nproc)") || status=$?
/usr/bin/python3 "$here/scripts/make_report.py" "$here/build/experiment-output" "$here/report"
exit $status
