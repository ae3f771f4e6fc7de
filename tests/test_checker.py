"""Marking single answers: tolerance, dimensions, named mistakes, error carried forward."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from trainer.drills.loader import find_drill, load_rubric
from trainer.drills.reference import AnswerKey
from trainer.marking.checker import Mark, mark_sheet
from trainer.marking.scoring import score_attempt
from trainer.reading.exact import Fraction
from trainer.reading.expression import unit_factor


def key_of(drill_id: str) -> AnswerKey:
    return AnswerKey(find_drill(drill_id)[0])


def mark(drill_id: str, answers: dict[str, str]) -> dict[str, Mark]:
    return mark_sheet(key_of(drill_id), answers)


def one(drill_id: str, step_id: str, answer: str) -> Mark:
    return mark(drill_id, {step_id: answer})[step_id]


@pytest.mark.parametrize(
    "answer",
    ["131072", "131,072", "131_072", "1.31e5", "128 KiB", "0.125 MiB", "2*32*8*128*2",
     "2 × 32 × 8 × 128 × 2 B", "2^17", "2**17 bytes", "128 KiB/token", "≈ 131 KB"],
)
def test_bytes_per_token_accepts_the_forms_people_type(answer: str) -> None:
    assert one("llama31-8b-h100", "bytes-per-token", answer).verdict == "correct"


@pytest.mark.parametrize("answer", ["52 GB", "52e9 bytes", "52", "80*0.9 - 16 - 4 GB",
                                    "(72-16-4) GB", "52,000,000,000"])
def test_kv_budget_accepts_gb_forms(answer: str) -> None:
    assert one("llama31-8b-h100", "kv-budget", answer).verdict == "correct"


def test_sessions_estimate_is_marked_within_20_percent() -> None:
    assert one("llama31-8b-h100", "sessions", "~110").verdict == "correct"
    assert one("llama31-8b-h100", "sessions", "130").verdict == "wrong"


def test_exact_product_is_marked_tightly() -> None:
    assert one("llama31-8b-h100", "bytes-per-token", "140000").verdict == "wrong"


def test_kb_is_not_kib() -> None:
    assert one("llama31-8b-h100", "bytes-per-token", "128 KB").verdict == "wrong"


def test_gib_given_where_gb_was_asked_is_wrong() -> None:
    assert one("llama2-70b-mi300x", "1a", "44 GiB").verdict == "wrong"


def test_a_time_where_bytes_were_asked_is_wrong_and_says_so() -> None:
    result = one("llama2-70b-mi300x", "1a", "44 ms")
    assert result.verdict == "wrong"
    assert "asks for bytes" in result.feedback


def test_tokens_where_sequences_were_asked_are_wrong() -> None:
    assert one("llama2-70b-mi300x", "2b-max-sequences", "4 tokens").verdict == "wrong"


def test_unreadable_answer_is_invalid_and_shows_what_was_read() -> None:
    result = one("llama2-70b-mi300x", "1a", "44 gigglebytes")
    assert result.verdict == "invalid"
    assert "not marked" in result.feedback


def test_unanswered_step_is_unanswered() -> None:
    assert mark("llama2-70b-mi300x", {})["1a"].verdict == "unanswered"


def test_unrounded_count_of_sequences_is_named_rounded_up() -> None:
    result = one("llama2-70b-mi300x", "2b-max-sequences", "4.1")
    assert (result.verdict, result.misconception) == ("wrong", "rounded-up")


def test_the_count_after_the_floor_is_named_rounded_up() -> None:
    result = one("llama2-70b-mi300x", "2b-max-sequences", "5")
    assert result.verdict == "wrong" and "rounded-up" in result.misconceptions


def test_two_mistakes_with_one_value_are_both_named() -> None:
    # 5 sequences: the reserve left out (54 GB ÷ 10.7 GB) and 4.1 rounded up alike.
    result = one("llama2-70b-mi300x", "2b-max-sequences", "5")
    assert result.misconceptions == ("rounded-up", "forgot-reserve")  # the rounding first


def test_an_estimate_of_sessions_keeps_its_band_above_the_floor() -> None:
    assert one("llama31-8b-h100", "sessions", "97").verdict == "correct"


def test_a_large_count_rounded_for_display_is_within_tolerance() -> None:
    assert one("paged-blocks-vllm", "num-blocks", "~27.2k").verdict == "correct"


@pytest.mark.parametrize(
    ("drill", "step", "answer", "misconception"),
    [
        ("llama31-8b-h100", "shape-kv-heads", "32", "query-heads"),
        ("llama31-8b-h100", "shape-dtype-bytes", "16", "bits-for-bytes"),
        ("llama31-8b-h100", "bytes-per-token", "512 KiB", "query-heads"),
        ("llama31-8b-h100", "bytes-per-token", "65536", "forgot-kv-factor-2"),
        ("llama31-8b-h100", "bytes-per-token", "256 KiB", "fp32-kv"),
        ("llama31-8b-h100", "kv-budget", "68 GB", "forgot-weights"),
        ("llama31-8b-h100", "kv-budget", "56 GB", "forgot-reserve"),
        ("llama31-8b-h100", "kv-budget", "60 GB", "full-hbm"),
        ("llama31-8b-h100", "kv-budget", "55.8 GB", "gb-gib"),
        ("llama31-8b-h100", "sessions", "24", "query-heads"),
        ("llama31-8b-h100", "followup-70b-tp-sessions", "48", "per-gpu-vs-total"),
        ("llama2-70b-mi300x", "1a", "54 GB", "forgot-reserve"),
        ("llama2-70b-mi300x", "1a", "182 GB", "forgot-weights"),
        ("llama2-70b-mi300x", "2b-dkv", "8192", "hidden-for-kv-width"),
        ("llama2-70b-mi300x", "2b-bytes-per-token", "2621440", "query-heads"),
        ("llama2-70b-mi300x", "2b-bytes-per-sequence", "5.37 GB", "forgot-kv-factor-2"),
        ("llama2-70b-mi300x", "2b-max-sequences", "5", "forgot-reserve"),
        ("llama2-70b-mi300x", "4e", "10.5", "per-gpu-vs-total"),
    ],
)
def test_wrong_answer_names_the_mistake_it_matches(drill: str, step: str, answer: str,
                                                   misconception: str) -> None:
    result = one(drill, step, answer)
    assert result.verdict == "wrong"
    assert misconception in result.misconceptions  # first, or in a tie


def test_named_mistake_feedback_says_how_to_avoid_it() -> None:
    result = one("llama2-70b-mi300x", "1a", "54 GB")
    assert "reserve" in result.feedback and "expected 44 GB" in result.feedback


def test_later_step_right_from_a_wrong_earlier_answer_is_carried_forward() -> None:
    # 54 GB (no reserve) ÷ 10.7 GB per sequence = 5: wrong, but consistent with 1a.
    marks = mark("llama2-70b-mi300x", {"1a": "54 GB", "2b-bytes-per-sequence": "10.7 GB",
                                       "2b-max-sequences": "5"})
    assert marks["2b-max-sequences"].verdict == "wrong"
    assert marks["2b-max-sequences"].carried_forward


def test_carried_forward_credit_needs_a_wrong_earlier_answer() -> None:
    marks = mark("llama2-70b-mi300x", {"1a": "44 GB", "2b-bytes-per-sequence": "10.7 GB",
                                       "2b-max-sequences": "5"})
    assert not marks["2b-max-sequences"].carried_forward


def test_an_absurd_earlier_answer_does_not_make_a_later_step_trivial() -> None:
    marks = mark("llama2-70b-mi300x", {"1a": "0.001 GB", "2b-bytes-per-sequence": "10.7 GB",
                                       "2b-max-sequences": "0"})
    assert marks["2b-max-sequences"].verdict == "wrong"
    assert not marks["2b-max-sequences"].carried_forward


def test_ratio_step_carries_forward_the_candidates_own_values() -> None:
    marks = mark("llama2-70b-mi300x", {"2a-bytes-per-token": "1310720", "2b-bytes-per-token":
                                       "327680", "2c-ratio": "4"})
    assert marks["2c-ratio"].carried_forward


def test_full_width_digits_read_as_ordinary_digits() -> None:
    assert one("llama31-8b-h100", "bytes-per-token", "１３１０７２").verdict == "correct"


HOSTILE = [
    "__import__('os').system('touch /tmp/kvdrill-pwned')",
    "().__class__.__base__.__subclasses__()",
    "9**9**9**9", "(((9**64)**64)**64)**64", "9^9^9^9", "factorial(10**7)", "10**10**10",
    "1e999999", "nan", "inf", "-inf GB", "{{7*7}}", "${7*7}", "%s%s%s%n",
    "x" * 100_000, "(" * 10_000 + "1" + ")" * 10_000, "\0" * 50, "1\u202e2",
    "lambda: 1", "[1]*10**9", "'a'*10**9", "open('/etc/passwd').read()",
]


@pytest.mark.parametrize("answer", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_answers_never_run_and_return_in_bounded_time(answer: str) -> None:
    start = time.perf_counter()
    result = one("llama31-8b-h100", "bytes-per-token", answer)
    # bounded, not fast: a runaway (an evaluated power, a backtracking pattern) takes minutes,
    # and no busy machine takes this long for bounded work
    assert time.perf_counter() - start < 30
    assert result.verdict in ("invalid", "wrong")
    assert not Path("/tmp/kvdrill-pwned").exists()


def _wrong_path_cases() -> list[tuple[str, str, str, str]]:
    cases = []
    for drill_id in ("llama31-8b-h100", "llama2-70b-mi300x"):
        key = key_of(drill_id)
        for step in key.drill.steps:
            if step.kind == "numeric":
                for path_id, value in key.reference(step.id).wrong:
                    cases.append((drill_id, step.id, path_id, str(value)))
    return cases


@pytest.mark.parametrize(("drill", "step", "path_id", "value"), _wrong_path_cases())
def test_every_seed_wrong_path_is_named_when_its_value_is_given(
    drill: str, step: str, path_id: str, value: str
) -> None:
    key = key_of(drill)
    unit = key.reference(step).unit
    scale = unit_factor(unit).value if unit else 1
    typed = f"{float(Fraction(value) / scale):.6g} {unit}".strip()
    result = mark_sheet(key, {step: typed})[step]
    same_value = {p for p, v in key.reference(step).wrong if v == Fraction(value)}
    if result.verdict == "correct":
        pytest.skip("within the step's tolerance of the truth")
    assert result.misconception in same_value | {path_id}, typed


def test_a_unit_closing_a_division_applies_to_the_whole_answer() -> None:
    assert one("llama31-8b-h100", "live-tokens", "52e9 / 131072 tokens").verdict == "correct"


def test_a_bare_fraction_answers_a_percentage_step() -> None:
    drill, _ = find_drill("decode-roofline-vs-measured")
    step = next(s for s in drill.steps if s.unit == "%")
    reference = AnswerKey(drill).reference(step.id).value
    assert one("decode-roofline-vs-measured", step.id, f"{float(reference):.4f}").verdict \
        == "correct"
    assert one("decode-roofline-vs-measured", step.id, f"{float(reference) * 100:.2f}%") \
        .verdict == "correct"



def test_a_mistake_named_alone_raises_its_red_flag() -> None:
    drill, _ = find_drill("llama31-8b-h100")
    mark = Mark("kv-budget", "numeric", "68", "wrong", misconceptions=("forgot-weights",))
    score = score_attempt(drill, load_rubric(drill.rubric), {"kv-budget": mark})
    assert [flag for flag, _ in score.red_flags] == ["weights-or-full-hbm"]


def test_a_mistake_named_in_a_tie_raises_no_red_flag() -> None:
    drill, _ = find_drill("llama31-8b-h100")
    mark = Mark("kv-budget", "numeric", "68", "wrong", misconceptions=("gb-gib", "forgot-weights"))
    score = score_attempt(drill, load_rubric(drill.rubric), {"kv-budget": mark})
    assert score.red_flags == ()


# Found practising at 80 columns (stop 69): "16 gib per 128k sesion" was read as 16 GiB divided
# by 128,000 sessions (134 KB a session). A length before a singular noun names which one.
@pytest.mark.parametrize("answer", ["16 gib per 128k sesion", "16 GiB per 128k session",
                                    "16 GiB per 128k-token session", "16 GiB per session"])
def test_a_session_named_by_its_length_is_one_session(answer: str) -> None:
    assert one("long-context-tier", "long-session-bytes", answer).verdict == "correct"


def test_a_count_of_sessions_still_divides() -> None:
    # "per 4k sessions" is four thousand of them: 68.7 TB over 4,000 is 16 GiB each
    assert one("long-context-tier", "long-session-bytes",
               "68.7 TB per 4k sessions").verdict == "correct"
