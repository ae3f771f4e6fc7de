"""Solver quantities the drill library needs: MoE reads, prefill, prefix sharing, paging,
and the measured-against-roofline ratio."""

from __future__ import annotations

import pytest

from trainer.capacity.deployment import Deployment
from trainer.capacity.presets import build_deployment
from trainer.capacity.solver import solve, value_of
from trainer.errors import InvalidInput
from trainer.reading.exact import Fraction


def deploy(model: str, gpu: str, **values: object) -> Deployment:
    return build_deployment(model, gpu, values)[0]


def test_moe_decode_at_batch_1_reads_only_the_active_experts() -> None:
    d = deploy("mixtral-8x7b", "h100", gpus=2, batch=1)
    assert value_of(d, "weights_read_per_step") == pytest.approx(12_879_925_248 * 2, rel=1e-9)


def test_moe_decode_at_a_large_batch_reads_nearly_every_expert() -> None:
    d = deploy("mixtral-8x7b", "h100", gpus=2, batch=64)
    assert value_of(d, "weights_read_per_step") == pytest.approx(46_702_792_704 * 2, rel=1e-6)


def test_moe_weights_are_all_resident() -> None:
    assert solve(deploy("mixtral-8x7b", "h100", gpus=2))["weights_bytes"] == 46_702_792_704 * 2


def test_dense_model_reads_all_weights_at_any_batch() -> None:
    d = deploy("llama-3.1-8b", "h200", batch=1)
    assert value_of(d, "weights_read_per_step") == value_of(d, "weights_bytes")


def test_prefill_flops_are_two_per_layer_parameter_per_token_the_lm_head_once_and_attention(
) -> None:
    # The count behind the measured 550 TFLOP/s (shared/data/README.md): the embedding is a
    # lookup and the LM head (128,256 × 4,096) runs on the last token only.
    d = deploy("llama-3.1-8b", "h200", context=4096)
    head = 128_256 * 4096
    attention = 2 * 32 * 32 * 128 * 4096**2
    assert value_of(d, "prefill_flops") == 2 * (8_030_261_248 - 2 * head) * 4096 + 2 * head \
        + attention


def test_a_tied_lm_head_is_subtracted_once() -> None:
    # Llama-3.2-1B ties its LM head to the embedding: 1,235,814,400 − 128,256 × 2,048 per token.
    d = deploy("llama-3.2-1b", "h200", context=1)
    head = 128_256 * 2048
    attention = 2 * 16 * 32 * 64
    assert value_of(d, "prefill_flops") == 2 * (1_235_814_400 - head) + 2 * head + attention


def test_without_a_vocab_every_parameter_is_charged_per_token() -> None:
    d = deploy("llama-3.1-8b", "h200", context=4096).changed(vocab=None)
    attention = 2 * 32 * 32 * 128 * 4096**2
    assert value_of(d, "prefill_flops") == 2 * 8_030_261_248 * 4096 + attention


def test_a_vocab_too_large_for_the_params_is_refused() -> None:
    with pytest.raises(InvalidInput, match="vocab 10000000 × hidden 4096 leaves no parameters"):
        deploy("llama-3.1-8b", "h200", vocab=10_000_000)


def test_crossover_batch_is_the_gpus_ops_per_byte_over_the_models() -> None:
    d = deploy("llama-3.1-8b", "h200")
    assert float(value_of(d, "crossover_batch")) == pytest.approx(989 / 4.8, rel=1e-9)


def test_prefill_time_needs_tflops() -> None:
    d = deploy("llama-3.1-8b", "h200").changed(tflops=None)
    with pytest.raises(InvalidInput, match="prefill_seconds needs tflops"):
        solve(d)["prefill_seconds"]


def test_a_shared_prefix_is_stored_once_in_whole_blocks() -> None:
    d = deploy("llama-3.1-8b", "h100", context=4096, prefix_tokens=2010, block_size=16,
               utilization=Fraction(9, 10), reserve_gb=Fraction(4))
    s = solve(d)
    assert s["shared_prefix_tokens"] == 2000
    own = 131_072 * (4096 - 2000)
    assert s["max_concurrency_with_prefix"] == (s["kv_budget_bytes"] - 131_072 * 2000) // own


def test_engine_max_concurrency_is_blocks_over_blocks_per_request() -> None:
    s = solve(deploy("llama-3.1-8b", "h100", context=4000, block_size=16))
    assert s["blocks_per_sequence"] == 250
    assert s["engine_max_concurrency"] == s["num_blocks"] / 250


def test_block_waste_is_the_empty_tail_of_the_last_block() -> None:
    s = solve(deploy("llama-3.1-8b", "h100", context=4097, block_size=16))
    assert s["block_waste_fraction"] == Fraction(4112 - 4097, 4112)


def test_measured_step_over_roofline_gives_the_achieved_fraction() -> None:
    d = deploy("llama-3.1-8b", "h200", batch=1, weights_gb=Fraction("15.009841152"),
               measured_step_ms=Fraction("7.60352"))
    assert float(value_of(d, "achieved_bandwidth_fraction")) == pytest.approx(0.426, abs=0.002)
