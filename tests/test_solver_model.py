"""The capacity model beyond the seeds: TP, replication, MLA, windows, paging, wrong paths,
validation, and agreement between the exact and the symbolic evaluation."""

from __future__ import annotations

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import seed_8b_h100, seed_70b_mi300x
from trainer.capacity.deployment import Deployment
from trainer.capacity.derivation import derivation
from trainer.capacity.presets import build_deployment
from trainer.capacity.solver import FORMULAS, expression, solve, symbol_values, value_of
from trainer.capacity.wrong_paths import wrong_values
from trainer.errors import DoesNotFit, InvalidInput, UnknownName
from trainer.reading.exact import Fraction


def deploy(model: str, gpu: str, **values: object) -> Deployment:
    return build_deployment(model, gpu, values)[0]


def test_mla_holds_61_times_576_times_2_bytes_per_token_per_gpu() -> None:
    s = solve(deploy("deepseek-v3", "h200", gpus=8, kv_dtype="bf16"))
    assert s["kv_bytes_per_token_per_gpu"] == 61 * 576 * 2 == 70_272


def test_mla_latent_is_held_whole_on_every_gpu() -> None:
    s = solve(deploy("deepseek-v3", "h200", gpus=8, kv_dtype="bf16"))
    assert s["kv_bytes_per_token"] == 8 * 70_272


def test_tensor_parallel_splits_kv_heads_across_gpus() -> None:
    s = solve(deploy("llama-3.1-405b", "h200", gpus=8, weights_dtype="fp8"))
    assert s["kv_heads_per_gpu"] == 1
    assert s["kv_bytes_per_token"] == 516_096


def test_more_gpus_than_kv_heads_replicates_heads_and_doubles_kv_per_token() -> None:
    tp8 = solve(deploy("llama-3.1-405b", "h200", gpus=8, weights_dtype="fp8"))
    tp16 = solve(deploy("llama-3.1-405b", "h200", gpus=16, weights_dtype="fp8"))
    assert tp16["kv_heads_per_gpu"] == 1
    assert tp16["kv_bytes_per_token"] == 2 * tp8["kv_bytes_per_token"]


def test_sliding_window_caps_tokens_held_by_every_windowed_layer() -> None:
    windowed = solve(deploy("mistral-7b-v0.1", "h100", context=32768))
    assert windowed["kv_bytes_per_sequence"] == 131_072 * 4096


def test_half_windowed_model_holds_full_context_on_the_other_layers() -> None:
    s = solve(deploy("gemma-2-9b", "h100", context=32768))
    per_layer = 2 * 8 * 256 * 2
    assert s["kv_bytes_per_sequence"] == per_layer * (21 * 32768 + 21 * 4096)


def test_paging_rounds_each_sequence_up_to_whole_blocks() -> None:
    s = solve(seed_8b_h100(context=4097, block_size=16))
    assert s["tokens_held_per_sequence"] == 4112
    assert s["kv_bytes_per_sequence"] == 131_072 * 4112


def test_stated_weight_size_scales_with_the_weights_dtype() -> None:
    assert solve(seed_70b_mi300x(weights_dtype="int8"))["weights_bytes"] == 69 * 10**9


def test_weights_from_params_use_the_dtype_bytes() -> None:
    s = solve(deploy("llama-3.1-8b", "h100", weights_dtype="int4"))
    assert s["weights_bytes"] == Fraction(8_030_261_248, 2)


def test_query_heads_wrong_path_overstates_gqa_cache_four_times() -> None:
    paths = dict(wrong_values(seed_8b_h100(), "kv_bytes_per_token"))
    assert paths["query-heads"] == 4 * 131_072


def test_forgot_factor_2_wrong_path_halves_bytes_per_token() -> None:
    paths = dict(wrong_values(seed_8b_h100(), "kv_bytes_per_token"))
    assert paths["forgot-kv-factor-2"] == 65_536


def test_forgot_reserve_wrong_path_gives_the_calculators_54_gb() -> None:
    paths = dict(wrong_values(seed_70b_mi300x(), "kv_budget_bytes"))
    assert paths["forgot-reserve"] == 54 * 10**9


def test_forgot_weights_wrong_path_counts_weights_as_cache() -> None:
    paths = dict(wrong_values(seed_8b_h100(), "kv_budget_bytes"))
    assert paths["forgot-weights"] == 68 * 10**9


def test_full_hbm_wrong_path_ignores_utilization() -> None:
    paths = dict(wrong_values(seed_8b_h100(), "kv_budget_bytes"))
    assert paths["full-hbm"] == 60 * 10**9


def test_per_gpu_vs_total_offers_both_directions() -> None:
    d = deploy("llama-3.1-70b", "h100", gpus=2, weights_dtype="fp8")
    values = [v for path, v in wrong_values(d, "kv_bytes_per_token") if path == "per-gpu-vs-total"]
    assert sorted(values) == [163_840, 655_360]


