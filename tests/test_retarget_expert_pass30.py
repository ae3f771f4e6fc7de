"""Expert pass 29's F1 and what followed: a follow-up that moves to a bigger model chooses how
many GPUs it needs on the target card (gpus: {fit: [2, 4, 8]}), and its prompt, hints, formula
and worked solution say that many, so the 8B drill renders on an A100 40GB or an L4 instead of
refusing every model there. Each test of a fix fails on what was printed before; its guards
pass on both."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from click.testing import Result
from pydantic import ValidationError
from retarget_text import flat

from trainer.drills.loader import find_drill
from trainer.drills.schema import Step as StepSchema
from trainer.drills.variants import answer_key, make_target

Run = Callable[..., Result]
STEP = "followup-70b-tp-sessions"


def test_the_70b_follow_up_takes_four_a100_40gbs_instead_of_refusing_the_drill(run: Run) -> None:
    text = flat(run("solution", "llama31-8b-h100", "--gpu", "a100-40gb").output)
    assert "Llama-3.1-70B on four NVIDIA A100 40GB GPUs" in text
    # 4 × (40 × 0.9 − 4) GB − 70.55 GB of FP8 weights = 57.4 GB; ÷ (160 KiB × 4,096) = 85
    assert "4 GPUs × (40 GB memory × 0.9 − 4 GB reserve) = 128 GB" in text
    assert "**85 sequences**" in text


def test_the_prompt_and_hint_say_the_count_the_key_uses(run: Run) -> None:
    drill, _ = find_drill("llama31-8b-h100")
    key = answer_key(drill, None, make_target(None, "a100-40gb"))
    assert key.deployment(STEP).gpus == 4
    shown = flat(run("show", "llama31-8b-h100", "--gpu", "a100-40gb").output)
    assert "on four NVIDIA A100 40GB GPUs with 4-way tensor parallelism" in shown
    assert "fit across the four GPUs?" in shown


def test_eight_l4s_hold_the_70b_where_two_or_four_do_not(run: Run) -> None:
    # 4 × (24 × 0.9 − 4) = 70.4 GB is below the 70.55 GB of weights; 8 × 17.6 = 140.8 GB is not
    text = flat(run("solution", "llama31-8b-h100", "--model", "llama-3.2-3b", "--gpu",
                    "l4").output)
    assert "Llama-3.1-70B on eight NVIDIA L4 GPUs" in text
    assert "each GPU holds an eighth of every token's KV" in text


def test_the_drills_own_card_keeps_the_pair(run: Run) -> None:
    text = flat(run("solution", "llama31-8b-h100").output)
    assert "Llama-3.1-70B on two NVIDIA H100 SXM 80GB GPUs" in text
    assert "each GPU holds half of every token's KV" in text
    assert "comes from the total across the pair" in text


@pytest.mark.parametrize("fit", [{"fit": [4, 2]}, {"fit": [2, 2]}, {"fit": [0, 2]}])
def test_a_fit_list_must_be_counts_fewest_first(fit: dict[str, list[int]]) -> None:
    with pytest.raises(ValidationError, match="fewest first"):
        StepSchema.model_validate({"id": "s", "prompt": "p", "answer": "max_concurrency",
                                   "unit": "sequences", "with": {"gpus": fit}})


def test_fit_chooses_gpus_only() -> None:
    with pytest.raises(ValidationError, match="for gpus only"):
        StepSchema.model_validate({"id": "s", "prompt": "p", "answer": "max_concurrency",
                                   "unit": "sequences", "with": {"context": {"fit": [2, 4]}}})
