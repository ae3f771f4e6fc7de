"""kvdrill: timed drills for the quantitative questions of LLM-serving interviews.

The parts, each a sub-package, from the top down (each imports only parts below it, as the
import-linter contract in pyproject.toml checks): app, views, store, marking, drills,
capacity, then reading and files side by side. Under them all: errors, printable,
text_layout, and records (the dataclasses every part is made of).
"""

__version__ = "0.1.0"

# Version stamps that say when a kept mark is stale, importable without the solver.
# The solver's version: bumped when any reference value or wrong path can change.
SOLVER_VERSION = "5"
# Bumped when marking or scoring changes in a way SOLVER_VERSION and the package version do not
# show; every kept mark made before is then re-made. (2: text figures credit only the steps
# asked before the text, and not from a text that makes a wrong claim; a belief's scope ends
# where the candidate answers it. 3: an attempt of text answers alone is given no level.)
MARKING_VERSION = "3"