def test_wrong_paths_equal_to_the_truth_are_not_offered() -> None:
    ids = [path for path, _ in wrong_values(seed_70b_mi300x(), "kv_budget_bytes")]
    assert "full-hbm" not in ids  # utilisation is already 1 in this seed


def test_unknown_misconception_is_refused() -> None:
    with pytest.raises(UnknownName, match="unknown misconception 'nope'"):
        wrong_values(seed_8b_h100(), "kv_bytes_per_token", ("nope",))


def test_unknown_quantity_is_refused() -> None:
    with pytest.raises(UnknownName, match="unknown quantity 'speed'"):
        value_of(seed_8b_h100(), "speed")


def test_weights_that_do_not_fit_are_refused_with_the_fix() -> None:
    with pytest.raises(DoesNotFit, match=r"do not fit.*add GPUs"):
        solve(deploy("llama-3.1-405b", "h100"))


def test_gpus_that_do_not_divide_kv_heads_are_refused() -> None:
    with pytest.raises(InvalidInput, match="8 KV heads cannot be shared evenly by 3 GPUs"):
        deploy("llama-3.1-70b", "h100", gpus=3)


@pytest.mark.parametrize(("field", "value"), [("layers", 0), ("context", -1), ("gpus", 0),
                                              ("head_dim", 0), ("hbm_gb", Fraction(0)),
                                              ("bandwidth_tbs", Fraction(-1))])
def test_zero_or_negative_sizes_are_refused(field: str, value: object) -> None:
    with pytest.raises(InvalidInput, match=f"{field} must be"):
        deploy("llama-3.1-8b", "h100", **{field: value})


def test_absurdly_large_inputs_are_refused_before_computing() -> None:
    with pytest.raises(InvalidInput, match="larger than any real deployment"):
        deploy("llama-3.1-8b", "h100", layers=10**12)


def test_derivation_shows_units_at_every_step() -> None:
    for step in derivation(seed_70b_mi300x(batch=4)):
        assert any(unit in step.result for unit in ("B", "tokens", "sequence", "s", "elements",
                                                    "heads")), step


def test_derivation_of_bytes_per_token_shows_the_working() -> None:
    step = next(s for s in derivation(seed_8b_h100()) if s.name == "kv_bytes_per_token")
    assert step.working == "2 (K and V) × 32 layers × 8 KV heads × 128 head_dim × 2 B (bf16)"
    assert step.result == "131,072 B (128 KiB)"


shapes = st.fixed_dictionaries({
    "layers": st.integers(1, 128),
    "kv_heads": st.sampled_from([1, 2, 4, 8, 16, 32]),
    "head_dim": st.sampled_from([64, 96, 128, 256]),
    "gpus": st.sampled_from([1, 2, 4, 8, 16, 32, 64]),
    "context": st.integers(1, 1_000_000),
    "block_size": st.sampled_from([1, 16, 64]),
    "hbm_gb": st.integers(16, 300).map(Fraction),
    "params": st.integers(10**8, 2 * 10**11).map(Fraction),
    "kv_dtype": st.sampled_from(["fp32", "bf16", "fp8"]),
    "utilization": st.sampled_from([Fraction(1), Fraction(9, 10), Fraction(1, 2)]),
    "batch": st.one_of(st.none(), st.integers(0, 512)),
    "windowed_layers": st.integers(0, 1),
})


@settings(max_examples=40, deadline=None)
@given(shapes)
def test_exact_evaluation_agrees_with_the_sympy_expressions(shape: dict[str, object]) -> None:
    layers = int(shape["layers"])  # type: ignore[call-overload]
    values = dict(shape, heads=64, bandwidth_tbs=Fraction(3), window=4096)
    values["windowed_layers"] = layers // 2 if shape["windowed_layers"] else 0
    d = Deployment(**values).validate()  # type: ignore[arg-type]
    substitution = symbol_values(d)
    for name in ("kv_bytes_per_token", "kv_bytes_per_sequence", "kv_budget_bytes",
                 "max_concurrency", "bytes_read_per_step", "decode_step_seconds"):
        # xreplace: the same values put in, without subs' pattern matching (40 times faster)
        symbolic = expression(name, d).xreplace(substitution)
        assert sympy.Rational(symbolic) == sympy.Rational(str(value_of(d, name))), name


def test_every_formula_has_a_label_and_a_unit_or_count() -> None:
    for formula in FORMULAS.values():
        assert formula.label and formula.unit in ("B", "tokens", "sequences", "s", "tokens/s",
                                                       "FLOP", "", "B/s", "sequences/s")


def test_head_dim_from_hidden_wrong_path_catches_the_gemma_trap() -> None:
    paths = dict(wrong_values(deploy("gemma-2-9b", "h100"), "kv_bytes_per_token"))
    assert paths["head-dim-from-hidden"] == 2 * 42 * 8 * 224 * 2


def test_mla_kv_pair_wrong_path_doubles_the_latent() -> None:
    d = deploy("deepseek-v3", "h200", gpus=8, kv_dtype="bf16")
    assert dict(wrong_values(d, "kv_bytes_per_token_per_gpu"))["mla-kv-pair"] == 2 * 70_272
