"""The interviewer's and reviewer's commands (issue 39), as ratios to a bare `python -c pass`.

Run inside the project's virtual environment:

    python benchmarks/interviewer.py [--repeat N] [--tree PATH] [--only NAME ...] [--cpu]

Each figure of the issue's table is timed in pairs with a bare interpreter (bare, command, bare,
command, ...) and the median of the per-pair ratios is printed beside the median time, with the
limit the issue sets: 20 variants of the 70B drill with their keys (again, as a second draw of
the seed finds them kept, and with nothing kept but the parsed drill), the whole variant space
of littles-law-capacity (108 variants, in seconds: the issue asks for under 15 s), `grade` of a
24-answer sheet of 4-figure wrong numbers and of a right sheet (graded for the first time, the
drill and rubrics kept by another sheet's grade; and graded again, its grade kept), and `next`,
`progress` and `review ID` against a store with one attempt. Every command runs once before it
is timed (the drill list, parsed drills and worked solutions are then kept in $KVDRILL_HOME, as
for a user's second run). The sheets are made from the key of one variant (`variants --count
1`): the right one is its answers file, the wrong one each number × 1.2345, typed to four
figures; a third, the 8B drill's right sheet with its text answers, is graded after another
candidate's shorter text answers to that drill (its rubric phrases then kept, not its words).
`import` takes three candidates' exported transcripts (each practised in a scratch
store, answered differently) into a store emptied before each run, untimed (its cache folder
kept); `cohort` compares the three in a store that holds them.

`--every-space` times instead each drill's whole variant space drawn with nothing kept (a
fresh $KVDRILL_HOME, as on a first run): the issue asks for every drill's under 15 s.

`--tree PATH` times another checkout (its `trainer` package first on the path; the commands run
in a scratch folder, so the current one's package is not imported instead): how the figures
"before" of a change are measured. Set KVDRILL_DATA to time both on the same drills. Nothing
here runs in the test suite."""

from __future__ import annotations

import argparse
import compileall
import functools
import json
import math
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAUNCH = [sys.executable, "-c", "from trainer.app.cli import main; main()"]
BARE = [sys.executable, "-c", "pass"]
DRILL = "llama2-70b-mi300x"
WHOLE_SPACE = ("littles-law-capacity", 108)
WRONG_FACTOR = 1.2345

# What the issue allows, as a ratio to the bare interpreter (the whole space: in seconds).
LIMITS = {"variants: 20 with keys": 40.0, "variants: 20 with keys, none kept": 40.0,
          "grade: 24 wrong answers, none kept": 15.0, "grade: a right sheet, none kept": 10.0,
          "grade: 24 wrong answers, graded again": 15.0,
          "grade: a right sheet, graded again": 10.0,
          "import: three transcripts": 12.0, "cohort of three": 12.0,
          "next": 8.0, "progress": 8.0, "review 1": 8.0}
WHOLE_SPACE_SECONDS = 15.0
# Three candidates' attempts of one drill, answered differently (import refuses a copy).
CANDIDATES = {"alice": "32\n8\n128\n", "bob": "30\n8\n128\n", "carol": "32\n4\n64\n"}
COHORT_DRILL = "llama31-8b-h100"
TEXT_SHEET = ROOT / "tests" / "sheets" / f"{COHORT_DRILL}-correct.yaml"
# Another candidate's answers to the 8B drill's text steps, graded before the sheet above.
OTHER_TEXTS = ("policy: cap max_model_len near the real p99 context and use an fp8 kv cache\n"
               "followup-128k-policy: a separate pool for long contexts, priced higher\n"
               "followup-observed-lower: look at kv usage and preemptions before buying\n")


