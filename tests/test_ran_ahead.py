"""A wrong answer that is a later step's, to the digit: the candidate ran ahead (the whole
calculation typed at the first prompt), said as that; a small count that matches a later
step by chance is not."""
from __future__ import annotations

from trainer.drills.loader import find_drill
from trainer.drills.reference import AnswerKey
from trainer.marking.checker import Mark, mark_sheet


def one(step_id: str, answer: str) -> Mark:
    return mark_sheet(AnswerKey(find_drill("llama31-8b-h100")[0]), {step_id: answer})[step_id]


def test_the_whole_product_typed_for_the_layers_names_the_step_it_answers() -> None:
    mark = one("shape-layers", "2*32*8*128*2 = 131072 byts")
    assert mark.verdict == "wrong"
    assert "It is the answer to bytes-per-token, a later step (128 KiB); your working holds " \
           "32, this step's answer." in mark.feedback


def test_a_later_step_s_four_figure_answer_alone_is_named() -> None:
    mark = one("shape-head-dim", "131072")
    assert mark.verdict == "wrong"
    assert "It is the answer to bytes-per-token, a later step" in mark.feedback


def test_a_small_count_equal_to_a_later_step_s_is_left_as_a_plain_wrong_answer() -> None:
    # 12 is the sessions at 32k tokens (a later step); typed for the KV heads, it is chance
    mark = one("shape-kv-heads", "12")
    assert mark.verdict == "wrong"
    assert "later step" not in mark.feedback


def test_the_product_typed_with_its_unit_names_the_step_it_answers() -> None:
    # (typed tired at the first prompt in a practice run: the unit the question does not ask
    # for is said first, then the step it answers)
    mark = one("shape-layers", "2*32*8*128*2 = 131072 bytes i think")
    assert mark.feedback.startswith("read as 131,072 bytes = 128 KiB, but the question asks "
                                    "for a plain number; expected 32. It is the answer to "
                                    "bytes-per-token, a later step (128 KiB)")


def test_a_quantity_in_the_wrong_unit_that_no_step_answers_is_left_alone() -> None:
    mark = one("shape-layers", "64 GB")
    assert mark.feedback == "read as 64 GB, but the question asks for a plain number; " \
                            "expected 32"
