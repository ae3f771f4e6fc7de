"""One assertion the reliability tests share: a refusal is one `Error:` line, with the exit
code and the words that name the thing and the fix, and never a traceback."""

from __future__ import annotations

from click.testing import Result


def one_line_error(result: Result, code: int, *needles: str) -> None:
    assert result.exit_code == code, result.output + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    assert "internal error" not in result.stderr and "Traceback" not in result.output
    for needle in needles:
        assert needle in lines[0], lines[0]
