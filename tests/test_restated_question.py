"""An answer that says the question back before answering it (corpus CA: "So the question is
whether …", "What's being asked is …") claims nothing in that sentence: the words are the
question's. What the answer goes on to say of the question's subject is still its own."""

from __future__ import annotations

import pytest

from tests.expert_claims import claims_named


@pytest.mark.parametrize(("drill_id", "step_id", "text", "claim_id"), [
    ("littles-law-capacity", "plan",
     "So the question is whether 2,000 users online means we need 2,000 slots. It doesn't: "
     "only users with a request running hold KV, about 238 by Little's law.",
     "online-users-as-slots"),
    ("llama31-70b-tp2-h100", "tp-trade",
     "What's being asked is what the second H100 buys, what it costs, and whether one card "
     "would do. One card leaves 68 GB usable, less than the 70.6 GB of FP8 weights.",
     "fits-on-one-card"),
    ("llama2-70b-mi300x", "5a",
     "So what's being asked is what the step time does when we switch to fp8 KV and double "
     "the batch. It doesn't move: the step still reads 181 GB, about 34.1 ms.",
     "twice-the-work-twice-the-step"),
])
def test_the_question_said_back_is_no_claim(drill_id: str, step_id: str, text: str,
                                            claim_id: str) -> None:
    assert claim_id not in claims_named(drill_id, step_id, text)


def test_what_the_answer_says_after_the_restated_question_is_still_a_claim() -> None:
    text = ("The question is what happens to the step time at fp8 and double the batch. It "
            "roughly doubles, since twice the sequences means twice the work, so ~68 ms.")
    assert claims_named("llama2-70b-mi300x", "5a", text) != []


def test_a_sentence_that_only_mentions_a_question_is_read_as_said() -> None:
    # "question" inside a sentence, not a restatement opening it
    text = "Without question, TP=16 halves the KV per GPU, so sessions double."
    assert "tp16-halves-kv-per-gpu" in claims_named("llama31-405b-h200-tp", "why-less", text)
