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


# --- expert pass 30 ------------------------------------------------------------------------------

def test_a_twin_of_the_measured_model_keeps_the_measured_ratio(run: Run) -> None:
    # Meta-Llama-3-8B is Llama-3.1-8B weight for weight: the measured 4k pair is its own
    text = flat(run("solution", "prefill-vs-decode", "--model", "llama-3-8b").output)
    assert "The measured pair gives 111.3 ms ÷ 7.60 ms ≈ 15" in text
    assert "that model's ratio, not this one's" not in text


def test_another_shape_is_still_told_the_ratio_is_not_its_own(run: Run) -> None:
    text = flat(run("solution", "prefill-vs-decode", "--model", "qwen2.5-7b").output)
    assert "that model's ratio, not this one's" in text


def test_weights_that_fill_the_card_put_fp8_weights_first(run: Run) -> None:
    # 70B in BF16 on an MI300X: 141.1 of 168.8 GB usable; the released FP8 checkpoint
    # (72.66 GB) leaves 96.1 GB, floor(96.1 GB ÷ 1.342 GB) = 71 sessions in BF16 KV
    text = flat(run("solution", "llama31-8b-h100", "--model", "llama-3.1-70b", "--gpu",
                    "mi300x").output)
    assert "so smaller weights come first: the released FP8 checkpoint (72.66 GB) leaves " \
           "room for 71 sessions in BF16 KV and 143 with FP8 KV as well, enough for the 80 on " \
           "one card" in text


def test_a_card_with_room_keeps_fp8_kv_first(run: Run) -> None:
    text = flat(run("solution", "llama31-8b-h100", "--model", "qwen3-8b", "--gpu",
                    "l40s").output)
    assert "FP8 KV (below) is the first thing to try" in text
    assert "smaller weights come first" not in text


def test_a_128k_tier_the_weights_leave_no_room_for_names_fp8_weights(run: Run) -> None:
    # (68 − 30.5) GB ÷ (12.9 GB ÷ 2) = 5 sessions of 128k with FP8 weights and FP8 KV
    text = flat(run("solution", "llama31-8b-h100", "--model", "qwen3-30b-a3b", "--gpu",
                    "h100").output)
    assert "With FP8 weights as well, which halve the 61.1 GB of weights, one card holds 5" in text


def test_a_tpot_target_that_leaves_one_sequence_is_refused(run: Run) -> None:
    # 16.38 GB of weights ÷ 0.864 TB/s = 19 ms of a 20 ms step: one sequence, no batch
    result = run("solution", "littles-law-capacity", "--model", "qwen3-8b", "--gpu", "l40s",
                 ok=False)
    assert result.exit_code == 2
    assert "reading the weights alone takes 19 ms of each step" in result.stderr
    assert "only 1 sequence meets it" in result.stderr
    assert result.stderr.count("\n") == 1


def test_counts_past_the_engines_default_cap_are_said(run: Run) -> None:
    # 153.57 GB ÷ (56 KiB × 2,560) = 1,046 chats with a running summary; MI300X runs 1,024
    text = flat(run("solution", "multi-turn-growth", "--model", "qwen2.5-7b", "--gpu",
                    "mi300x").output)
    assert "vLLM's default max_num_seqs on this card is 1,024: the counts above it (1,046;" \
        in text
    assert "fit in memory, not in the scheduler" in text


def test_moe_step_times_are_called_floors(run: Run) -> None:
    text = flat(run("solution", "mixtral-moe-decode", "--model", "gpt-oss-20b", "--gpu",
                    "mi300x").output)
    assert "step floor: 3.82 GB ÷ (2 GPUs × 5.3 TB/s) = **0.36 ms**" in text
    assert "A step under a millisecond is bounded by those all-reduces" in text


