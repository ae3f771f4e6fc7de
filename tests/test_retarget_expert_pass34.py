"""Expert pass 34 (161 outputs recomputed: 1 WRONG, 1 MISLEADING, 5 NIT): a refusal's reason
true against the catalogue, an engine's block size where its backend forces one, and the
small figures a reader checks. Each test of a fix fails on what was printed before; its guards
pass on both."""

from __future__ import annotations

from collections.abc import Callable

from click.testing import Result
from retarget_text import flat

Run = Callable[..., Result]


def _solution(run: Run, *args: str) -> str:
    return flat(run("solution", *args).output)


# ---- W1: Mistral's tokenizer families draft with Mistral-7B -------------------------------------

def test_mixtral_8x7b_drafts_with_mistral_7b_v01_and_loses_at_batch_1(run: Run) -> None:
    # verifying 5 tokens touches 1 − (6/8)^5 = 76.3% of the experts: 0.667× at the roofline
    text = _solution(run, "speculative-decoding", "--model", "mixtral-8x7b", "--gpu", "h200")
    assert "draft Mistral-7B-v0.1" in text
    assert "= **0.667**" in text and "Speculation does not pay here" in text


def test_mistral_7b_v03_is_its_familys_draft_and_names_a_target_that_runs(run: Run) -> None:
    result = run("solution", "speculative-decoding", "--model", "mistral-7b-v0.3", ok=False)
    said = flat(result.stderr)
    assert result.exit_code == 2
    assert "is the Mistral v3 family's draft" in said
    assert "mixtral-8x22b-instruct" not in said  # 281 GB fits on no single card


def test_a_family_without_a_draft_is_still_refused_by_name(run: Run) -> None:
    result = run("solution", "speculative-decoding", "--model", "gpt-oss-120b", "--gpu", "h200",
                 ok=False)
    assert result.exit_code == 2 and "o200k_harmony" in flat(result.stderr)


# ---- M2: MLA pages in the blocks its backend forces ---------------------------------------------

def test_mla_on_hopper_pages_in_64_token_blocks(run: Run) -> None:
    # ⌈6,826 ÷ 64⌉ = 107 blocks = 6,848 slots: 22 empty, 0.321%
    text = _solution(run, "observed-concurrency-lower", "--model", "deepseek-v2-lite",
                     "--gpu", "h100")
    assert "blocks of 64 tokens" in text and "(blocks × 64)" in text
    assert "0.321% of each session empty" in text


def test_mla_on_an_a100_keeps_the_default_block(run: Run) -> None:
    text = _solution(run, "observed-concurrency-lower", "--model", "deepseek-v2-lite",
                     "--gpu", "a100-80gb")
    assert "blocks of 16 tokens" in text


def test_a_gqa_model_on_hopper_keeps_the_default_block(run: Run) -> None:
    text = _solution(run, "observed-concurrency-lower", "--model", "qwen3-8b", "--gpu", "h200")
    assert "blocks of 16 tokens" in text


# ---- NITs ---------------------------------------------------------------------------------------

def test_a_refusal_for_weights_too_big_names_cards_that_hold_them(run: Run) -> None:
    # Jamba-1.5-Mini's 103 GB: a Gaudi 3 (128 GB) or an H200 (141 GB) holds them and a session
    result = run("solution", "hybrid-state-kv", "--model", "jamba-1.5-mini", "--gpu",
                 "h100-pcie", ok=False)
    assert "choose a larger card with --gpu (such as gaudi3 or h200)" in flat(result.stderr)


def test_a_suggested_card_is_one_device() -> None:
    # an MI250X is two GPUs of 64 GB to software: never suggested as the larger card
    from trainer.drills.loader import find_drill
    from trainer.drills.reference import AnswerKey
    from trainer.drills.variants import _cards_that_hold

    drill = find_drill("hybrid-state-kv")[0]
    key = AnswerKey(drill, dict(AnswerKey(drill).givens, model="jamba-1.5-mini",
                                gpu="h100-pcie"))
    assert "mi250x" not in (_cards_that_hold(key) or "")


def test_a_variants_share_of_the_cache_uses_its_own_utilisation(run: Run) -> None:
    # 0.85 × 1% × 85.52 GB ÷ 50.69 GB = 1.4%, not 2%
    text = _solution(run, "paged-blocks-vllm", "--variant", "818722")
    assert "each 1% of that total is about 1% of the KV cache here" in text


def test_a_large_spare_count_has_a_thousands_separator(run: Run) -> None:
    text = _solution(run, "llama31-8b-h100", "--model", "qwen2.5-0.5b", "--gpu", "b200")
    assert "with about 3,039 to spare" in text


def test_the_deepseek_careful_budget_has_thousands_separators(run: Run) -> None:
    text = _solution(run, "deepseek-v3-mla-h200", "--gpu", "mi325x")
    assert "nearer 1,131 GB than 1,138 GB" in text
