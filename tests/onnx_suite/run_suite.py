#!/usr/bin/env python3
"""ONNX's own backend test suite (Debian's libonnx-testdata), run by nnplug and
by ONNX Runtime side by side, every case in its own process with a timeout.

  run_suite.py --case-tool BUILD/bin/onnx_case [--data DIR] [--jobs N]
               [--timeout S] [--sample K] [--no-ort] [--out DIR] [--update]

Prints the table of verdicts (pass, wrong, refused at load, refused at run,
crash / hang, not tensors) for each runtime, writes it and every case's
verdict to --out, and fails when a case in tests/onnx_suite/passing.txt no
longer passes in nnplug or any case crashes or hangs in nnplug. --update
writes the new passing list and the table into tests/README.md instead of
failing on a change. --sample K runs every K-th case (the sanitizer build).
Exits 77 (skipped) when the data is not installed.
"""
import argparse
import concurrent.futures
import os
import pathlib
import re
import subprocess
import sys

SUITES = ["node", "pytorch-converted", "pytorch-operator", "simple"]
COLUMNS = ["pass", "wrong", "refused at load", "refused at run", "crash / hang", "not tensors"]
CODES = {0: "pass", 10: "wrong", 11: "refused at load", 12: "refused at run", 13: "not tensors"}
HERE = pathlib.Path(__file__).resolve().parent
README = HERE.parent / "README.md"
BEGIN, END = "<!-- onnx-suite-table -->", "<!-- /onnx-suite-table -->"
# Cases whose files contradict themselves: a "wrong" answer to one is shown
# apart, with the evidence, rather than counted as wrong.
DATA_DEFECTS = {
    "node/test_adam_multiple": "its model.onnx has no epsilon attribute (ONNX's default is 1e-6), while its "
    "expected outputs were computed with epsilon 0.01 (ONNX 1.12's export dropped it)",
}


def run_case(tool, case, runtime, timeout):
    """(verdict, why) of one case in one runtime."""
    command = [tool, "--runtime", runtime, str(case)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, errors="replace")
    except subprocess.TimeoutExpired:
        return "crash / hang", f"no answer within {timeout} s"
    line = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    if done.returncode in CODES:
        return CODES[done.returncode], line.split(": ", 1)[-1]
    tail = done.stderr.strip().splitlines()[-3:]
    return "crash / hang", f"exit {done.returncode}: " + " | ".join(tail)


def table(counts, total):
    lines = [f"| {total:,} cases | " + " | ".join(COLUMNS) + " |", "| --- " * (len(COLUMNS) + 1) + "|"]
    for runtime, row in counts.items():
        cells = [f"**{row['pass']}**"] + [str(row[c]) for c in COLUMNS[1:]]
        lines.append(f"| {runtime} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--case-tool", required=True)
    parser.add_argument("--data", default="/usr/share/libonnx-testdata/data")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--timeout", type=float, default=60)
    parser.add_argument("--sample", type=int, default=1)
    parser.add_argument("--no-ort", action="store_true")
    parser.add_argument("--out", default="onnx_suite")
    parser.add_argument("--update", action="store_true")
    parser.add_argument("--only", default="", help="a regular expression cases' names must match")
    args = parser.parse_args()

    data = pathlib.Path(args.data)
    if not data.is_dir():
        print(f"onnx_suite: skipped: {data} is missing (scripts/setup.sh installs libonnx-testdata)")
        return 77
    cases = [c for s in SUITES for c in sorted((data / s).iterdir()) if (c / "model.onnx").is_file()]
    total = len(cases)
    if args.only:
        cases = [c for c in cases if re.search(args.only, c.name)]
    cases = cases[:: args.sample]
    runtimes = ["nnplug"] + ([] if args.no_ort else ["ort"])
    if "ort" in runtimes and not (HERE.parent / "onnx_runtime/node_modules/onnxruntime-node").is_dir():
        print("onnx_suite: ONNX Runtime (onnxruntime-node) is not installed: its column is left out")
        runtimes.remove("ort")
    os.environ.setdefault("NNP_ORT_CLIENT_DIR", str(HERE.parent / "onnx_runtime"))

    results = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        jobs = {pool.submit(run_case, args.case_tool, c, r, args.timeout): (c, r) for c in cases for r in runtimes}
        for job in concurrent.futures.as_completed(jobs):
            results[jobs[job]] = job.result()

    names = {c: f"{c.parent.name}/{c.name}" for c in cases}
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    counts = {r: {col: 0 for col in COLUMNS} for r in runtimes}
    defects = []
    with open(out / "verdicts.tsv", "w") as f:
        for c in cases:
            for r in runtimes:
                verdict, why = results[(c, r)]
                if verdict == "wrong" and names[c] in DATA_DEFECTS:
                    verdict, why = "data defect", DATA_DEFECTS[names[c]] + "; " + why
                    defects.append(f"{names[c]} ({r})")
                else:
                    counts[r][verdict] += 1
                f.write(f"{names[c]}\t{r}\t{verdict}\t{why}\n")
    labels = {"nnplug": "nnplug", "ort": "ONNX Runtime 1.23"}
    text = table({labels[r]: counts[r] for r in runtimes}, len(cases))
    for d in defects:
        name = d.split(" ")[0]
        text += f"\nNot counted: {d}, whose data contradicts itself: {DATA_DEFECTS[name]}.\n"
    (out / "table.md").write_text(text)
    print(text)
    print(f"every case's verdict: {out / 'verdicts.tsv'}")

    passing_now = sorted(names[c] for c in cases if results[(c, "nnplug")][0] == "pass")
    passing_file = HERE / "passing.txt"
    committed = set(passing_file.read_text().split()) if passing_file.exists() else set()
    ran = set(names.values())
    lost = sorted(n for n in committed & ran if n not in passing_now)
    crashed = [names[c] for c in cases if results[(c, "nnplug")][0] == "crash / hang"]
    if args.update:
        if args.sample != 1 or args.only:
            print("onnx_suite: --update needs every case (no --sample, no --only)")
            return 2
        passing_file.write_text("\n".join(passing_now) + "\n")
        readme = README.read_text()
        if BEGIN in readme and END in readme and len(runtimes) == 2:
            head, rest = readme.split(BEGIN, 1)
            README.write_text(head + BEGIN + "\n" + text + rest[rest.index(END):])
        print(f"onnx_suite: wrote {passing_file} ({len(passing_now)} cases) and the table in {README}")
    gained = sorted(set(passing_now) - committed)
    if gained and not args.update:
        print(f"onnx_suite: {len(gained)} cases pass that passing.txt does not list (run with --update): "
              + ", ".join(gained[:20]))
    for n in lost:
        verdict = next(results[(c, "nnplug")] for c in cases if names[c] == n)
        print(f"onnx_suite: REGRESSION {n}: {verdict[0]}: {verdict[1]}")
    for n in crashed:
        verdict = next(results[(c, "nnplug")] for c in cases if names[c] == n)
        print(f"onnx_suite: CRASH OR HANG {n}: {verdict[1]}")
    failed = len(crashed) + (0 if args.update else len(lost))
    print(f"onnx_suite: nnplug passes {counts['nnplug']['pass']} of {len(cases)} cases run "
          f"({total:,} in the suite); {len(lost)} regressions, {len(crashed)} crashes or hangs")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
