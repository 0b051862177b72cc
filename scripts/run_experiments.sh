#!/usr/bin/env bash
# Main job: set up, build, run the experiments and write the report (report/REPORT.md).
#   scripts/run_experiments.sh [quick|full|all]
#     quick (default): every experiment at its quick scale; the report's published-scale column
#       comes from the runs recorded in results/published/ (a few minutes after the build).
#     full: also re-runs the published scale where it fits the main job (hours) and records the
#       new runs in results/published/ before the report is written.
#     all: also the published-scale runs labelled "long" (days).
# Raw results of this run go to build/experiment-output/<scale>/<name>/.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
scale=${1:-quick}
case "$scale" in quick|full|all) ;; *) echo "usage: $0 [quick|full|all]" >&2; exit 2;; esac
flags=(-DMOREAU_FULL_SCALE=OFF)
if [ "$scale" != quick ]; then flags=(-DMOREAU_FULL_SCALE=ON); fi
"$here/scripts/setup.sh" "$here/build" "${flags[@]}"
output="$here/build/experiment-output"
# A fresh run of a scale replaces the last one's results, so the report cannot mix them; the
# runs that resume (--resume: the long ones) keep their checkpoints and continue from them.
tests_json=$(cd "$here/build" && ctest --show-only=json-v1)
clear_outputs() { /usr/bin/python3 "$here/scripts/clear_run_outputs.py" "$output/$1" - <<<"$tests_json"; }
clear_outputs quick
if [ "$scale" != quick ]; then clear_outputs full; fi
status=0
labels=(-L experiment)
if [ "$scale" = quick ]; then labels+=(-LE full); elif [ "$scale" = full ]; then labels+=(-LE long); fi
# --parallel: the one-thread runs share the cores; a run with more threads occupies as many
# (PROCESSORS, experiments/CMakeLists.txt), and the longest start first (COST).
(cd "$here/build" && ctest "${labels[@]}" --output-on-failure --parallel "$(nproc)") || status=$?
if [ "$scale" != quick ]; then
  /usr/bin/python3 "$here/scripts/record_published.py" "$output/full" "$here/results/published"
fi
/usr/bin/python3 "$here/scripts/make_report.py" "$output" "$here/results/published" "$here/report"
exit $status
