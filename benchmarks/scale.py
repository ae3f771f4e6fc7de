"""history, next, review and progress against stores of growing size, as ratios to `kvdrill --help`.

Run inside the project's virtual environment:

    python benchmarks/scale.py --attempts 10000 [--repeat 5]

Builds one store through the project's own store API, growing it to 100, 1,000 and then the
given number of attempts: attempts of several drills answered as candidates answer (the hand
written correct sheets, with wrong answers, skips and revisions mixed in), about one in eight
left incomplete, one in twenty with a reviewer's override. Each finished attempt's marks are
kept as `practice` keeps them. At each size every command is run `--repeat` times as a fresh
process; the table gives the median seconds, the ratio to `kvdrill --help` in the same run and
the command's peak memory. Nothing here runs in the test suite.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
LAUNCH = [sys.executable, "-c", "from trainer.app.cli import main; main()"]
SHEETS = ROOT / "tests" / "sheets"
DRILLS = ("llama31-8b-h100", "llama2-70b-mi300x", "llama31-70b-tp2-h100",
          "deepseek-v3-mla-h200", "paged-blocks-vllm", "prefix-caching")
WRONG = ("64 KiB", "512 KiB", "1 GB", "7", "13", "no idea", "4x", "96 sessions")


def _sheet(drill_id: str) -> list[tuple[str, str]]:
    import yaml

    data = yaml.safe_load((SHEETS / f"{drill_id}-correct.yaml").read_text(encoding="utf-8"))
    return [(str(step), str(answer)) for step, answer in data.items()]


def grow(home: Path, target: int, rng: random.Random) -> None:
    """Add attempts to the store in `home` until it holds `target`, keeping the marks of each
    finished one as practice does (a Keeper marks each distinct sheet once)."""
    os.environ["KVDRILL_HOME"] = str(home)
    from trainer import SOLVER_VERSION
    from trainer.app import session
    from trainer.drills import loader, variants
    from trainer.store import kept_marks as progress
    from trainer.store.database import Store

    sheets = {drill_id: _sheet(drill_id) for drill_id in DRILLS}
    drills = {drill_id: loader.find_drill(drill_id) for drill_id in DRILLS}
    with Store() as store:
        have = store.count_attempts()
        finished = []
        for number in range(have, target):
            drill_id = DRILLS[number % len(DRILLS)]
            drill, path = drills[drill_id]
            key = variants.answer_key(drill, None)
            attempt_id = store.create_attempt(
                drill_id, session.drill_hash(path), None, session.params_json(key.givens),
                SOLVER_VERSION, "exam" if number % 9 == 0 else "practice", False,
                drill_text=path.read_text(encoding="utf-8"))
            steps = sheets[drill_id]
            incomplete = rng.random() < 0.125
            stop = rng.randrange(1, len(steps)) if incomplete else len(steps)
            for step_id, answer in steps[:stop]:
                roll = rng.random()
                raw: str | None = answer
                if roll < 0.15:
                    raw = rng.choice(WRONG)
                elif roll < 0.18:
                    raw = None  # skipped
                if roll > 0.97:  # answered wrong, then revised with :back
                    store.record_answer(attempt_id, step_id, rng.choice(WRONG), None, None,
                                        "wrong", None, False, 0, rng.uniform(5, 60), 60, False)
                store.record_answer(attempt_id, step_id, raw, None, None,
                                    "correct" if raw == answer else "wrong", None, False,
                                    rng.choice((0, 0, 0, 1)), rng.uniform(5, 120), 60,
                                    rng.random() < 0.1)
            if not incomplete:
                store.finish(attempt_id)
                finished.append(attempt_id)
            if number % 20 == 7:
                store.set_override(attempt_id, "levers", 2.0, "named FP8 KV unprompted")
        keeper = progress.Keeper(store)
        for batch in progress.chunked((store.attempt(i) for i in finished), 200):
            keeper.summaries(batch)
        keeper.cards(DRILLS)
        keeper.skill_cards()


def timed(args: list[str], env: dict[str, str]) -> tuple[float, int]:
    """Seconds and peak resident memory (KiB) of one fresh process."""
    start = time.perf_counter()
    child = subprocess.Popen([*LAUNCH, *args], stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"kvdrill {' '.join(args)} failed with exit code {child.returncode}")
    return seconds, int(usage.ru_maxrss)


def measure(home: Path, repeat: int) -> list[dict[str, Any]]:
    env = {**os.environ, "KVDRILL_HOME": str(home)}
    from trainer.store.database import Store

    with Store(home / "kvdrill.sqlite3", read_only=True) as store:
        newest = next(store.iter_attempts(limit=1)).id
        oldest = store.complete_attempts(DRILLS[0], limit=10**9)[-1].id
    commands = {
        "--help": ["--help"],
        "history --json": ["history", "--json"],
        "history": ["history"],
        "next": ["next"],
        f"review {newest} (newest)": ["review", str(newest)],
        f"review {oldest} (oldest)": ["review", str(oldest)],
        "history --all --json": ["history", "--all", "--json"],
        "progress": ["progress"],
        "progress --json": ["progress", "--json"],
    }
    for args in commands.values():  # warm the caches a first run fills (catalog, parses)
        timed(args, env)
    rows = []
    for name, args in commands.items():
        runs = [timed(args, env) for _ in range(repeat)]
        rows.append({"command": name, "seconds": statistics.median(s for s, _ in runs),
                     "rss_kib": max(m for _, m in runs)})
    help_seconds = rows[0]["seconds"]
    for row in rows:
        row["ratio"] = row["seconds"] / help_seconds
    return rows


def cold(home: Path) -> list[dict[str, Any]]:
    """Each command's first run on a copy of the store with nothing kept (as an upgraded
    store, or attempts copied in by hand, leave it): what re-marking once costs."""
    import shutil
    import sqlite3

    rows = []
    for name, args in (("history --json", ["history", "--json"]), ("history", ["history"]),
                       ("next", ["next"]), ("progress", ["progress"])):
        with tempfile.TemporaryDirectory(dir=home.parent) as copy:
            shutil.copy(home / "kvdrill.sqlite3", copy)
            conn = sqlite3.connect(Path(copy) / "kvdrill.sqlite3")
            conn.execute("DELETE FROM scores")
            conn.execute("DELETE FROM schedule")
            conn.execute("UPDATE attempts SET scheduled = 0")
            conn.commit()
            conn.close()
            env = {**os.environ, "KVDRILL_HOME": copy}
            timed(["--help"], env)  # the catalog and parse caches, as a warm install has
            first, memory = timed(args, env)
            second, _ = timed(args, env)
            rows.append({"command": name, "first": first, "second": second, "rss_kib": memory})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attempts", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--grow", metavar="HOME", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.grow:  # the child that builds the store, so the parent stays small
        grow(Path(options.grow), options.attempts, random.Random(options.seed))
        return
    sizes = [size for size in (100, 1_000) if size < options.attempts] + [options.attempts]
    # A RAM-backed folder where there is one: the store's per-answer fsync is not what is
    # measured here.
    base = "/dev/shm" if Path("/dev/shm").is_dir() else None
    with tempfile.TemporaryDirectory(prefix="kvdrill-scale-", dir=base) as folder:
        home = Path(folder)
        print(f"{'attempts':>8}  {'command':<28} {'seconds':>8} {'× --help':>9} {'peak MiB':>9}")
        for size in sizes:
            started = time.perf_counter()
            subprocess.run([sys.executable, __file__, "--grow", str(home), "--attempts",
                            str(size), "--seed", str(options.seed + size)], check=True)
            built = time.perf_counter() - started
            for row in measure(home, options.repeat):
                print(f"{size:>8,}  {row['command']:<28} {row['seconds']:>8.3f} "
                      f"{row['ratio']:>8.1f}× {row['rss_kib'] / 1024:>9.1f}")
            print(f"{'':>8}  (store grown to {size:,} attempts in {built:.0f} s)")
        print(f"\nNothing kept yet ({sizes[-1]:,} attempts; first run re-marks, then kept):")
        for row in cold(home):
            print(f"{'':>8}  {row['command']:<28} first {row['first']:.3f} s, then "
                  f"{row['second']:.3f} s; peak {row['rss_kib'] / 1024:.1f} MiB")


if __name__ == "__main__":
    main()