def commands(folder: Path) -> dict[str, list[str]]:
    drill, count = WHOLE_SPACE
    return {
        "variants: 20 with keys": ["variants", DRILL, "--count", "20", "--out",
                                   str(folder / "twenty")],
        # the same draw with no key or worked solution kept from an earlier run (only the
        # parsed drill): what a seed drawn for the first time costs
        "variants: 20 with keys, none kept": ["variants", DRILL, "--count", "20", "--out",
                                              str(folder / "twenty-cold")],
        f"variants: whole space ({drill}, {count})": ["variants", drill, "--count", str(count),
                                                      "--out", str(folder / "whole")],
        # a sheet graded for the first time (the drill and rubrics parsed and kept by another
        # sheet's grade), then the same sheet graded again (its grade kept)
        "grade: 24 wrong answers, none kept": ["grade", DRILL, "--answers",
                                               str(folder / "wrong.yaml")],
        "grade: a right sheet, none kept": ["grade", DRILL, "--answers",
                                            str(folder / "right.yaml")],
        # a candidate's sheet with text answers (the 8B drill's right sheet), graded for the
        # first time after another candidate's sheet of the drill, worded otherwise
        "grade: a sheet with text answers, none kept": ["grade", COHORT_DRILL, "--answers",
                                                        str(TEXT_SHEET)],
        "grade: 24 wrong answers, graded again": ["grade", DRILL, "--answers",
                                                  str(folder / "wrong.yaml")],
        "grade: a right sheet, graded again": ["grade", DRILL, "--answers",
                                               str(folder / "right.yaml")],
        "import: three transcripts": ["import", *(str(folder / f"{name}.json")
                                              for name in CANDIDATES)],
        "cohort of three": ["cohort", COHORT_DRILL],
        "next": ["next"],
        "progress": ["progress"],
        "review 1": ["review", "1"],
    }


def homes(folder: Path) -> dict[str, str]:
    """The KVDRILL_HOME of the commands that do not use the shared one: `import` into a store
    emptied before each run (its parsed drills kept, as a user's second run has them), and
    `cohort` over a store that holds the three imported attempts."""
    return {"import: three transcripts": str(folder / "import-home"),
            "variants: 20 with keys, none kept": str(folder / "cold-home"),
            "grade: 24 wrong answers, none kept": str(folder / "grade-cold-home"),
            "grade: a right sheet, none kept": str(folder / "grade-cold-home"),
            "grade: a sheet with text answers, none kept": str(folder / "grade-text-home"),
            "cohort of three": str(folder / "cohort-home")}


def drill_only(home: Path, template: Path) -> None:
    """`home` as `template` left it: the drill parsed and kept, no key or solution kept."""
    shutil.rmtree(home, ignore_errors=True)
    shutil.copytree(template, home)


def fresh_store(home: Path) -> None:
    """The store of `home` removed (WAL files too); the cache folder kept."""
    for path in home.glob("kvdrill.sqlite3*"):
        path.unlink()


def seconds(argv: list[str], env: dict[str, str], cwd: Path,
            before: Callable[[], None] | None = None) -> float:
    """Wall seconds of one run of `argv` (with --cpu: its CPU seconds, user and system)."""
    if before is not None:
        before()  # not timed
    start, used = time.perf_counter(), _children_cpu()
    subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, env=env, cwd=cwd, check=False)
    return _children_cpu() - used if CPU_TIME else time.perf_counter() - start


# --cpu: time by the CPU a run uses rather than the wall clock, for a machine busy with other
# work (there a long run waits for the CPU more than a short bare one, and wall-clock ratios
# grow with the load).
CPU_TIME = False


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def paired(argv: list[str], repeat: int, env: dict[str, str], cwd: Path,
           before: Callable[[], None] | None = None) -> tuple[float, float]:
    """(median seconds of `argv`, median of its time ÷ the bare run beside it); `before` runs
    untimed before each run of `argv`."""
    times, ratios = [], []
    for _ in range(repeat):
        bare = seconds(BARE, env, cwd)
        took = seconds(argv, env, cwd, before)
        times.append(took)
        ratios.append(took / bare)
    return statistics.median(times), statistics.median(ratios)


def four_figures(value: float) -> str:
    """`value` to four significant figures, as a person types it (1,007,000; 52.37)."""
    if value == 0:
        return "0"
    magnitude = math.floor(math.log10(abs(value)))
    rounded = round(value, 3 - magnitude)
    if magnitude >= 3:
        return f"{int(rounded):,}"
    return f"{rounded:.{3 - magnitude}f}"


