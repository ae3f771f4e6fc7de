"""Version stamps that say when a kept mark is stale, importable without the solver."""

# The solver's version: bumped when any reference value or wrong path can change.
SOLVER_VERSION = "5"
# Bumped when marking or scoring changes in a way SOLVER_VERSION and the package version do not
# show; every kept mark made before is then re-made.
MARKING_VERSION = "1"
