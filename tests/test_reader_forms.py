"""Answers written the way people write them, read as meant: through `kvdrill grade --json`,
piped practice and review alike (issue 10). Figures are the seeds': 128 KiB/token, 52 GB,
~96 sessions for Llama-3.1-8B on an H100; 44 GB, 4 sequences, 8x, 34.1 ms for the 70B on an
MI300X."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import Result

from trainer.app.session import feedback_line
from trainer.drills.loader import find_drill
from trainer.drills.reference import AnswerKey
from trainer.marking.checker import check_numeric
from trainer.views import keys

Run = Callable[..., Result]
EIGHT_B, SEVENTY_B = "llama31-8b-h100", "llama2-70b-mi300x"


def graded(run: Run, tmp_path: Path, drill: str, step: str, answer: str) -> dict[str, Any]:
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text(yaml.safe_dump({step: answer}, allow_unicode=True), encoding="utf-8")
    result = run("grade", drill, "--answers", str(sheet), "--json", ok=False)
    assert result.exit_code in (0, 1), result.output
    return next(s for s in json.loads(result.output)["steps"] if s["id"] == step)


READ_AS_MEANT = [
    # ratios
    (SEVENTY_B, "2c-ratio", "8x"), (SEVENTY_B, "2c-ratio", "8×"), (SEVENTY_B, "2c-ratio", "×8"),
    (SEVENTY_B, "2c-ratio", "8:1"), (SEVENTY_B, "2c-ratio", "8-fold"),
    (SEVENTY_B, "2c-ratio", "8 times smaller"), (SEVENTY_B, "2c-ratio", "1:8"),
    # a noun that names what is counted
    (EIGHT_B, "shape-kv-heads", "8 KV heads"), (EIGHT_B, "shape-layers", "32 layers"),
    (EIGHT_B, "shape-head-dim", "128 dims"), (EIGHT_B, "sessions", "97 concurrent users"),
    (EIGHT_B, "sessions", "96 requests"), (SEVENTY_B, "2b-max-sequences", "4 seqs"),
    # working shown before the result
    (EIGHT_B, "kv-budget", "72 - 16 - 4 = 52 GB"),
    (EIGHT_B, "bytes-per-token", "2*32*8*128*2 = 131072 B"),
    (SEVENTY_B, "1a", "192 − 138 − 10 → 44 GB"),
    # hesitation and punctuation
    (EIGHT_B, "kv-budget", "52GB?"), (EIGHT_B, "kv-budget", "~52 GB."),
    (EIGHT_B, "kv-budget", "52 GB (approx)"), (EIGHT_B, "kv-budget", "≈52GB!"),
    # ranges inside the band
    (EIGHT_B, "sessions", "90-100"), (EIGHT_B, "sessions", "90–100"),
    (EIGHT_B, "sessions", "90 to 100"), (EIGHT_B, "sessions", "between 90 and 100"),
    # a suffix on a byte step, either convention
    (EIGHT_B, "bytes-per-token", "128k"), (EIGHT_B, "bytes-per-token", "128K"),
    (EIGHT_B, "bytes-per-token", "0.125M"), (EIGHT_B, "bytes-per-token", "131k"),
    # words after the number, and before it
    (EIGHT_B, "kv-budget", "52 GB for KV"), (EIGHT_B, "sessions", "96 sessions at 4k"),
    (SEVENTY_B, "2a-max-sequences", "none fit"), (EIGHT_B, "followup-128k-sessions", "only 3"),
    (EIGHT_B, "followup-128k-sessions", "3 (16 GiB each)"),
    (SEVENTY_B, "3b-aggregate", "117 tps"),
    (SEVENTY_B, "2c-ratio", "8 to 1"), (SEVENTY_B, "2c-ratio", "ratio 8"),
    (EIGHT_B, "sessions", "~96, so one card is enough"),
    (EIGHT_B, "followup-128k-sessions", "3 long sessions"),
    (SEVENTY_B, "2b-max-sequences", "4 full-context sequences"),
    (EIGHT_B, "kv-budget", "the budget is 52 GB"), (EIGHT_B, "bytes-per-token", "128Ki"),
    ("long-context-tier", "displaced", "32 chat sessions"),
    ("decode-roofline-vs-measured", "b1-fraction", "43 percent"),
    # rounded to the digits typed: 38 for 38.4, 34 ms for 34.1 ms
    (SEVENTY_B, "3c-batch1-ceiling", "38 tokens/s"), (SEVENTY_B, "3a-step-time", "34 ms"),
    # an 8k that means 8,192 where a count is asked
    (SEVENTY_B, "2a-dkv", "8k"),
]


@pytest.mark.parametrize(("drill", "step", "answer"), READ_AS_MEANT,
                         ids=[f"{s}:{a}" for _, s, a in READ_AS_MEANT])
def test_an_answer_written_as_people_write_it_is_graded_correct(
        run: Run, tmp_path: Path, drill: str, step: str, answer: str) -> None:
    result = graded(run, tmp_path, drill, step, answer)
    assert result["verdict"] == "correct", result["feedback"]


def test_a_noun_of_another_dimension_is_still_caught(run: Run, tmp_path: Path) -> None:
    result = graded(run, tmp_path, EIGHT_B, "shape-kv-heads", "8 GB")
    assert result["verdict"] == "wrong" and "asks for a plain number" in result["feedback"]


def test_a_bare_ratio_on_a_step_that_asks_for_a_count_says_so(run: Run, tmp_path: Path) -> None:
    result = graded(run, tmp_path, EIGHT_B, "sessions-fp8", "2x")
    assert result["verdict"] == "invalid"
    assert "'2x' is a ratio, and this step asks for a number in sequences" in result["feedback"]


def test_a_mistyped_unit_is_not_guessed(run: Run, tmp_path: Path) -> None:
    assert graded(run, tmp_path, EIGHT_B, "kv-budget", "52 gigglebytes")["verdict"] == "invalid"


def test_a_range_wider_than_the_band_is_wrong_and_asks_for_one_number(
        run: Run, tmp_path: Path) -> None:
    result = graded(run, tmp_path, EIGHT_B, "kv-budget", "50-55 GB")
    assert result["verdict"] == "wrong"
    assert "give one number; your range spans 50 GB to 55 GB" in result["feedback"]


def test_a_falling_dash_is_a_subtraction_not_a_range(run: Run, tmp_path: Path) -> None:
    assert graded(run, tmp_path, SEVENTY_B, "1a", "54-10 GB")["verdict"] == "correct"


def test_working_that_disagrees_with_the_result_is_pointed_out(run: Run, tmp_path: Path) -> None:
    result = graded(run, tmp_path, EIGHT_B, "kv-budget", "72 - 16 - 4 = 58 GB")
    assert result["verdict"] == "wrong"
    assert "Your working (72 - 16 - 4) gives 52 GB, which is right" in result["feedback"]
    result = graded(run, tmp_path, EIGHT_B, "kv-budget", "72 - 16 = 52 GB")
    assert result["verdict"] == "correct"
    assert "your working (72 - 16) comes to 56 GB" in result["feedback"]


def test_a_byte_suffix_says_which_reading_was_used(run: Run, tmp_path: Path) -> None:
    result = graded(run, tmp_path, EIGHT_B, "bytes-per-token", "128k")
    assert "128 KiB (binary)" in result["feedback"]


def test_a_byte_suffix_is_never_stacked_on_the_steps_unit(run: Run, tmp_path: Path) -> None:
    result = graded(run, tmp_path, EIGHT_B, "bytes-per-token", "125k")
    assert "MiB" not in result["feedback"]


@pytest.mark.parametrize(("answer", "why"), [
    ("48.4 GB", "the GiB figure labelled GB"), ("52 GiB", "the GB figure labelled GiB")])
def test_gb_and_gib_mixed_up_either_way_is_named(
        run: Run, tmp_path: Path, answer: str, why: str) -> None:
    result = graded(run, tmp_path, EIGHT_B, "kv-budget", answer)
    assert "gb-gib" in result["misconceptions"], why


def test_the_weights_left_out_of_a_decode_step_are_named_at_the_step_time(
        run: Run, tmp_path: Path) -> None:
    # 4 × 10.7 GB of KV alone on 5.3 TB/s: 8.1 ms instead of 34.1 ms.
    result = graded(run, tmp_path, SEVENTY_B, "3a-step-time", "8.1 ms")
    assert result["misconception"] == "forgot-weights"


def test_a_variant_key_names_the_weights_left_out_of_a_decode_step_too() -> None:
    drill, _ = find_drill(SEVENTY_B)
    _, givens = keys.pick_variants(drill, 1, seed=11)[0]
    key = AnswerKey(drill, givens)
    reference = key.reference("3a-step-time")
    deployment = key.deployment("3a-step-time")
    kv_only = key.value("bytes_read_per_step", deployment) - key.value("weights_bytes",
                                                                       deployment)
    seconds = kv_only / (deployment.gpus * deployment.bandwidth_tbs * 10**12)
    mark = check_numeric(drill.step("3a-step-time"), f"{float(seconds) * 1000:.4g} ms",
                         reference)
    assert mark.misconception == "forgot-weights"


def test_a_count_rounded_up_is_wrong_and_named(run: Run, tmp_path: Path) -> None:
    # 52 GB ÷ 16 GiB = 3.03 sessions of 128k: 3 are served, not 4.
    result = graded(run, tmp_path, EIGHT_B, "followup-128k-sessions", "4")
    assert (result["verdict"], result["misconception"]) == ("wrong", "rounded-up")


def test_piped_practice_reads_the_same_forms(run: Run) -> None:
    run("practice", EIGHT_B, input="32 layers\n8 KV heads\n128 dims\n2 bytes\n128k\n"
                                   "72 - 16 - 4 = 52 GB\n")
    exported = json.loads(run("export", "1").output)
    verdicts = [s["verdict"] for s in exported["steps"][:6]]
    assert verdicts == ["correct"] * 6


def test_review_re_marks_the_same_forms_correct(run: Run) -> None:
    run("practice", EIGHT_B, input="32 layers\n8 KV heads\n")
    page = run("review", "1", "--format", "md").output
    assert "disagree" not in page.lower()
    assert page.count("✓") >= 2


def test_practice_feedback_says_how_a_suffix_was_read() -> None:
    drill, _ = find_drill(EIGHT_B)
    key = AnswerKey(drill)
    mark = check_numeric(drill.step("bytes-per-token"), "128k", key.reference("bytes-per-token"))
    assert feedback_line(mark, 3, 60) == "✓ 128 KiB · read '128k' as 128 KiB (binary) (3s of 60s)"


def test_a_figure_rounded_wrongly_for_its_digits_is_still_wrong(run: Run, tmp_path: Path) -> None:
    # 38.4 tok/s: 38 is the correct rounding to two figures, 37 is not.
    assert graded(run, tmp_path, SEVENTY_B, "3c-batch1-ceiling", "37 tok/s")["verdict"] == "wrong"


def test_a_size_written_in_gigabits_on_a_memory_step_is_read_as_bytes(
        run: Run, tmp_path: Path) -> None:
    result = graded(run, tmp_path, EIGHT_B, "kv-budget", "52 Gb")
    assert result["verdict"] == "correct" and "Read 'Gb' as GB (bytes)" in result["feedback"]


def test_two_mistakes_made_together_are_named_together(run: Run, tmp_path: Path) -> None:
    # 80 − 16 = 64 GB: neither the utilisation cap nor the reserve taken off.
    result = graded(run, tmp_path, EIGHT_B, "kv-budget", "64 GB")
    assert sorted(result["misconceptions"]) == ["forgot-reserve", "full-hbm"]


def test_head_dim_taken_as_hidden_over_heads_is_named_at_the_head_dim_step(
        run: Run, tmp_path: Path) -> None:
    result = graded(run, tmp_path, "sliding-window-kv", "gemma-head-dim", "224")
    assert result["misconception"] == "head-dim-from-hidden"


def test_a_per_gpu_count_is_named_when_it_is_the_floor_of_the_share(
        run: Run, tmp_path: Path) -> None:
    # 21 sequences across two GPUs; 10 is the floor of one GPU's share.
    result = graded(run, tmp_path, SEVENTY_B, "4e", "10")
    assert "per-gpu-vs-total" in result["misconceptions"]


def test_a_step_time_worked_from_gib_is_named_gb_gib(run: Run, tmp_path: Path) -> None:
    # 180.9 GB taken as 168.5 "GB" (its GiB figure): 31.8 ms instead of 34.1 ms.
    assert graded(run, tmp_path, SEVENTY_B, "3a-step-time", "31.8 ms")["misconception"] == "gb-gib"


def test_review_measures_the_error_in_the_steps_unit(run: Run) -> None:
    # 131072 bytes where KiB is asked: 0% off, not 102,300%.
    run("practice", EIGHT_B, input="32\n8\n128\n2\n2*32*8*128*2 = 131072 bytes\n")
    page = run("review", "1").output
    row = next(line for line in page.splitlines() if line.startswith("bytes-per-token"))
    assert "0%" in row and "102" not in row
