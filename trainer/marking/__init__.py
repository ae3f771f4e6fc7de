"""Marking: one answer against its reference (checker), a wrong number solved backwards
(diagnosis), a whole attempt against its rubric (scoring), an answer sheet graded (grading),
and every check a drill must pass before a candidate sees it, its anchor answers scored in
order among them (lint). May import drills and everything below; never the store or a screen."""
