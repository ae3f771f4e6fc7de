"""The project's own errors: one class per failure kind.

Core modules raise these; only cli.py turns them into a one-line message and an exit code
(1: the request failed, 2: the command was used wrongly). Every message names the thing that
is wrong and the fix.
"""

from __future__ import annotations


class KvdrillError(Exception):
    """Base class: a request that failed (exit code 1)."""

    exit_code = 1


class UsageError(KvdrillError):
    """The command was used wrongly: a bad option value, an unknown name (exit code 2)."""

    exit_code = 2


class UnknownName(UsageError):
    """A preset, drill, quantity or misconception id that does not exist."""


class InvalidInput(UsageError):
    """A value that cannot describe a real model, GPU or deployment (zero layers, 0 GPUs...)."""


class DoesNotFit(KvdrillError):
    """The deployment is impossible: the weights do not fit in the memory given. Misuse, like
    any other impossible input (exit code 2)."""

    exit_code = 2


class AnswerParseError(KvdrillError):
    """A typed answer that cannot be read. `understood` says how far the reading got."""

    def __init__(self, message: str, understood: str = "") -> None:
        super().__init__(message)
        self.understood = understood


class DrillFileError(KvdrillError):
    """A drill, rubric or solution file that is malformed; the message names file, line, field."""


class DataNotFound(KvdrillError):
    """The drills/rubrics/solutions folders could not be found."""


class StoreError(KvdrillError):
    """The attempts database cannot be opened, read or written."""
