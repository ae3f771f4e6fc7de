"""Expert pass 58 re-targeted every drill at preset models, other cards and configs of its own
(about 400 refusals checked, 49 renders read): one config sized wrong, hints false of a
windowed or an MoE target, a measured rate called measured for a model nobody ran it on, each
tested here through the real CLI."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from click.testing import Result

from trainer.drills.loader import find_drill

Run = Callable[..., Result]

NEMOTRON_H = {  # the expert's config: Nemotron-H-8B's shape, with no mlp_hidden_act
    "architectures": ["NemotronHForCausalLM"], "model_type": "nemotron_h", "hidden_size": 4096,
    "num_hidden_layers": 62,
    "hybrid_override_pattern": "M-M-M-M*-" * 6 + "M-M-M-M-",
    "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
    "intermediate_size": 21504, "mamba_num_heads": 128, "mamba_head_dim": 64,
    "ssm_state_size": 128, "n_groups": 8, "conv_kernel": 4, "expand": 2, "vocab_size": 131072,
    "max_position_embeddings": 8192, "torch_dtype": "bfloat16"}


def _config(tmp_path: Path, data: dict[str, object]) -> str:
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(data), encoding="utf-8")
    return str(folder)


def _flat(text: str) -> str:
    return " ".join(text.split())


def _hints(run: Run, drill_id: str, step_id: str, *target: str) -> str:
    """The hints piped practice shows at `step_id` ("?" at every step, then a wrong answer),
    the practice stopped by the end of input right after it."""
    drill, _ = find_drill(drill_id)
    steps = [step.id for step in drill.steps]
    lines = "?\n1\n" * (steps.index(step_id) + 1)
    said = run("practice", drill_id, *target, input=lines).output
    block = said[said.index(f"[{step_id}]"):]
    return _flat(" ".join(line for line in block.splitlines() if line.startswith("Hint:")))


def test_a_nemotron_h_config_without_mlp_hidden_act_is_sized_with_relu2(
        run: Run, tmp_path: Path) -> None:
    # (W4: 11,794,217,472 params, a gated MLP 3 × 4,096 × 21,504 a block; transformers'
    # NemotronHConfig defaults mlp_hidden_act to relu2, up and down projections only)
    out: dict[str, Any] = json.loads(run("calc", "--model", _config(tmp_path, NEMOTRON_H),
                                         "--gpu", "h100", "--json").output)
    assert out["weights_bytes"] == 2 * 9_327_966_720


def test_calc_says_it_filled_nemotron_hs_mlp_activation_by_default(
        run: Run, tmp_path: Path) -> None:
    # (W4: the default was taken silently; other defaults are said among the assumptions)
    said = _flat(run("calc", "--model", _config(tmp_path, NEMOTRON_H), "--gpu", "h100").output)
    assert "default: no mlp_hidden_act: relu2, as transformers' NemotronHConfig defaults" in said
    assert "(an estimate, not a count)" not in said  # a count at transformers' default


def test_a_variant_that_draws_another_model_says_the_measured_rate_is_assumed_for_it(
        run: Run) -> None:
    # (W3: variant 166382 draws Qwen2.5-7B; "at the measured 550 TFLOP/s" under "the model is
    # the drill's own", where the rate was measured with Llama-3.1-8B's shape)
    said = _flat(run("show", "swap-or-recompute", "--variant", "166382", "--gpu", "h200").output)
    assert "model: Qwen2.5-7B" in said
    assert "the model is the drill's own" not in said and "the measured 550" not in said
    assert "550 TFLOP/s measured on this card with Llama-3.1-8B's shape, assumed for " \
           "Qwen2.5-7B" in said


def test_a_windowed_target_is_hinted_its_windowed_layers_at_their_window(run: Run) -> None:
    # (W1: "Bytes per token × context" gives 16.6 GB where Gemma-3-27B's sequence holds 3.12;
    # "half as many tokens" where the 52 windowed layers still hold their 1,024)
    target = ("--model", "gemma-3-27b", "--gpu", "h100")
    per_sequence = _hints(run, "llama2-70b-mi300x", "2b-bytes-per-sequence", *target)
    assert "Bytes per token × context" not in per_sequence
    assert "full-attention layers × context + windowed layers × min(context, 1,024)" in \
        per_sequence
    halved = _hints(run, "llama2-70b-mi300x", "4d", *target)
    assert "Each sequence now holds half as many tokens" not in halved
    assert "the 52 windowed layers still hold min(half the context, 1,024) tokens" in halved


def test_an_moe_target_is_hinted_a_ridge_scaled_by_its_active_parameters(run: Run) -> None:
    # (W2: FLOP/s ÷ bandwidth ÷ (k + 1) gives 41 for Qwen3-30B-A3B on an H200; its ridge is
    # 2,068 ÷ 5 = 414, the dense ridge times total weight bytes ÷ (2 B × active parameters))
    said = _hints(run, "speculative-decoding", "compute-bound-batch",
                  "--model", "qwen3-30b-a3b", "--gpu", "h200")
    assert "(2-byte weights)" not in said
    assert "total weight bytes ÷ (2 B × active parameters)" in said


def test_the_405b_refusal_for_want_of_room_names_cards_that_render(run: Run) -> None:
    # (M2: "names nothing that fits" on H100 and A100; each card it names must render)
    for card in ("h100", "a100-80gb"):
        result = run("solution", "llama31-405b-h200-tp", "--gpu", card, ok=False)
        said = _flat(result.output)
        assert result.exit_code == 2 and "(such as " in said
        named = said.rsplit("(such as ", 1)[1].split(")")[0].replace(" or ", ", ").split(", ")
        assert named and all(name for name in named)
        for other in named:
            run("solution", "llama31-405b-h200-tp", "--gpu", other)


def test_a_card_named_in_a_situation_is_not_made_plural_by_an_s(run: Run) -> None:
    # (N4: "runs on NVIDIA H200 SXM 141GBs", "on AMD Instinct MI300Xs")
    for drill_id, card in (("swap-or-recompute", "h200"), ("littles-law-capacity", "mi300x"),
                           ("disaggregated-prefill", "h200")):
        said = _flat(run("show", drill_id, "--gpu", card).output)
        assert "GBs" not in said and "MI300Xs" not in said and " cards" in said


def test_an_expert_share_short_of_all_is_not_called_every_expert(run: Run) -> None:
    # (N6: "the union of 64 tokens' choices is every expert" beside a table's 98.4%)
    said = _flat(run("solution", "mixtral-moe-decode", "--model", "qwen3-30b-a3b", "--gpu",
                     "h200").output)
    assert "choices is nearly every expert (98.4%)" in said
    assert "choices is every expert" in _flat(run("solution", "mixtral-moe-decode").output)


def test_a_roofline_verdict_on_speculation_is_said_as_one(run: Run) -> None:
    # (N7: section 2 says the measured step times decide; section 4 said "is a loss" flatly)
    said = _flat(run("solution", "speculative-decoding", "--model", "qwen3-30b-a3b", "--gpu",
                     "h200").output)
    assert "is, on the roofline, a loss already at batch 1" in said


def test_gpt_oss_is_said_to_keep_only_its_experts_in_mxfp4(run: Run) -> None:
    # (pass 60, N5: "weights in mxfp4" in the situation, where attention, router and the
    # tables stay bf16, as the worked solution says)
    said = _flat(run("show", "mixtral-moe-decode", "--model", "gpt-oss-20b", "--gpu",
                     "h200").output)
    assert "the experts' weights in mxfp4, the rest in bf16" in said
    assert "- weights in bf16" in run("show", "mixtral-moe-decode").output


def test_a_measured_rate_on_a_re_targeted_shape_says_whose_it_was(run: Run) -> None:
    # (pass 60, N3: "the 2.05 TB/s a batch-1 step really achieved" beside Qwen2.5-7B's bytes)
    said = _flat(run("solution", "prefill-vs-decode", "--model", "qwen2.5-7b", "--gpu",
                     "h200").output)
    assert "a batch-1 step of the Llama-3.1-8B shape really achieved, taken for this shape " \
           "too" in said


def test_a_refusal_for_want_of_positions_names_models_that_run(run: Run) -> None:
    # (pass 60, N4: "choose a model with a longer context" named none, where the refusals for
    # want of memory name two)
    said = _flat(run("solution", "llama31-8b-h100", "--model", "phi-3-mini", "--gpu",
                     "a100-40gb", ok=False).output)
    named = said.split("a longer context (such as ", 1)[1].split(")")[0].split(" or ")
    assert len(named) == 2
    for model in named:
        run("solution", "llama31-8b-h100", "--model", model, "--gpu", "a100-40gb")
