"""Expert pass 92 (172 text answers, written before grading, graded unread on stop 76's
31f6327, after pass 91's, corpus BW's and the stop's review's fixes): no right or hedged
answer red-flagged, 21 of 43 partly right answers and 3 of 43 wrong ones missed, 32 of 641
credits false, no sentence wrong. Its 43 hedged answers are kept as a guard: each names a
misconception only to reject it, in forms the earlier passes did not use."""

from __future__ import annotations

import pytest

from tests.expert_claims import answer_keys, flags_of_answer

CORPUS = "expert_pass92_answers.yaml"


@pytest.mark.parametrize("key", answer_keys(CORPUS, "H"))
def test_a_misconception_named_to_be_rejected_raises_no_red_flag(key: str) -> None:
    assert flags_of_answer(CORPUS, key) == []
