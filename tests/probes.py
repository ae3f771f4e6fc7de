"""Which modules a command has imported by the time it ends, in a fresh process (the start-up
tests: `--help` must not import sympy; a second `show` no pydantic)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def imported_after(args: list[str], home: Path, watched: tuple[str, ...]) -> list[str]:
    """The `watched` modules the CLI has imported once `args` ran (KVDRILL_HOME=home)."""
    probe = (
        "import sys\n"
        "from trainer.app.cli import cli\n"
        "try:\n"
        f"    cli.main({args!r}, prog_name='kvdrill')\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print(' '.join(m for m in {watched!r} if m in sys.modules) or 'NONE', file=sys.stderr)\n"
    )
    env = dict(os.environ, KVDRILL_HOME=str(home))
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=120, check=False, env=env, stdin=subprocess.DEVNULL)
    found = done.stderr.strip().splitlines()[-1]
    return [] if found == "NONE" else found.split()
