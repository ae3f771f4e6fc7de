"""kvdrill: timed drills for the quantitative questions of LLM-serving interviews.

The parts, each a sub-package, from the top down (each imports only parts below it, as the
import-linter contract in pyproject.toml checks): app, views, store, marking, drills,
capacity, then reading and files side by side. Under them all: errors, printable, versions.
"""

__version__ = "0.1.0"
