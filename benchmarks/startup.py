"""Whole-process times of kvdrill commands, as ratios to a bare `python -c pass`.

Run inside the project's virtual environment: python benchmarks/startup.py [--repeat N]
Prints one line per command: median seconds and the ratio to the bare interpreter. Ratios, not
seconds, are what we compare across machines; nothing here runs in the test suite.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LAUNCH = [sys.executable, "-c", "from trainer.app.cli import main; main()"]

COMMANDS: dict[str, list[str]] = {
    "kvdrill --help": ["--help"],
    "kvdrill calc --help": ["calc", "--help"],
    "kvdrill calc (8B on H100, text)": [
        "calc", "--model", "llama-3.1-8b", "--gpu", "h100", "--utilization", "0.9",
        "--reserve-gb", "4",
    ],
    "kvdrill calc --json": ["calc", "--model", "llama2-70b", "--gpu", "mi300x", "--json"],
    "kvdrill calc --symbolic": ["calc", "--model", "llama2-70b", "--gpu", "mi300x", "--symbolic"],
}
ROOT = Path(__file__).resolve().parent.parent
OPTIONAL: dict[str, list[str]] = {
    "kvdrill list": ["list"],
    "kvdrill practice (piped, to the end)": ["practice", "llama31-8b-h100"],
    "kvdrill grade (30-step sheet)": [
        "grade", "llama2-70b-mi300x", "--answers",
        str(ROOT / "tests" / "sheets" / "llama2-70b-mi300x-correct.yaml"),
    ],
    "kvdrill variants --count 100 --json": [
        "variants", "llama2-70b-mi300x", "--count", "100", "--seed", "1", "--json",
    ],
}


def median_seconds(argv: list[str], repeat: int, env: dict[str, str]) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, env=env, check=False)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def available(args: list[str], env: dict[str, str]) -> bool:
    done = subprocess.run([*LAUNCH, *args], stdin=subprocess.DEVNULL, capture_output=True,
                          env=env, check=False)
    return done.returncode == 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=11, help="runs per command (median)")
    repeat = parser.parse_args().repeat
    with tempfile.TemporaryDirectory() as home:
        env = dict(os.environ, KVDRILL_HOME=home)
        bare = median_seconds([sys.executable, "-c", "pass"], repeat, env)
        print(f"{'python -c pass':<38} {bare * 1000:7.1f} ms   1.0x")
        floor = median_seconds([sys.executable, "-c", "import click"], repeat, env)
        label = 'python -c "import click" (a floor)'
        print(f"{label:<38} {floor * 1000:7.1f} ms {floor / bare:5.1f}x")
        commands = dict(COMMANDS)
        commands.update({k: v for k, v in OPTIONAL.items() if available(v, env)})
        for label, args in commands.items():
            seconds = median_seconds([*LAUNCH, *args], repeat, env)
            print(f"{label:<38} {seconds * 1000:7.1f} ms {seconds / bare:5.1f}x")
    if shutil.which("kvdrill") is None:
        print("(kvdrill is not on PATH; timed through the same interpreter instead)")
    print(f"python {sys.version.split()[0]} on {os.cpu_count()} cores; repeat {repeat}",
          file=sys.stderr)


if __name__ == "__main__":
    main()
