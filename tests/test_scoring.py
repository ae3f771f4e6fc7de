"""The rubric scorer on model answers at each of the seed's three levels."""

from __future__ import annotations

from pathlib import Path

import yaml

from trainer.drills.loader import find_drill, load_rubric
from trainer.drills.reference import AnswerKey
from trainer.marking.checker import mark_sheet
from trainer.marking.scoring import RubricScore, concept_credit, contains, score_attempt

NUMBERS = {
    "shape-layers": "32", "shape-kv-heads": "8", "shape-head-dim": "128",
    "shape-dtype-bytes": "2", "bytes-per-token": "128 KiB", "kv-budget": "52 GB",
    "live-tokens": "397k", "sessions": "~97", "sessions-fp8": "~190", "sessions-32k": "12",
    "followup-128k-sessions": "3", "followup-70b-tp-sessions": "~100",
}
SOLID = "2 × 32 layers × 8 KV heads × 128 × 2 bytes = 128 KiB per token; after the weights " \
        "about 97 sessions fit."
SENIOR = ("Assuming bf16 and gpu_memory_utilization 0.9 with 4 GB of activation headroom, "
          "and that the context includes generated tokens and grows during a session: about "
          "97 sessions. FP8 KV halves the bytes per token and gives ~190.")


def score(answers: dict[str, str]) -> RubricScore:
    drill, _ = find_drill("llama31-8b-h100")
    marks = mark_sheet(AnswerKey(drill), answers)
    return score_attempt(drill, load_rubric(drill.rubric), marks)


def test_numbers_and_the_formula_alone_sound_solid() -> None:
    assert score({**NUMBERS, "policy": SOLID}).level == "solid"


def test_headroom_fp8_and_growing_context_sound_senior() -> None:
    assert score({**NUMBERS, "policy": SENIOR}).level == "senior"


def test_policy_pools_pricing_and_alerts_sound_staff() -> None:
    sheet = yaml.safe_load((Path(__file__).parent / "sheets" / "llama31-8b-h100-correct.yaml")
                           .read_text(encoding="utf-8"))
    assert score({step: str(answer) for step, answer in sheet.items()}).level == "staff"


def test_wrong_arithmetic_reaches_no_level_whatever_the_prose() -> None:
    assert score({"policy": SENIOR}).level is None


def test_arithmetic_counts_carried_forward_at_the_rubrics_credit() -> None:
    full = score(NUMBERS).dimension("arithmetic").score
    carried = score({**NUMBERS, "kv-budget": "56 GB", "live-tokens": "427k"})
    assert carried.dimension("arithmetic").score < full
    assert any("carried forward" in e for e in carried.dimension("arithmetic").evidence)


def test_an_unquantified_lever_earns_half() -> None:
    rubric = load_rubric("kv-capacity")
    fp8 = rubric.concept("fp8-kv")
    assert fp8 is not None
    assert concept_credit(fp8, "turn on fp8 kv so that more sessions fit")[0] == 0.5
    assert concept_credit(fp8, "turn on fp8 kv, which halves the cache")[0] == 1


def test_evidence_names_the_step_and_the_phrase() -> None:
    evidence = score({**NUMBERS, "policy": SENIOR}).dimension("levers").evidence
    assert any("in policy" in e and "fp8" in e.lower() for e in evidence)


def test_phrases_match_whole_words_across_hyphens() -> None:
    assert contains("Turn on FP8-KV now", "fp8 kv")
    assert not contains("a prefix-cacheline", "prefix caching")
