"""Crashes and concurrency through the real command: SIGKILL at random points, repeatedly;
several practising processes on one database; an unusable data folder."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from trainer.store.database import Store

LAUNCH = [sys.executable, "-c", "from trainer.app.cli import main; main()"]
ANSWERS = ["32", "8", "128", "2 bytes", "128 KiB", "52 GB", "397k", "~97", "~190", "12"]


def env_for(home: Path) -> dict[str, str]:
    return dict(os.environ, KVDRILL_HOME=str(home))


def stored(home: Path, attempt_id: int = 1) -> list[str | None]:
    """The raw answers of the attempt, or [] when the process died before creating it (the
    database may already exist then, empty)."""
    if not (home / "kvdrill.sqlite3").exists():
        return []
    with Store(home / "kvdrill.sqlite3") as store:
        if attempt_id not in {attempt.id for attempt in store.attempts()}:
            return []
        return [row.raw for row in store.answers(attempt_id)]


@pytest.mark.parametrize("round_", range(5))
def test_sigkill_at_a_random_point_loses_nothing_and_resume_completes(
    tmp_path: Path, round_: int
) -> None:
    rng = random.Random(round_)
    typed = rng.randint(1, len(ANSWERS) - 2)
    child = subprocess.Popen([*LAUNCH, "practice", "llama31-8b-h100"], stdin=subprocess.PIPE,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             env=env_for(tmp_path))
    assert child.stdin is not None
    for answer in ANSWERS[:typed]:
        child.stdin.write(f"{answer}\n".encode())
        child.stdin.flush()
        time.sleep(rng.uniform(0, 0.05))
    time.sleep(rng.uniform(0, 0.4))  # killed mid-answer, between answers, or while waiting
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=10)
    child.stdin.close()
    kept = stored(tmp_path)
    assert kept == ANSWERS[: len(kept)]  # a prefix of what was typed, in order, unaltered
    if not kept:
        return  # killed before the attempt was written: nothing to resume, nothing lost
    rest = "".join(f"{a}\n" for a in ANSWERS[len(kept):])
    done = subprocess.run([*LAUNCH, "practice", "--resume", "1"], input=rest, text=True,
                          capture_output=True, timeout=60, env=env_for(tmp_path), check=False)
    assert done.returncode == 0, done.stderr
    assert stored(tmp_path) == ANSWERS


@pytest.mark.parametrize("processes", [2, 4])
def test_concurrent_practice_processes_on_one_database_all_land(tmp_path: Path,
                                                                processes: int) -> None:
    children = [
        subprocess.Popen([*LAUNCH, "practice", "llama31-8b-h100"], stdin=subprocess.PIPE,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         env=env_for(tmp_path), text=True)
        for _ in range(processes)
    ]
    outputs = [child.communicate("".join(f"{a}\n" for a in ANSWERS), timeout=120)
               for child in children]
    assert [child.returncode for child in children] == [0] * processes, outputs
    with Store(tmp_path / "kvdrill.sqlite3") as store:
        attempts = store.attempts()
        assert len(attempts) == processes
        for attempt in attempts:
            assert [row.raw for row in store.answers(attempt.id)] == ANSWERS


def test_an_unusable_data_folder_is_one_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the data folder should be")
    done = subprocess.run([*LAUNCH, "practice", "llama31-8b-h100"], input="32\n", text=True,
                          capture_output=True, timeout=60, check=False,
                          env=env_for(blocker / "home"))
    assert done.returncode == 2  # KVDRILL_HOME under a file is misuse (issue 37, round 5)
    assert done.stderr.startswith("Error: ") and done.stderr.count("\n") == 1
    assert "Traceback" not in done.stderr

