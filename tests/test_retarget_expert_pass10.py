"""The tenth expert pass (/tmp/expert10.md): refusals that gave a false reason or none, a card
modelled as one device that software sees as two, vision-tower weights priced as read, YaRN
factors from the wrong length, and sentences that did not follow the numbers. Each test fails on
the text as it was before the fix."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from click.testing import Result
from retarget_text import CONFIGS, QWEN3_VL_8B, QWEN3_VL_30B
from retarget_text import practice_text as _practice
from retarget_text import refusal_text as _refusal
from retarget_text import solution_text as _solution

from trainer.drills.loader import find_drill
from trainer.drills.reference import AnswerKey
from trainer.drills.render import render_solution

Run = Callable[..., Result]


# ---- W1: GPT-OSS-120B's draft refusal names GPT-OSS-20B and its slowdown --------------------

def test_gpt_oss_120b_is_refused_for_its_same_tokenizer_drafts_slowdown(run: Run) -> None:
    text = _refusal(run, "speculative-decoding", "--model", "gpt-oss-120b", "--gpu", "h100")
    assert "shares GPT-OSS's o200k_harmony tokenizer, GPT-OSS-20B, is too large to gain " \
        "anything" in text
    assert "it reads 3.72 GB per drafted token against the 5.06 GB a GPT-OSS-120B step reads" \
        in text
    assert "0.64× the speed, a slowdown" in text
    assert "no smaller model shares" not in text


def test_gpt_oss_20bs_refusal_reason_is_true_of_the_whole_family(run: Run) -> None:
    text = _refusal(run, "speculative-decoding", "--model", "gpt-oss-20b", "--gpu", "h100")
    assert "no model smaller than GPT-OSS-20B shares GPT-OSS's o200k_harmony tokenizer" in text


# ---- W2: an MI250X is two 64 GB GPUs to software, with no FP8 path --------------------------

def test_a_card_software_sees_as_two_gpus_is_refused_naming_why(run: Run) -> None:
    text = _refusal(run, "llama31-70b-tp2-h100", "--gpu", "mi250x")
    assert "software sees the AMD Instinct MI250X as 2 GPUs (GCDs) of 64 GB each" in text
    assert "choose a card that is one device, such as mi300x" in text


def test_fp8_weight_only_is_said_only_where_vllm_has_that_path() -> None:
    drill = find_drill("llama31-70b-tp2-h100")[0]
    text = " ".join(render_solution(AnswerKey(drill, dict(drill.givens, gpu="mi250x"))).split())
    assert "W8A16" not in text
    assert "the FP8 checkpoint does not run on this card" in text


# ---- W3: the MoE drill's sessions formula follows the window --------------------------------

def test_the_moe_sessions_formula_counts_the_windowed_layers_window(run: Run) -> None:
    keys = ":skip\n" * 3 + ":formula\n:quit\n"
    text = _practice(run, "mixtral-moe-decode", "--model", "gpt-oss-120b", "--gpu", "h100",
                     keys=keys)
    assert "(full layers × context + windowed layers × window)" in text
    assert "sessions = floor(KV budget ÷ (bytes/token × context))" not in text


# ---- W4: a text decode step does not read the vision tower ----------------------------------

def test_a_speculative_step_on_gemma_3_leaves_the_vision_tower_unread(run: Run,
                                                                    tmp_path: Path) -> None:
    # Gemma-3-4B's config with its table cut to its draft's 262,144 rows (the release pads it
    # to 262,208, which vLLM refuses beside Gemma-3-1B)
    config = json.loads((CONFIGS / "gemma-3-4b-it" / "config.json").read_text("utf-8"))
    config["text_config"]["vocab_size"] = 262_144
    target = tmp_path / "config.json"
    target.write_text(json.dumps(config), encoding="utf-8")
    text = _solution(run, "speculative-decoding", "--model", str(target), "--gpu", "l4")
    assert "target step: (weights + KV) ÷ bandwidth = **26.6 ms**" in text
    assert "at α = 0.5 it is a loss (0.96×)" in text


def test_littles_law_on_a_vl_model_prices_the_text_weights(run: Run) -> None:
    text = _solution(run, "littles-law-capacity", "--model", QWEN3_VL_8B, "--gpu", "h100")
    assert "that is the KV of **83 sequences**" in text


def test_littles_law_situation_says_the_vision_tower_is_not_read(run: Run) -> None:
    text = " ".join(run("show", "littles-law-capacity", "--model", QWEN3_VL_8B, "--gpu",
                        "h100").output.split())
    assert "all 16.38 GB of weights (the 17.53 GB loaded less the 1.2 GB vision tower" in text


# ---- W5 and W6: the YaRN factor is over the trained length, and more than 1 -----------------

def test_qwen3s_yarn_factor_is_over_its_32k_trained_positions(run: Run) -> None:
    text = _solution(run, "long-context-tier", "--model", "qwen3-32b", "--gpu", "b200")
    assert "YaRN with a factor of at least 4 over the 32,768 trained positions" in text
    assert "3.2" not in text


def test_a_yarn_factor_just_above_one_is_rounded_up_not_to_one(run: Run) -> None:
    text = _solution(run, "multi-turn-growth", "--model", "phi-4", "--gpu", "l40s")
    assert "original_max_position_embeddings 16,384 and a factor of at least 1.032" in text
    assert "at least 1)" not in text


# ---- M1: a lever that buys nothing says so ---------------------------------------------------

def test_a_target_whose_uncapped_chat_does_not_fit_is_refused(run: Run) -> None:
    # (pass 10 found "2 instead of 2" chats sold as a gain of prefix caching on this target;
    # its uncapped row holds no chat, and since pass 19 the drill refuses it)
    result = run("solution", "multi-turn-growth", "--model", "phi-4", "--gpu", "a100-40gb",
                 ok=False)
    assert "holds not one sequence" in result.output


# ---- M2: a long request's token is not N× slower --------------------------------------------

def test_a_long_requests_step_is_priced_with_the_weights_it_reads(run: Run) -> None:
    text = _solution(run, "long-context-tier", "--variant", "431902", "--model", "qwen2.5-7b",
                     "--gpu", "h100")
    assert "Its tokens are not 16× slower" in text
    assert "1.23× a chat request's" in text
    assert "that much slower" not in text


# ---- M3: the solution carries the vision note that show carries ------------------------------

def test_the_solution_says_an_uncounted_vision_tower_shrinks_the_cache(run: Run) -> None:
    text = _solution(run, "llama31-8b-h100", "--model", QWEN3_VL_30B, "--gpu", "b200")
    assert "vision tower, about 0.54B parameters (1.1 GB), which the weights here leave out" \
        in text


# ---- M4: batches beyond what the card holds are said to be out of reach ----------------------

def test_a_compute_bound_batch_past_what_fits_is_said_to_be_out_of_reach(run: Run) -> None:
    text = _solution(run, "speculative-decoding", "--model", "llama-3.2-3b", "--gpu", "l4")
    assert "On this card it never gets there: only 11 sequences fit beside the draft" in text


def test_a_break_even_batch_past_what_fits_is_not_a_batch_to_watch_for(run: Run) -> None:
    text = _solution(run, "speculative-decoding", "--model", "llama-3.2-3b", "--gpu", "l4")
    assert "no batch it can run reaches break-even" in text
    assert "when the batch nears that figure" not in text


# ---- NITs -----------------------------------------------------------------------------------

def test_a_windowed_decode_step_adds_one_token_to_the_window(run: Run) -> None:
    text = _solution(run, "sliding-window-kv")
    assert "4,095 plus the 1 new token during decode, 4,096 in all" in text


def test_a_long_prefill_is_counted_in_missed_tokens(run: Run) -> None:
    text = _solution(run, "disaggregated-prefill")
    assert "step is about 8 missed tokens for every stream" in text


def test_a_steps_own_reserve_is_named_when_it_leaves_no_room(run: Run) -> None:
    text = _refusal(run, "observed-concurrency-lower", "--model", "qwen3-32b", "--gpu", "h100")
    assert "whose weights and that step's 10 GB reserve leave no memory" in text


def test_gaudi_is_given_its_own_graphs(run: Run) -> None:
    text = _solution(run, "multi-turn-growth", "--gpu", "gaudi3")
    assert "HPU graphs" in text
    assert "CUDA graphs" not in text


def test_gpt_oss_resident_weights_formula_prices_the_experts_apart(run: Run) -> None:
    text = _practice(run, "mixtral-moe-decode", "--model", "gpt-oss-120b", "--gpu", "h100",
                     keys=":formula\n:quit\n")
    assert "weights = expert params × 17/32 B (mxfp4) + the other params × 2 B (bf16)" in text


def test_calc_on_a_two_device_card_says_how_software_sees_it(run: Run) -> None:
    text = " ".join(run("calc", "--model", "llama-3.1-8b", "--gpu", "mi250x").output.split())
    assert "software sees one AMD Instinct MI250X as 2 GPUs of 64 GB each" in text
    assert "--gpus 2 --hbm-gb 64 --bandwidth-tbs 1.6" in text


def test_the_h100_section_keeps_nvidia_words_on_an_amd_target(run: Run) -> None:
    text = run("solution", "paged-blocks-vllm", "--gpu", "mi300x").output
    section = " ".join(text.split("## 4.", 1)[1].split("## Red flags", 1)[0].split())
    assert "ROCm" not in section and "HIP graphs" not in section
    assert "CUDA's total (a little under nvidia-smi's)" in section
