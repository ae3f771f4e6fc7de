"""Prose computed from the deployment, not copied from the default: the sentences a worked
solution states about a card or a budget hold for the card and the budget it is about."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from click.testing import Result

Run = Callable[..., Result]


def paragraph(text: str, opening: str) -> str:
    start = text.index(opening)
    return " ".join(text[start:text.index("\n\n", start)].split())


def test_the_driver_gain_on_an_h200_pair_is_the_h200s(run: Run) -> None:
    # 2 GPUs × (151.0 − 141 GB) × 0.9 = 17.6 GB (H200: 144,384 MiB reported)
    text = paragraph(run("solution", "llama31-8b-h100", "--gpu", "h200").output,
                     "Two more things")
    assert "H200" in text and "H100" not in text
    assert "adds about 16.4 GB"  # 2 × (150.11 − 141) × 0.9, CUDA's total in text


def test_the_driver_gain_on_the_default_h100_pair_is_computed(run: Run) -> None:
    # 2 × (85.52 − 80) × 0.9 = 9.9 GB, not the "about 8" once written by hand
    text = paragraph(run("solution", "llama31-8b-h100").output, "Two more things")
    assert "adds about 9.9 GB" in text


def test_the_observed_lower_follow_up_does_not_blame_reservations(run: Run) -> None:
    text = run("solution", "llama31-8b-h100").output
    section = text[text.index("Observed concurrency is 40% below"):text.index("Red flags")]
    assert "Not max_model_len reservations, nor fragmentation" in " ".join(section.split())
    assert "Block fragmentation**:" not in section


def test_a_deepseek_variants_careful_budget_is_its_own(run: Run) -> None:
    text = " ".join(run("solution", "deepseek-v3-mla-h200", "--variant", "2").output.split())
    found = re.search(r"nearer (\d+) GB than (\d+) GB", text)
    assert found is not None
    careful, budget = int(found.group(1)), int(found.group(2))
    # 7 GPUs' copies of about 1.1 GB beyond the share counted
    assert 7 <= budget - careful <= 8


def test_no_solution_states_a_figure_twice_in_one_unit(run: Run) -> None:
    # "16 GiB (16 GiB)": a hand-written unit beside a computed one
    repeated = re.compile(r"(\d[\d,.]* (?:GiB|GB|MiB|MB|KiB|KB|B)) \(\1\)")
    drills = [entry["id"] for entry in json.loads(run("list", "--json").output)]
    found = {drill: repeated.findall(run("solution", drill).output) for drill in drills}
    assert {drill: hits for drill, hits in found.items() if hits} == {}


def test_a_plan_at_the_datasheet_says_its_own_overstatement(run: Run) -> None:
    # at the default batch of 96 the plan assumes 70%: 1 ÷ 0.70 ≈ 1.4×; at 32, 62%: 1.6×
    text = " ".join(run("solution", "decode-roofline-vs-measured").output.split())
    assert re.search(r"promises about 1\.[46]× the throughput", text)


def test_moe_decode_on_qwen3_counts_its_own_experts(run: Run) -> None:
    # 128 experts, 8 per token: 1 − (120/128)^16 = 64% at batch 16; FLOPs without the input
    # embedding (151,936 × 2,048, a lookup): 30.22B ÷ 3.04B = 9.9×
    text = " ".join(run("solution", "mixtral-moe-decode", "--model", "qwen3-30b-a3b")
                    .output.split())
    assert "8 of 128 experts" in text and "(6/8)" not in text and "13B" not in text
    assert "9.9× fewer FLOPs" in text
    assert "64% at batch 16" in text


def test_the_405b_drill_refuses_another_model_before_its_other_requirements(run: Run) -> None:
    # Qwen3-235B-A22B has 4 KV heads, copied at TP=8; but no model other than the 405B is the
    # drill's, so that is the reason given, with what does run (no other drill fits it)
    result = run("solution", "llama31-405b-h200-tp", "--model", "qwen3-235b-a22b", ok=False)
    assert result.exit_code == 2
    assert "is Llama-3.1-405B's own" in result.stderr
    assert result.stderr.rstrip().endswith("re-target it with --gpu only, or size "
                                           "Qwen3-235B-A22B with kvdrill calc --model "
                                           "qwen3-235b-a22b")


def test_the_405b_drill_is_built_on_its_own_fp8_release(run: Run) -> None:
    # its figures are Meta's FP8 release's: another model is refused, not priced as if FP8
    result = run("show", "llama31-405b-h200-tp", "--model", "qwen3-32b", ok=False)
    assert result.exit_code == 2
    assert "built on Meta's FP8 release of Llama-3.1-405B" in result.stderr


def test_the_head_dim_hint_is_true_of_the_target(run: Run) -> None:
    # Qwen3-32B: 5,120 ÷ 64 = 80, but its head_dim is 128
    text = run("show", "llama31-8b-h100", "--model", "qwen3-32b", "--gpu", "h200",
               "--json").output
    assert "does not give it for this model" in text
    assert "works for this model" not in text


def test_llama2_refuses_a_mixture_of_experts_whose_step_grows_with_the_batch(run: Run) -> None:
    # twice the batch touches more of GPT-OSS-120B's experts: "the step does not change" is
    # false of it
    result = run("solution", "llama2-70b-mi300x", "--model", "gpt-oss-120b", ok=False)
    assert result.exit_code == 2
    assert "GPT-OSS-120B is a mixture of experts" in " ".join(result.stderr.split())


def test_paged_blocks_refuses_a_windowed_model(run: Run) -> None:
    # vLLM puts GPT-OSS-20B's 12 sliding and 12 full layers in two KV-cache groups
    result = run("show", "paged-blocks-vllm", "--model", "gpt-oss-20b", ok=False)
    assert result.exit_code == 2
    assert "12 windowed layers" in result.stderr


def test_a_drill_that_asks_for_the_live_context_does_not_give_it(run: Run) -> None:
    # multi-turn-growth's first step asks for the 6,144 live tokens
    text = run("show", "multi-turn-growth").output
    assert "context: 6,144 tokens" not in text


def test_a_drill_that_computes_a_new_context_still_gives_the_planned_one(run: Run) -> None:
    assert "context: 4,096 tokens" in run("show", "observed-concurrency-lower").output


def test_moe_flops_leave_the_input_embedding_out(run: Run) -> None:
    # GPT-OSS-20B: (20.91 − 0.58) ÷ (4.19 − 0.58) = 5.6×, the 3.61B its publisher quotes
    text = " ".join(run("solution", "mixtral-moe-decode", "--model", "gpt-oss-20b", "--gpu",
                        "l40s").output.split())
    assert "runs 5.6× fewer FLOPs per token" in text and "2 × 3.61B" in text


def test_the_released_70b_checkpoint_is_counted_where_it_moves_the_sessions(run: Run) -> None:
    # 2 × L40S: 78.4 GB usable − 72.66 GB of the released FP8 weights = 5.74 GB of KV ÷ 671 MB
    # a session = 8, not the 11 one byte per parameter leaves (expert pass 28)
    text = " ".join(run("solution", "llama31-8b-h100", "--model", "qwen3-8b", "--gpu", "l40s")
                    .output.split())
    assert "about 2.1 GB less KV: 8 sessions, not 11" in text


def test_the_cards_a_short_fleet_needs_are_counted(run: Run) -> None:
    # Qwen3-14B on an L40S: 14 sessions a card in BF16, 28 in FP8: 80 need 3 cards with FP8 KV
    # (6 in BF16), not "a second card" (expert pass 29)
    text = " ".join(run("solution", "llama31-8b-h100", "--model", "qwen3-14b", "--gpu", "l40s")
                    .output.split())
    assert "so 3 cards with FP8 KV (6 in BF16) carry the 80" in text
