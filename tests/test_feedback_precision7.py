"""The tenth blind feedback review (/tmp/w4/review10.md): a mistake or input slip named at an
earlier step and made again where a later step reads the same thing is carried forward, named
once, not charged as a new error; a narrow range around what the candidate's own numbers give
is carried as that number would be; "~300" is the candidate's own 307 rounded. Each test
failed before."""

from __future__ import annotations

from trainer.drills.loader import find_drill
from trainer.drills.reference import AnswerKey
from trainer.marking.checker import Mark, mark_sheet


def marked(drill_id: str, answers: dict[str, str]) -> dict[str, Mark]:
    return mark_sheet(AnswerKey(find_drill(drill_id)[0]), answers)


def test_the_reserve_left_out_again_is_carried_and_names_where_it_was_first() -> None:
    marks = marked("llama2-70b-mi300x", {"1a": "54 GB", "4e": "22"})
    assert marks["1a"].misconception == "forgot-reserve"
    assert marks["4e"].carried_forward
    assert "the mistake named at 1a, made again here" in marks["4e"].feedback


def test_a_mistake_made_again_raises_no_second_red_flag() -> None:
    marks = marked("llama2-70b-mi300x", {"1a": "54 GB", "4e": "22"})
    assert marks["4e"].sure_mistake is None


def test_the_datasheets_80_gb_read_again_is_carried_at_a_later_step() -> None:
    marks = marked("paged-blocks-vllm", {"kv-budget": "52 GB", "colocated-x": "0.93"})
    assert marks["colocated-x"].carried_forward
    assert "hbm_gb = 80 GB instead of 85.52 GB" in marks["colocated-x"].feedback


def test_a_value_no_earlier_slip_gives_is_not_carried() -> None:
    marks = marked("paged-blocks-vllm", {"kv-budget": "52 GB", "colocated-x": "0.7"})
    assert not marks["colocated-x"].carried_forward


def test_a_later_step_with_no_earlier_mistake_names_nothing_again() -> None:
    marks = marked("llama2-70b-mi300x", {"4e": "22"})
    assert "made again" not in marks["4e"].feedback


def test_a_narrow_range_around_a_slip_made_again_is_carried() -> None:
    marks = marked("deepseek-v3-mla-h200", {"kv-budget": "~946 GB",
                                            "kv-budget-dp-attention": "850-855 GB"})
    assert marks["kv-budget-dp-attention"].carried_forward
    assert "give one number" in marks["kv-budget-dp-attention"].feedback


def test_a_wide_range_is_not_carried() -> None:
    marks = marked("deepseek-v3-mla-h200", {"kv-budget": "~946 GB",
                                            "kv-budget-dp-attention": "700-900 GB"})
    assert not marks["kv-budget-dp-attention"].carried_forward


def test_a_narrow_range_around_the_candidates_own_number_is_carried() -> None:
    marks = marked("multi-turn-growth", {"bytes-per-token": "512 KiB", "sessions": "16",
                                         "prompt-only-sessions": "77-78"})
    assert marks["prompt-only-sessions"].carried_forward


def test_a_narrow_range_stands_for_its_middle_at_the_step_after() -> None:
    marks = marked("multi-turn-growth", {"bytes-per-token": "512 KiB", "sessions": "16",
                                         "prompt-only-sessions": "77-78",
                                         "overstatement": "~5x"})
    assert marks["overstatement"].carried_forward


def test_about_300_is_the_candidates_own_307_rounded() -> None:
    marks = marked("llama2-70b-mi300x", {"3a-bytes-per-step": "138 GB",
                                         "5-bytes-per-step": "138 GB", "5b-aggregate": "~300"})
    assert marks["5b-aggregate"].carried_forward


def test_a_bare_300_is_not_rounded_that_far() -> None:
    marks = marked("llama2-70b-mi300x", {"3a-bytes-per-step": "138 GB",
                                         "5-bytes-per-step": "138 GB", "5b-aggregate": "300"})
    assert not marks["5b-aggregate"].carried_forward
