"""Drills: the schema of drill and rubric files (model), loading them safely (loader), the
givens → the answer key of every step (reference), placeholders and worked solutions
(placeholders, render), variant draws (variants), skills and the drill list (catalog). May
import capacity, reading and files."""