def test_a_card_where_twice_the_gpus_buy_more_than_twice_is_refused(run: Run) -> None:
    # 8 × H100: (544 − 487.2) GB holds 6 sessions at TP=8, (1,088 − 487.2) GB 35 at TP=16:
    # the title's "more GPUs buy less KV" is false there (expert pass 31, F1)
    result = run("solution", "llama31-405b-h200-tp", "--gpu", "h100", ok=False)
    assert result.exit_code == 2
    assert "twice the GPUs buy less than twice the sessions" in result.stderr
    assert "(35 sequences at TP=16 against 6 at TP=8, 5.83×" in result.stderr
    assert "a smaller model" not in result.stderr


def test_the_drills_lesson_still_renders_where_it_holds(run: Run) -> None:
    assert "Why TP=16 disappoints" in run("solution", "llama31-405b-h200-tp", "--gpu",
                                          "mi300x").output


# --- expert pass 31 ------------------------------------------------------------------------------

def test_an_estimate_past_the_engines_cap_names_the_cap_first(run: Run) -> None:
    # Qwen2.5-3B on an A100 80GB: 409 sessions estimated, vLLM runs 256 there by default
    text = flat(run("solution", "observed-concurrency-lower", "--model", "qwen2.5-3b", "--gpu",
                    "a100-80gb").output)
    assert "| vLLM's default max_num_seqs on this card | 256, 37% below | **yes**, alone" in text
    assert "The engine's cap comes first here." in text


def test_requests_in_flight_past_the_cap_say_what_runs(run: Run) -> None:
    # 368 fit in memory; 256 run at once: 256 × (45 + 15) ÷ 15 = 1,024 open conversations
    text = flat(run("solution", "multi-turn-growth", "--model", "qwen2.5-1.5b", "--gpu",
                    "a100-80gb").output)
    assert "vLLM runs 256 at once on this card (its default), which is about 1,024 open " \
           "conversations" in text


def test_a_window_on_every_layer_is_refused_where_halving_the_context_is_a_lever(
        run: Run) -> None:
    result = run("solution", "llama2-70b-mi300x", "--model", "mistral-7b-v0.1", "--gpu", "b200",
                 ok=False)
    assert result.exit_code == 2
    assert "keeps only its 4,096-token window" in result.stderr


def test_large_counts_in_prose_carry_separators(run: Run) -> None:
    text = flat(run("solution", "paged-blocks-vllm", "--model", "qwen3-30b-a3b", "--gpu",
                    "mi300x").output)
    assert "the same memory holds 1,215 requests" in text


def test_long_sessions_that_take_every_chat_place_take_all(run: Run) -> None:
    # 3 long sessions × 32 chat places each = all 96 of the card's chat places
    text = flat(run("solution", "long-context-tier").output)
    assert "the 3 that fit take all 96 chat places on a card" in text


# --- expert pass 32 ------------------------------------------------------------------------------

def test_a_cap_above_the_concurrency_seen_is_not_the_limit(run: Run) -> None:
    # Llama-3.2-1B on an MI300X: 1,239 estimated, 40% below is ~743, under the 1,024 cap
    text = flat(run("solution", "observed-concurrency-lower", "--model", "llama-3.2-1b",
                    "--gpu", "mi300x").output)
    assert "| 1,024, 17% below | no: above the ~743 seen, so not the limit |" in text
    assert "The engine's cap comes first here." not in text


def test_a_cap_below_the_concurrency_seen_was_raised(run: Run) -> None:
    text = flat(run("solution", "observed-concurrency-lower", "--model", "llama-3.2-1b",
                    "--gpu", "a100-80gb").output)
    assert "no: the ~293 seen is past it, so it was raised" in text


def test_a_128k_session_that_fits_only_with_fp8_weights_says_so(run: Run) -> None:
    # Qwen3-4B on an L4: (17.6 − 4.02) GB ÷ 9.66 GB = 1.4 with FP8 weights and FP8 KV
    text = flat(run("solution", "llama31-8b-h100", "--model", "qwen3-4b", "--gpu", "l4").output)
    assert "With FP8 weights as well, which halve the 8.0 GB of weights, one card holds 1." \
        in text
