"""Expert pass 50 (what `grade` says of text answers: 230 answers on all 43 text steps, 49 red
flags raised, 8 wrong; sheets and findings in tests/corpus/text_feedback_pass50): a right
answer is not flagged for an idea it rejects ("not because …", W5, W6), states of a
hypothetical server (W2, W3) or of a transformer beside the hybrid (W4), or the condition it
names (W1); a claim wrong only of the drill's own model is not flagged on another (W7)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result
from retarget_text import flat

Run = Callable[..., Result]
MIN = Path(__file__).parent / "corpus" / "text_feedback_pass50" / "sheets" / "min"


@pytest.mark.parametrize(("finding", "args"), [
    ("W1", ("llama2-70b-mi300x",)),
    ("W2", ("llama31-8b-h100",)),
    ("W3", ("paged-blocks-vllm",)),
    ("W4", ("hybrid-state-kv",)),
    ("W5", ("swap-or-recompute",)),
    ("W6", ("decode-roofline-vs-measured",)),
    ("W7", ("llama2-70b-mi300x", "--model", "gemma-3-27b")),
])
def test_a_right_answer_raises_no_red_flag(run: Run, finding: str, args: tuple[str, ...]
                                           ) -> None:
    said = flat(run("grade", *args, "--answers", str(MIN / f"{finding}.yaml"), ok=False).output)
    assert "Red flag" not in said


def test_the_drills_own_model_still_flags_mha_sequences_that_fit(run: Run,
                                                                tmp_path: Path) -> None:
    # on Llama-2-70B not one 32k MHA sequence fits (85.9 GB against 44 GB)
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text('"2d": Under MHA we can still serve a couple of sequences at 32k.\n',
                     encoding="utf-8")
    said = flat(run("grade", "llama2-70b-mi300x", "--answers", str(sheet), ok=False).output)
    assert "Red flag" in said


def test_verification_as_cheap_as_a_step_is_not_credited_on_an_moe_target(run: Run) -> None:
    # (F23) on Qwen3-30B-A3B verifying 5 tokens touches 27.6% of the experts, not 6.25%: the
    # dense target's "almost free" is not true of it
    sheet = MIN.parent / "merged" / "speculative-decoding__qwen3moe__RA.yaml"
    said = flat(run("grade", "speculative-decoding", "--model", "qwen3-30b-a3b", "--gpu", "h100",
                    "--answers", str(sheet), ok=False).output)
    assert "The target verifies k + 1 tokens in one pass" not in said


def test_verification_as_cheap_as_a_step_is_still_credited_on_a_dense_target(
        run: Run, tmp_path: Path) -> None:
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text("when-it-pays: The target verifies all k + 1 drafted tokens in one forward "
                     "pass that reads the same weights as one decode step, so while decode is "
                     "memory-bound the verification is almost free.\n", encoding="utf-8")
    said = flat(run("grade", "speculative-decoding", "--answers", str(sheet), ok=False).output)
    assert "The target verifies k + 1 tokens in one pass" in said
