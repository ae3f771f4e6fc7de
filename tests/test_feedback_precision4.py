"""What the tool says of a text answer, from the fourth stop of precision work: a verb of
effect said in the passive ("FLOPs saved" for "saves flops") earns what the active form
earns, and the feedback quotes the words the candidate typed. Each test failed before."""

from __future__ import annotations

from tests.test_feedback_precision3 import evidence
from trainer.drills.loader import find_drill, load_rubric
from trainer.marking.prose import concept_credit

SAVES = ("Batch 1 reads 25.8 GB, about 3.9 ms. So: FLOPs saved at every batch, 2 × 12.9B "
         "per token; bandwidth saved only at small batch; memory never.")


def _credit(concept_id: str, text: str) -> tuple[float, str]:
    drill = find_drill("mixtral-moe-decode")[0]
    concept = load_rubric(drill.rubric).concept(concept_id)
    assert concept is not None
    credit, note = concept_credit(concept, text)
    return float(credit), note


def test_a_saving_said_in_the_passive_earns_the_concept() -> None:
    credit, _ = _credit("moe-saves-flops-not-memory", SAVES)
    assert credit == 1


def test_the_passive_is_quoted_as_typed_not_as_the_rubric_words_it() -> None:
    _, note = _credit("moe-saves-flops-not-memory", SAVES)
    assert note.startswith("'FLOPs saved'")


def test_the_object_of_another_verb_does_not_earn_the_saving() -> None:
    credit, _ = _credit("moe-saves-flops-not-memory", "FLOPs counted per token, 2 × 46.7B.")
    assert credit == 0


def test_the_evidence_a_candidate_reads_quotes_the_passive_as_typed() -> None:
    said = evidence("mixtral-moe-decode", {"what-moe-saves": SAVES})
    assert "'FLOPs saved'" in said and "'saves flops'" not in said


def test_its_own_cap_is_not_the_platform_owning_the_caps() -> None:
    said = evidence("llama31-8b-h100", {"followup-128k-policy": (
        "Separate long-context pool with its own max_model_len and FP8 KV, admit by quota, "
        "price it higher.")})
    assert "owns" not in said


def test_a_team_that_owns_the_caps_still_earns_it() -> None:
    said = evidence("llama31-8b-h100", {"followup-128k-policy": (
        "The platform team owns max_model_len per tier; product teams request a tier.")})
    assert "The serving platform team owns" in said


def _row(drill_id: str, answers: dict[str, str], step_id: str) -> str:
    from tests.test_feedback_precision2 import marks

    return marks(drill_id, answers)[step_id].feedback


def test_a_value_fed_by_a_wrong_earlier_answer_is_not_guessed_at() -> None:
    # 182 GB left the weights out; 32 sequences at fp8 follow from neither alone: no "as if
    # the context were 8,192 tokens"
    said = _row("llama2-70b-mi300x", {"1a": "182 GB", "4a": "32"}, "4a")
    assert "Likely slip" not in said
    assert "This step uses your answer to 1a, marked wrong" in said


def test_a_slip_is_still_guessed_where_nothing_wrong_feeds_it() -> None:
    said = _row("llama31-8b-h100", {"bytes-per-token": "320 KiB"}, "bytes-per-token")
    assert "layers = 80 instead of 32" in said


def test_a_wrong_answer_on_another_model_does_not_feed_a_step() -> None:
    # the 70B follow-up is not worked from the 8B budget
    from trainer.drills.loader import find_drill
    from trainer.drills.reference import AnswerKey
    from trainer.marking.checker import fed_by_wrong, mark_sheet

    drill = find_drill("llama31-8b-h100")[0]
    key = AnswerKey(drill)
    sheet = mark_sheet(key, {"kv-budget": "70 GB"})
    assert fed_by_wrong(key, drill.step("sessions"), sheet) == ("kv-budget",)
    assert fed_by_wrong(key, drill.step("followup-70b-tp-sessions"), sheet) == ()
