#!/usr/bin/python3
"""Writes the report: the verdict matrix of every published claim at both scales, then a page
per experiment.

usage: scripts/make_report.py OUTPUT_DIR RESULTS_DIR REPORT_DIR

OUTPUT_DIR (build/experiment-output) holds the quick/<experiment>/ folders with each
experiment's results.json and raw data. RESULTS_DIR (results/published) holds the recorded
published-scale runs, which the report shows for the published scale (`run_experiments.sh full`
records its fresh runs there first). The claims and their grouping by paper come from reference/<experiment>/
expected.json: entries named <claim>, <claim>_quick and <claim>_full are one claim at the
scales they apply to.

REPORT_DIR/REPORT.md opens with the matrix: per claim the published value, the measured value
and verdict at the quick and at the published scale, and per experiment the date and commit of
each run (a recorded run says how many commits older than the sources it is). Each experiment's
page (REPORT_DIR/<experiment>.md) has every check with its tolerance, source and known
difference, the measurements, and the figures drawn by scripts/figures/<experiment>.py.
"""
import importlib.util
import json
import math
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAPERS = ["Olsen & Kamrin", "Kleinert", "Dumont", "Preclik et al.", "Krabbenhoft/NURBS chapter",
          "FCLIB collection"]
VERDICTS = ["pass", "fail", "known difference", "not evaluated"]
PLURAL = {"pass": "pass", "fail": "fail", "known difference": "known differences",
          "not evaluated": "not evaluated"}


