"""Expert pass 95 (172 text answers, written before grading, graded unread on stop 77's 7862ab8,
after passes 93's and 94's and corpora BZ's and CA's fixes): 4 of 86 right or hedged answers
red-flagged, every one a hedge ("I used to blame fragmentation …", "You'll hear that raising
max_model_len costs nothing …", "One might reason that …", "A receptive-field argument makes
windows sound free"), 26 of 43 partly right answers missed, 31 of 715 credits false, 7
sentences wrong; and one text answer that stated seven of the drill's figures was called
"Solid" on its own. Its right and hedged answers are kept as a guard."""

from __future__ import annotations

import pytest

from tests.expert_claims import answer_keys, expert_answer, flags_of_answer
from trainer.drills.loader import find_drill, load_rubric
from trainer.drills.reference import AnswerKey
from trainer.marking.checker import mark_sheet
from trainer.marking.scoring import score_attempt

CORPUS = "expert_pass95_answers.yaml"


@pytest.mark.parametrize("key", answer_keys(CORPUS, "R", "H"))
def test_a_right_or_hedged_answer_raises_no_red_flag(key: str) -> None:
    assert flags_of_answer(CORPUS, key) == []


def test_one_text_answer_that_states_the_figures_gets_no_level() -> None:
    # a level reads a whole attempt: seven keys stated in one hypotheses answer are not one
    drill = find_drill("observed-concurrency-lower")[0]
    text = expert_answer(CORPUS, "observed-concurrency-lower/hypotheses/R:A121")
    score = score_attempt(drill, load_rubric(drill.rubric),
                          mark_sheet(AnswerKey(drill), {"hypotheses": text}))
    assert score.level is None
    assert score.short_of is not None and score.short_of.startswith("no level")
