"""A practice process killed with SIGKILL loses nothing it had answered; resume continues."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from trainer.store.database import Store

LAUNCH = [sys.executable, "-c", "from trainer.app.cli import main; main()"]


def answered(home: Path) -> int:
    db = home / "kvdrill.sqlite3"
    if not db.exists():
        return 0
    with Store(db) as store:
        attempts = store.attempts()
        return len(store.answers(attempts[0].id)) if attempts else 0


def test_sigkill_after_three_answers_keeps_them_and_resume_asks_the_fourth(
    tmp_path: Path,
) -> None:
    env = dict(os.environ, KVDRILL_HOME=str(tmp_path))
    child = subprocess.Popen([*LAUNCH, "practice", "llama31-8b-h100"], stdin=subprocess.PIPE,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    assert child.stdin is not None
    child.stdin.write(b"32\n8\n128\n")
    child.stdin.flush()
    deadline = time.monotonic() + 30
    while answered(tmp_path) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=10)
    child.stdin.close()
    assert answered(tmp_path) == 3

    resumed = subprocess.run([*LAUNCH, "practice", "--resume", "1"], input="2 bytes\n",
                             capture_output=True, text=True, env=env, timeout=60, check=False)
    assert resumed.returncode == 0, resumed.stderr
    assert "at step shape-dtype-bytes (4 of 17)" in resumed.stdout
    with Store(tmp_path / "kvdrill.sqlite3") as store:
        rows = store.answers(1)
    assert [r.raw for r in rows] == ["32", "8", "128", "2 bytes"]
    assert all(r.verdict == "correct" for r in rows)


def test_a_corrupt_database_is_a_clear_error_and_is_left_untouched(tmp_path: Path) -> None:
    db = tmp_path / "kvdrill.sqlite3"
    db.write_bytes(b"this is not a database" * 100)
    before = db.read_bytes()
    env = dict(os.environ, KVDRILL_HOME=str(tmp_path))
    done = subprocess.run([*LAUNCH, "history"], capture_output=True, text=True, env=env,
                          timeout=60, check=False)
    assert done.returncode == 1
    assert done.stderr.startswith("Error: ") and str(db) in done.stderr
    assert "Traceback" not in done.stderr
    assert db.read_bytes() == before
