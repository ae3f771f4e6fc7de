"""The twelfth expert pass (/tmp/expert12.md) read the interviewer's keys: a wrong value the
step marks right, a TTFT 'unit mix' no slip can give, and a pooled count called a rounding.
Each test fails on the keys as they were."""

from __future__ import annotations

from trainer.drills.loader import find_drill
from trainer.drills.reference import AnswerKey, show
from trainer.marking.checker import close, tolerance_of
from trainer.views.keys import key_rows


def _rows(drill_id: str) -> dict[str, dict]:  # type: ignore[type-arg]
    return {row["id"]: row for row in key_rows(AnswerKey(find_drill(drill_id)[0]))}


def test_a_key_lists_no_wrong_value_or_slip_the_step_marks_right() -> None:
    for drill_id in ("multi-turn-growth", "speculative-decoding", "sliding-window-kv",
                     "prefix-caching"):
        key = AnswerKey(find_drill(drill_id)[0])
        for row in key_rows(key):
            reference = key.reference(row["id"])
            tolerance = tolerance_of(key.drill.step(row["id"]))
            right = {(path, show(value, reference.unit)) for path, value in reference.wrong
                     if close(value, reference.value, tolerance)}
            listed = {(w["misconception"], w["value"]) for w in row["wrong"]}
            assert not right & listed, (drill_id, row["id"], right & listed)
            assert all(s["value"] != row["reference"] for s in row["slips"]), (drill_id, row)


def test_a_ttft_of_whole_steps_is_given_no_unit_mix() -> None:
    row = _rows("chunked-prefill-tpot")["chunked-ttft"]
    assert not any(w["misconception"] in ("gb-gib", "mb-mib") for w in row["wrong"])


def test_a_step_time_read_in_gib_keeps_its_unit_mix() -> None:
    row = _rows("llama2-70b-mi300x")["3a-step-time"]
    assert any(w["misconception"] == "gb-gib" for w in row["wrong"])


def test_a_count_floored_per_rank_is_no_rounding_of_the_pooled_count() -> None:
    # 8 ranks × 11: the only rounding up is each rank's, 8 × 12 = 96 (expert pass 49), never
    # the pooled quotient's
    row = _rows("deepseek-v3-mla-h200")["sessions-dp-attention"]
    assert [w["value"] for w in row["wrong"] if w["misconception"] == "rounded-up"] == \
        ["96 sequences"]