NUMBER = re.compile(r"^'?(-?[0-9][0-9,]*(?:\.[0-9]+)?)\s*(.*?)'?$")


def wrong_sheet(right: str) -> str:
    """The right sheet with every number × WRONG_FACTOR, to four figures, its unit kept."""
    lines = []
    for line in right.splitlines():
        step, sep, answer = line.partition(": ")
        match = NUMBER.match(answer.strip()) if sep and step not in ("drill", "variant",
                                                                      "target") else None
        if match is None:
            lines.append(line)
            continue
        value = float(match.group(1).replace(",", "")) * WRONG_FACTOR
        unit = f" {match.group(2)}" if match.group(2) else ""
        lines.append(f"{step}: '{four_figures(value)}{unit}'")
    return "\n".join(lines) + "\n"


def prepare(folder: Path, env: dict[str, str], cwd: Path) -> None:
    """The two sheets, a stored attempt to review, and every command run once."""
    keys = folder / "one"
    subprocess.run([*LAUNCH, "variants", DRILL, "--count", "1", "--seed", "1", "--out",
                    str(keys)], capture_output=True, env=env, cwd=cwd, check=True)
    right = next(keys.glob("*-answers.yaml")).read_text(encoding="utf-8")
    (folder / "right.yaml").write_text(right, encoding="utf-8")
    (folder / "wrong.yaml").write_text(wrong_sheet(right), encoding="utf-8")
    subprocess.run([*LAUNCH, "practice", "llama31-8b-h100"], input="32\n8\n128\n", text=True,
                   capture_output=True, env=env, cwd=cwd, check=False)
    # Three candidates' transcripts, each practised in a scratch store and exported.
    for name, answers in CANDIDATES.items():
        own = dict(env, KVDRILL_HOME=str(folder / f"{name}-home"))
        subprocess.run([*LAUNCH, "practice", COHORT_DRILL], input=answers, text=True,
                       capture_output=True, env=own, cwd=cwd, check=False)
        subprocess.run([*LAUNCH, "export", "1", "--out", str(folder / f"{name}.json")],
                       capture_output=True, env=own, cwd=cwd, check=True)
    subprocess.run([*LAUNCH, "show", DRILL], capture_output=True, cwd=cwd, check=True,
                   env=dict(env, KVDRILL_HOME=str(folder / "drill-only-home")))
    (folder / "one-answer.yaml").write_text("1a: 44 GB\n", encoding="utf-8")
    subprocess.run([*LAUNCH, "grade", DRILL, "--answers", str(folder / "one-answer.yaml")],
                   capture_output=True, cwd=cwd, check=False,
                   env=dict(env, KVDRILL_HOME=str(folder / "grade-template-home")))
    (folder / "other-texts.yaml").write_text(OTHER_TEXTS, encoding="utf-8")
    subprocess.run([*LAUNCH, "grade", COHORT_DRILL, "--answers",
                    str(folder / "other-texts.yaml")], capture_output=True, cwd=cwd,
                   check=False, env=dict(env, KVDRILL_HOME=str(folder / "grade-text-template")))
    imports = commands(folder)["import: three transcripts"]
    subprocess.run([*LAUNCH, *imports], capture_output=True, cwd=cwd, check=True,
                   env=dict(env, KVDRILL_HOME=homes(folder)["cohort of three"]))
    for label, args in commands(folder).items():
        home = homes(folder).get(label)
        subprocess.run([*LAUNCH, *args], stdin=subprocess.DEVNULL, capture_output=True,
                       env=env if home is None else dict(env, KVDRILL_HOME=home), cwd=cwd,
                       check=False)


SPACE_SIZE = re.compile(r"has (\d+) variants")