def load_figure_module(name):
    path = os.path.join(ROOT, "scripts", "figures", name + ".py")
    if not os.path.exists(path):
        return None
    spec = importlib.util.spec_from_file_location("figure_" + name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fmt(value):
    if value is None:
        return "-"
    if isinstance(value, list):
        return "[" + ", ".join(fmt(v) for v in value) + "]"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and (value == 0 or 1e-3 <= abs(value) < 1e5):
        return f"{value:.4g}"
    if isinstance(value, (int, float)) and not math.isnan(value):
        return f"{value:.3g}"
    return str(value)


def published_text(check):
    comparison = check["comparison"]
    published = check.get("published")
    if comparison == "holds":
        return "holds"
    if comparison == "at_least":
        return ">= " + fmt(published)
    if comparison == "at_most":
        return "<= " + fmt(published)
    if comparison == "range":
        return fmt(published)
    if comparison == "relative":
        return f"{fmt(published)} (+-{fmt(100 * check['tolerance'])}%)"
    return f"{fmt(published)} (+-{fmt(check['tolerance'])})"


def measured_text(check):
    measured = check.get("measured")
    if check["verdict"] == "not evaluated" and measured is None:
        return "-"
    if measured is None:
        return "not finite"
    if check["comparison"] == "holds":
        return "true" if measured == 1 else "false"
    prefix = {"lower_bound": "> ", "upper_bound": "< "}.get(check.get("measured_is"), "")
    return prefix + fmt(measured)


def verdict_text(check):
    verdict = check["verdict"]
    if check.get("stale_known_difference"):
        return "**pass, stale known-difference flag**"
    return {"fail": "**fail**"}.get(verdict, verdict)


def count_line(results):
    counts = {v: 0 for v in VERDICTS}
    for check in results["checks"]:
        counts[check["verdict"]] += 1
    stored = results.get("counts", {})
    if stored and any(stored.get(v, 0) != counts[v] for v in VERDICTS):
        raise SystemExit(f"{results['experiment']}: counts in results.json disagree with its checks")
    total = len(results["checks"])
    if counts["pass"] == total:
        return f"{total} checks, all pass"
    parts = [f"{counts[v]} {PLURAL[v]}" for v in VERDICTS if counts[v]]
    return f"{total} checks: " + ", ".join(parts)


def claim_of(name):
    for suffix in ("_full", "_quick"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def git(*args):
    try:
        return subprocess.run(["git", "-C", ROOT, *args], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def age(commit):
    """How many commits the sources are ahead of the run's commit."""
    clean = commit.replace("+modified", "")
    if clean == "unknown":
        return "commit unknown"
    count = git("rev-list", "--count", f"{clean}..HEAD")
    if count is None:
        return "commit not in this history"
    suffix = ", with local changes" if commit.endswith("+modified") else ""
    if count == "0":
        return "current sources" + suffix
    return f"{count} commit{'' if count == '1' else 's'} old" + suffix


def provenance_text(results, recorded):
    run = results.get("provenance")
    if not run:
        return "no provenance"
    commit = run["commit"]
    short = commit[:10] + ("+modified" if commit.endswith("+modified") else "")
    text = f"{run['date'][:10]}, `{short}`"
    if recorded:
        text += f" ({age(run['commit'])})"
    return text


def load(path):
    file = os.path.join(path, "results.json")
    if not os.path.exists(file):
        return None
    with open(file) as f:
        return json.load(f)


class Experiment:
    def __init__(self, name, output_dir, results_dir):
        self.name = name
        with open(os.path.join(ROOT, "reference", name, "expected.json")) as f:
            self.reference = json.load(f)
        self.paper = self.reference.get("paper", "other")
        self.quick_dir = os.path.join(output_dir, "quick", name)
        self.quick = load(self.quick_dir)
        # The published scale is always the recorded run: `run_experiments.sh full` records its
        # fresh runs before the report, and a full/ folder left in the build tree by an older
        # run must not stand in for the record.
        self.full_recorded = True
        self.full_dir = os.path.join(results_dir, name)
        self.full = load(self.full_dir)

    def claims(self):
        """Claims in the reference's order, each with its entry names by scale."""
        order = []
        by_claim = {}
        for name, entry in self.reference["values"].items():
            claim = claim_of(name)
            if claim not in by_claim:
                by_claim[claim] = {}
                order.append(claim)
            scales = entry.get("scales") or ["quick", "full"]
            for scale in scales:
                by_claim[claim][scale] = name
        return [(claim, by_claim[claim]) for claim in order]


def check_at(results, name):
    if results is None or name is None:
        return None
    for check in results["checks"]:
        if check["name"] == name:
            return check
    return None


def matrix(experiments):
    lines = ["## Verdict matrix", "",
             "Each published claim, its published value, and what this suite measures at the quick "
             "scale (run by `scripts/run_experiments.sh`) and at the published scale (the run recorded "
             "in `results/published/`, refreshed by `scripts/run_experiments.sh full`). "
             "A verdict is pass, fail, known difference (the suite knows why it differs; the "
             "experiment's page says why) or not evaluated (not at that scale, or its run is not "
             "recorded). Below each experiment's name: the date and commit of each run.", ""]
    for paper in PAPERS + sorted({e.paper for e in experiments} - set(PAPERS)):
        group = [e for e in experiments if e.paper == paper]
        if not group:
            continue
        lines += [f"### {paper}", "",
                  "| claim | published | quick | verdict | published scale | verdict |",
                  "|---|---|---|---|---|---|"]
        for e in group:
            quick_run = provenance_text(e.quick, False) if e.quick else "not run"
            full_run = provenance_text(e.full, e.full_recorded) if e.full else "no recorded run"
            quick_count = count_line(e.quick) if e.quick else ""
            full_count = count_line(e.full) if e.full else ""
            lines.append(f"| **[{e.name}]({e.name}.md)** | | {quick_run} | {quick_count} | "
                         f"{full_run} | {full_count} |")
            for claim, names in e.claims():
                quick = check_at(e.quick, names.get("quick"))
                full = check_at(e.full, names.get("full"))
                entry = e.reference["values"][names.get("quick") or names.get("full")]
                statement = (entry.get("statement") or claim).replace("|", "/")
                published = published_text({"tolerance": 0.0, **entry})
                cells = []
                for check, scale in ((quick, "quick"), (full, "full")):
                    if check is None:
                        why = ("no entry at this scale" if scale not in names else
                               "not run" if scale == "quick" else "no recorded run")
                        cells += ["-", f"not evaluated ({why})"]
                    else:
                        cells += [measured_text(check), verdict_text(check)]
                lines.append(f"| `{claim}`: {statement} | {published} | " + " | ".join(cells) + " |")
        lines.append("")
    return lines


def experiment_page(e, report_dir):
    lines = [f"# {e.name}", "", f"{e.reference.get('description', '')}", "",
             f"Paper: {e.paper}. Reference values: `reference/{e.name}/expected.json`; analysis of "
             f"the known differences: [`experiments/{e.name}/README.md`]"
             f"(../experiments/{e.name}/README.md#known-differences).", ""]
    for label, results, directory, recorded in (
            ("Quick scale", e.quick, e.quick_dir, False),
            ("Published scale", e.full, e.full_dir, e.full_recorded)):
        lines += [f"## {label}", ""]
        if results is None:
            lines += ["No run at this scale is recorded." if label.startswith("Published")
                      else "Not run.", ""]
            continue
        run = results.get("provenance", {})
        lines += [f"{count_line(results)}. Run {provenance_text(results, recorded)}"
                  f"{' (recorded in results/published/' + e.name + '/)' if recorded else ''}; "
                  f"{run.get('threads', '?')} thread{'' if run.get('threads') == 1 else 's'}, {fmt(run.get('wall_seconds'))} s wall, "
                  f"{run.get('machine', 'machine unknown')}; command `{run.get('command', '?')}`.",
                  "",
                  "| check | published | measured | verdict | source | tolerance reason |",
                  "|---|---|---|---|---|---|"]
        for c in results["checks"]:
            verdict = verdict_text(c)
            if c.get("known_difference") and c["verdict"] != "pass":
                verdict += ": " + c["known_difference"]
            if c["verdict"] == "not evaluated" and c.get("note"):
                verdict += f" ({c['note']})"
            cells = [f"`{c['name']}`: {c['statement']}", published_text(c), measured_text(c),
                     verdict, c["source"], c["tolerance_reason"]]
            lines.append("| " + " | ".join(str(x).replace("|", "/").replace("\n", " ")
                                            for x in cells) + " |")
        lines.append("")
        if results["measurements"]:
            lines += ["<details><summary>Measurements</summary>", "",
                      "| measurement | value | unit |", "|---|---|---|"]
            lines += [f"| {m['name']} | {fmt(m['value'])} | {m['unit']} |"
                      for m in results["measurements"]]
            lines += ["", "</details>", ""]
        lines += figures(e.name, directory, report_dir, "full" if label.startswith("Pub") else "quick")
    return lines


def figures(name, directory, report_dir, scale):
    module = load_figure_module(name)
    if module is None or not os.path.isdir(directory):
        return []
    # Drawn in a copy: a recorded folder stays as it was recorded.
    work = os.path.join(report_dir, "data", scale, name)
    if os.path.abspath(work) != os.path.abspath(directory):
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(directory, work, ignore=shutil.ignore_patterns("checkpoints"))
    lines = []
    try:
        drawn = module.make(work)
    except (OSError, KeyError, ValueError, IndexError) as error:
        return [f"Figures not drawn: {type(error).__name__}: {error}", ""]
    for figure in drawn:
        target = f"{name}_{scale}_{os.path.basename(figure)}"
        shutil.copyfile(os.path.join(work, figure), os.path.join(report_dir, target))
        lines += [f"![{name} {figure}]({target})", ""]
    return lines


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    output_dir, results_dir, report_dir = sys.argv[1:]
    os.makedirs(report_dir, exist_ok=True)
    names = sorted(n for n in os.listdir(os.path.join(ROOT, "reference"))
                   if os.path.exists(os.path.join(ROOT, "reference", n, "expected.json")))
    experiments = [Experiment(n, output_dir, results_dir) for n in names]
    head = git("rev-parse", "--short=10", "HEAD") or "unknown"
    lines = ["# Moreau: published results reproduced", "",
             f"Generated by `scripts/make_report.py` at sources `{head}` from the experiments' "
             "`results.json` files: the quick runs of this build and the recorded published-scale "
             "runs.", ""]
    totals = {scale: {v: 0 for v in VERDICTS} for scale in ("quick", "full")}
    for e in experiments:
        for scale, results in (("quick", e.quick), ("full", e.full)):
            if results is None:  # no run: every entry is not evaluated at this scale
                totals[scale]["not evaluated"] += len(e.reference["values"])
                continue
            for check in results["checks"]:
                totals[scale][check["verdict"]] += 1
    for scale, label in (("quick", "Quick scale"), ("full", "Published scale")):
        parts = [f"{totals[scale][v]} {PLURAL[v]}" for v in VERDICTS]
        lines.append(f"- {label}: {sum(totals[scale].values())} checks: " + ", ".join(parts) +
                     (" (the entries of experiments without a run count as not evaluated)."
                      if scale == "full" else "."))
    lines.append("")
    lines += matrix(experiments)
    for e in experiments:
        with open(os.path.join(report_dir, e.name + ".md"), "w") as out:
            out.write("\n".join(experiment_page(e, report_dir)) + "\n")
    with open(os.path.join(report_dir, "REPORT.md"), "w") as out:
        out.write("\n".join(lines) + "\n")
    print(f"report written to {os.path.join(report_dir, 'REPORT.md')}")


if __name__ == "__main__":
    main()
