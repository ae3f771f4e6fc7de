"""Whole-process times of kvdrill commands, as ratios to a bare `python -c pass`.

Run inside the project's virtual environment: python benchmarks/startup.py [--repeat N]
Each command is timed in pairs with a bare interpreter (bare, command, bare, command, ...), and
the median of the per-pair ratios is printed beside the median time: pairs cancel out a machine
that slows down or speeds up while the benchmark runs. Ratios, not seconds, are what we
compare across machines; nothing here runs in the test suite.

Every command runs once before it is timed, as a user's second run would: the drill list, the
validated drill files and the rendered worked solutions are kept in the cache folder
($KVDRILL_HOME here) after the first run. `review 1` reads an attempt practised through a pipe
into a fresh store. A checkout's modules are compiled first (pip does this for a wheel) so the
import of a .py file is not timed as its compilation.
"""

from __future__ import annotations

import argparse
import compileall
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAUNCH = [sys.executable, "-c", "from trainer.app.cli import main; main()"]
BARE = [sys.executable, "-c", "pass"]

COMMANDS: dict[str, list[str]] = {
    "kvdrill --help": ["--help"],
    "kvdrill list": ["list"],
    "kvdrill show (70B on MI300X)": ["show", "llama2-70b-mi300x"],
    "kvdrill solution (70B on MI300X)": ["solution", "llama2-70b-mi300x"],
    "kvdrill review 1 (a stored attempt)": ["review", "1"],
    "kvdrill history": ["history"],
    "kvdrill next": ["next"],
    "kvdrill calc --help": ["calc", "--help"],
    "kvdrill calc (8B on H100, text)": [
        "calc", "--model", "llama-3.1-8b", "--gpu", "h100", "--utilization", "0.9",
        "--reserve-gb", "4",
    ],
    "kvdrill calc --json": ["calc", "--model", "llama2-70b", "--gpu", "mi300x", "--json"],
    "kvdrill calc --symbolic": ["calc", "--model", "llama2-70b", "--gpu", "mi300x", "--symbolic"],
    "kvdrill grade (30-step sheet)": [
        "grade", "llama2-70b-mi300x", "--answers",
        str(ROOT / "tests" / "sheets" / "llama2-70b-mi300x-correct.yaml"),
    ],
    "kvdrill variants --count 100 --json": [
        "variants", "llama2-70b-mi300x", "--count", "100", "--seed", "1", "--json",
    ],
}
# What the start-up targets allow, as a ratio to the bare interpreter.
LIMITS = {"kvdrill --help": 5.0, "kvdrill list": 5.0, "kvdrill show (70B on MI300X)": 10.0,
          "kvdrill solution (70B on MI300X)": 10.0, "kvdrill review 1 (a stored attempt)": 10.0}


def seconds(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, env=env, check=False)
    return time.perf_counter() - start


def paired(argv: list[str], repeat: int, env: dict[str, str]) -> tuple[float, float]:
    """(median seconds of `argv`, median of its time ÷ the bare run beside it)."""
    times, ratios = [], []
    for _ in range(repeat):
        bare = seconds(BARE, env)
        took = seconds(argv, env)
        times.append(took)
        ratios.append(took / bare)
    return statistics.median(times), statistics.median(ratios)


def prepare(env: dict[str, str]) -> None:
    """A stored attempt to review, and every command run once (caches filled)."""
    subprocess.run([*LAUNCH, "practice", "llama31-8b-h100"], input="32\n8\n128\n", text=True,
                   capture_output=True, env=env, check=True)
    for args in COMMANDS.values():
        subprocess.run([*LAUNCH, *args], stdin=subprocess.DEVNULL, capture_output=True, env=env,
                       check=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15, help="pairs per command (median)")
    repeat = parser.parse_args().repeat
    if (ROOT / "trainer").is_dir():
        compileall.compile_dir(ROOT / "trainer", quiet=1)
    with tempfile.TemporaryDirectory() as home:
        env = dict(os.environ, KVDRILL_HOME=home)
        prepare(env)
        bare = statistics.median(seconds(BARE, env) for _ in range(repeat))
        print(f"{'python -c pass':<40} {bare * 1000:7.1f} ms   1.0x")
        took, ratio = paired([sys.executable, "-c", "import click"], repeat, env)
        label = 'python -c "import click" (a floor)'
        print(f"{label:<40} {took * 1000:7.1f} ms {ratio:5.1f}x")
        for label, args in COMMANDS.items():
            took, ratio = paired([*LAUNCH, *args], repeat, env)
            limit = LIMITS.get(label)
            verdict = "" if limit is None else f"   (at most {limit:g}x: " + (
                "ok)" if ratio <= limit else "OVER)")
            print(f"{label:<40} {took * 1000:7.1f} ms {ratio:5.1f}x{verdict}")
    print(f"python {sys.version.split()[0]} on {os.cpu_count()} cores; {repeat} pairs each",
          file=sys.stderr)


if __name__ == "__main__":
    main()