def every_space(env: dict[str, str], folder: Path) -> None:
    """Each drill's whole variant space drawn by a user with nothing kept (a fresh
    KVDRILL_HOME: not even the parsed drill), in seconds; the issue asks for under 15 s."""
    listed = subprocess.run([*LAUNCH, "list", "--json"], capture_output=True, text=True,
                            env=env, cwd=folder, check=True).stdout
    slowest = 0.0
    for drill in (entry["id"] for entry in json.loads(listed)):
        # the error for too many names how many variants the drill has
        asked = subprocess.run([*LAUNCH, "variants", drill, "--count", "500", "--out",
                                str(folder / "probe")], capture_output=True, text=True,
                               env=env, cwd=folder, check=False)
        found = SPACE_SIZE.search(asked.stderr)
        count = found.group(1) if found else "500"
        home = folder / "space" / drill
        took = seconds([*LAUNCH, "variants", drill, "--count", count, "--out",
                        str(folder / "space-out" / drill)],
                       dict(env, KVDRILL_HOME=str(home)), folder,
                       functools.partial(shutil.rmtree, home, True))
        slowest = max(slowest, took)
        print(f"{'whole space, nothing kept: ' + drill + ' (' + count + ')':<64} {took:6.2f} s")
    print(f"{'the slowest':<64} {slowest:6.2f} s   (under {WHOLE_SPACE_SECONDS:g} s: "
          + ("ok)" if slowest < WHOLE_SPACE_SECONDS else "OVER)"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9, help="pairs per command (median)")
    parser.add_argument("--whole-repeat", type=int, default=3,
                        help="pairs for the whole variant space (it takes seconds)")
    parser.add_argument("--tree", type=Path, help="time the trainer package of this checkout")
    parser.add_argument("--only", nargs="*", help="time only the figures whose name starts so")
    parser.add_argument("--cpu", action="store_true",
                        help="CPU seconds (user + system) instead of wall-clock: for a busy "
                             "machine")
    parser.add_argument("--every-space", action="store_true",
                        help="instead: every drill's whole variant space, nothing kept")
    options = parser.parse_args()
    global CPU_TIME
    CPU_TIME = options.cpu
    tree = (options.tree or ROOT).resolve()
    if (tree / "trainer").is_dir():
        compileall.compile_dir(tree / "trainer", quiet=1)  # a wheel's modules come compiled
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        home = folder / "home"
        env = dict(os.environ, KVDRILL_HOME=str(home))
        if options.tree:
            env["PYTHONPATH"] = os.pathsep.join(
                [str(tree), *filter(None, [os.environ.get("PYTHONPATH")])])
        if options.every_space:
            every_space(env, folder)
            return
        prepare(folder, env, folder)
        bare = statistics.median(seconds(BARE, env, folder) for _ in range(options.repeat))
        print(f"{'python -c pass':<48} {bare * 1000:8.1f} ms    1.0x")
        for label, args in commands(folder).items():
            if options.only and not any(label.startswith(o) for o in options.only):
                continue
            whole = label.startswith("variants: whole")
            home = homes(folder).get(label)
            before = None
            if label.startswith("import"):
                before = functools.partial(fresh_store, Path(homes(folder)[label]))
            elif label.endswith("none kept"):
                template = "grade-text-template" if "text answers" in label else \
                    "grade-template-home" if label.startswith("grade") else "drill-only-home"
                before = functools.partial(drill_only, Path(homes(folder)[label]),
                                           folder / template)
            took, ratio = paired([*LAUNCH, *args],
                                 options.whole_repeat if whole else options.repeat,
                                 env if home is None else dict(env, KVDRILL_HOME=home), folder,
                                 before)
            if whole:
                verdict = f"   (under {WHOLE_SPACE_SECONDS:g} s: " + (
                    "ok)" if took < WHOLE_SPACE_SECONDS else "OVER)")
            else:
                limit = LIMITS.get(label)
                verdict = "" if limit is None else f"   (at most {limit:g}x: " + (
                    "ok)" if ratio <= limit else "OVER)")
            print(f"{label:<48} {took * 1000:8.1f} ms {ratio:6.1f}x{verdict}")
    print(f"python {sys.version.split()[0]} on {os.cpu_count()} cores; trainer from {tree}; "
          f"{options.repeat} pairs each ({options.whole_repeat} for the whole space); "
          f"{'CPU' if CPU_TIME else 'wall-clock'} seconds", file=sys.stderr)


if __name__ == "__main__":
    main()
