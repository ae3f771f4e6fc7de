"""What the tool says of a text or numeric answer, from the third stop of precision work (a
practice session at 80 columns and the fourth blind review of the feedback): evidence quoted
for a credit is the evidence that earned it. Each test failed on the feedback as it was."""

from __future__ import annotations

from functools import cache

from trainer.drills.loader import find_drill, load_rubric
from trainer.drills.variants import answer_key
from trainer.marking.checker import Mark, mark_sheet
from trainer.marking.prose import numbers_in
from trainer.marking.scoring import score_attempt


@cache
def _key(drill_id: str):  # type: ignore[no-untyped-def]
    return answer_key(find_drill(drill_id)[0], None)


def marks(drill_id: str, answers: dict[str, str]) -> dict[str, Mark]:
    return mark_sheet(_key(drill_id), answers)


def evidence(drill_id: str, answers: dict[str, str]) -> str:
    drill = find_drill(drill_id)[0]
    score = score_attempt(drill, load_rubric(drill.rubric), marks(drill_id, answers))
    return " | ".join(line for d in score.dimensions for line in d.evidence)


POLICY = ("cap max_model_len near p99 not 128k, turn on fp8 kv which roughly doubles sessions "
          "to ~190, prefix caching for the sys prompt. assumes avg ctx 4k incl generated "
          "tokens; watch kv cache usage and preemptions")


def test_a_figure_of_another_clause_does_not_quantify_a_lever() -> None:
    # "not 128k" is the context limit; nothing in "prefix caching for the sys prompt" is a figure
    said = evidence("llama31-8b-h100", {"policy": POLICY})
    prefix = next(part for part in said.split(" | ") if part.startswith("Prefix caching"))
    assert "quantified elsewhere" not in prefix and "'128'" not in prefix


def test_a_context_in_another_clause_does_not_quantify_an_alert() -> None:
    # "avg ctx 4k" is an assumption, not the threshold of the KV-usage alert
    said = evidence("llama31-8b-h100", {"policy": POLICY})
    usage = next(part for part in said.split(" | ") if part.startswith("Alert on KV-cache"))
    assert "quantified elsewhere" not in usage


# A figure set beside its mention as an item of its own ("stay resident, 61 GB") still
# quantifies it: tests/test_feedback_precision2.py holds that case.


def test_a_k_suffix_is_thousands() -> None:
    assert numbers_in("a 128k context, 4k of prompt") == (128_000.0, 4_000.0)
