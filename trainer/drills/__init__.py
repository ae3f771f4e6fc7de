"""Drills: the schema of drill and rubric files (model), loading them safely (loader), the
givens → the answer key of every step (reference), placeholders and worked solutions
(placeholders, render), variant draws (variants), skills, the drill list (catalog) and the
checks a drill must pass (lint). May import capacity, reading and files."""
