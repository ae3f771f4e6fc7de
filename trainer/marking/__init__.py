"""Marking: one answer against its reference (checker), a wrong number solved backwards
(diagnosis), a whole attempt against its rubric (scoring), and an answer sheet graded
(grading). May import drills and everything below; never the store or a screen."""
