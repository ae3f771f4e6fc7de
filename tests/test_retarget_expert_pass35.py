"""Expert pass 35 (662 outputs recomputed: 2 WRONG, 0 MISLEADING), both in pass 34's fixes: a
refusal names only cards the drill runs on with that model, and a shape two families share
is told apart by its KV heads. Each test of a fix fails on what was printed before; its guards
pass on both."""

from __future__ import annotations

from collections.abc import Callable

from click.testing import Result
from retarget_text import flat, refusal_text

Run = Callable[..., Result]


_refusal = refusal_text


# ---- W1: a suggested card runs the drill --------------------------------------------------------

def test_a_suggested_card_holds_the_drills_batch_not_only_the_weights(run: Run) -> None:
    # 2 × B200 hold Mixtral-8x22B's 281 GB but only 36 sequences of the batch of 64
    said = _refusal(run, "mixtral-moe-decode", "--model", "mixtral-8x22b", "--gpu", "gaudi3")
    assert "choose a larger card with --gpu (such as mi325x)" in said
    run("solution", "mixtral-moe-decode", "--model", "mixtral-8x22b", "--gpu", "mi325x")


def test_where_no_card_runs_the_drill_the_refusal_says_so(run: Run) -> None:
    said = _refusal(run, "llama31-70b-tp2-h100", "--model", "llama-3.1-405b", "--gpu", "h200")
    assert "no card kvdrill knows runs this drill with Llama-3.1-405B: choose a smaller " \
        "model" in said
    assert "choose a larger card" not in said


# ---- W2: Llama-2 is not Mistral -----------------------------------------------------------------

def test_llama_2_7b_is_its_own_familys_draft_not_mistrals(run: Run) -> None:
    said = _refusal(run, "speculative-decoding", "--model", "llama-2-7b", "--gpu", "h200")
    assert "Llama-2-7B is the Llama-2 family's draft" in said and "Mistral" not in said


def test_llama_2_70b_drafts_with_llama_2_7b_where_it_fits(run: Run) -> None:
    # 2 × 32 layers' 13.5 GB draft beside 138 GB of weights: 2.32× at k = 4, α = 0.8
    text = flat(run("solution", "speculative-decoding", "--model", "llama-2-70b", "--gpu",
                    "mi300x").output)
    assert "draft Llama-2-7B" in text and "= **2.32**" in text


def test_mistral_7b_v01_still_drafts_for_mixtral(run: Run) -> None:
    text = flat(run("solution", "speculative-decoding", "--model", "mixtral-8x7b", "--gpu",
                    "b200").output)
    assert "draft Mistral-7B-v0.1" in text


def test_a_familys_larger_target_is_named_with_the_cards_it_runs_on(run: Run) -> None:
    said = _refusal(run, "speculative-decoding", "--model", "mistral-7b-v0.1", "--gpu", "h100")
    assert "choose a larger Mistral model, such as mixtral-8x7b on gaudi3 or h200" in said


# ---- NITs ---------------------------------------------------------------------------------------

def test_the_real_cards_extra_sessions_are_said_as_more_of_the_marketed_count(run: Run) -> None:
    # 30 sessions on the driver's 206 GB against 20 on the marketed 192 GB: 50% more
    text = flat(run("solution", "llama31-8b-h100", "--model", "llama-3.1-70b", "--gpu",
                    "mi300x").output)
    assert "the real card holds about 50% more sessions here (30 against 20)" in text


def test_blackwell_names_its_own_mla_backends_for_an_fp8_latent(run: Run) -> None:
    text = flat(run("solution", "deepseek-v3-mla-h200", "--gpu", "b200").output)
    assert "vLLM's Blackwell MLA backends take an FP8 cache" in text
    assert "FlashMLA and vLLM both support" not in text
