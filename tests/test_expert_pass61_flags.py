"""Expert pass 61 (88 text answers written before grading, on the tree at the start of stop 68,
none read here before): red flags printed 31, wrong 3; wrong claims named 52, wrong 7; partly
right answers missed 11 of 22; credit statements false 17 of 260; four sentences the tool
prints that are not true. These are its false flags, its wrong sentences, the off-step credit
of generic words and the level said of one explanation graded alone, each said here in other
words than the expert's, through the real matcher or the real CLI. (Its missed claims are in
test_expert_pass61.py.)"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from click.testing import Result

from trainer.drills.loader import find_drill
from trainer.marking.claims import claims_made


def _claims(drill_id: str, step_id: str, text: str) -> list[str]:
    step = find_drill(drill_id)[0].step(step_id)
    return [made.claim.id for made in claims_made(step, text)]


def _graded(run: Callable[..., Result], tmp_path: Path, drill_id: str, step_id: str,
            text: str) -> dict[str, Any]:
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text(json.dumps({"drill": drill_id, step_id: text}), encoding="utf-8")
    graded: dict[str, Any] = json.loads(
        run("grade", drill_id, "--answers", str(sheet), "--json", ok=False).output)
    return graded


def _evidence(graded: dict[str, Any]) -> str:
    """Every credit line of a grade's text dimensions, as one string."""
    return " ".join(e for d in graded["rubric"]["dimensions"].values() for e in d["evidence"])


def test_a_prefill_called_compute_bound_is_no_claim_that_decode_is() -> None:
    # (F2: "~112 ms of compute-bound prefill ~ 14 decode steps" flagged as decode compute-bound)
    text = ("The stall is time, not memory: a 4k prompt is about 110 ms of compute-bound "
            "prefill, some fourteen decode steps in which every stream waits.")
    assert _claims("prefill-vs-decode", "stalls-and-levers", text) == []


def test_decode_called_compute_bound_is_still_flagged() -> None:
    assert "decode-compute-bound" in _claims(
        "prefill-vs-decode", "stalls-and-levers",
        "Prefill is compute-bound, and decode is compute-bound too, so the two fight for FLOPs.")


def test_five_times_the_bandwidth_is_no_claim_of_a_five_times_speed_up() -> None:
    # (F1: "verifying 5 tokens costs 5x the bandwidth" answered with the k + 1 speed-up)
    claims = _claims("speculative-decoding", "when-it-pays",
                     "At batch 1 checking the five drafted tokens costs 5x the bandwidth.")
    assert "speedup-is-k-plus-one" not in claims


def test_speculation_kept_for_large_batches_is_flagged() -> None:
    assert "pays-only-when-compute-bound" in _claims(
        "speculative-decoding", "when-it-pays",
        "Speculation only helps when compute-bound, so I'd enable it at large batch only.")


def test_an_alert_on_gpu_utilisation_is_answered_about_utilisation_not_memory() -> None:
    # (F4, F5: "alert on nvidia-smi GPU utilization hitting 100%" rebutted as an alert on GPU
    # memory, and as raising gpu_memory_utilization to 1.0)
    claims = _claims("llama31-8b-h100", "policy",
                     "Alert when nvidia-smi shows GPU utilization at 100%: then we are full.")
    assert claims == ["alert-on-gpu-utilization"]


def test_an_alert_on_gpu_memory_is_still_answered_about_memory() -> None:
    assert _claims("llama31-8b-h100", "policy",
                   "Alert when nvidia-smi shows GPU memory above 90%.") == ["alert-on-gpu-memory"]


def test_raising_the_utilisation_to_the_whole_card_is_still_flagged() -> None:
    assert "utilization-to-the-whole-card" in _claims(
        "llama31-8b-h100", "policy", "Set gpu_memory_utilization to 1.0 to get more sessions.")


def test_the_rebuttal_of_the_whole_card_does_not_put_activations_outside_vllms_share(
        run: Callable[..., Result], tmp_path: Path) -> None:
    # (S1: vLLM profiles the activation peak and CUDA graphs inside gpu_memory_utilization)
    graded = _graded(run, tmp_path, "llama31-8b-h100", "policy",
                     "Set gpu_memory_utilization to 1.0 to get more sessions.")
    says = [c["says"] for c in graded["rubric"]["wrong_claims"]
            if c["id"] == "utilization-to-the-whole-card"]
    assert says and "outside vLLM's share" not in says[0] and "profile" in says[0]


def test_the_stall_rebuttal_names_the_levers_the_answer_proposed(
        run: Callable[..., Result], tmp_path: Path) -> None:
    # (F3, S2: "raise max_num_seqs" rebutted as "FP8 KV, more memory or prefix caching", and
    # prefix caching said never to shorten a prefill, which a cache hit does)
    graded = _graded(run, tmp_path, "prefill-vs-decode", "stalls-and-levers",
                     "Raising max_num_seqs fixes the stall.")
    says = " ".join(c["says"] for c in graded["rubric"]["wrong_claims"])
    assert "max_num_seqs" in says and "prefix caching only skips" in says


def test_a_max_model_len_said_in_why_paging_earns_no_start_up_fix(
        run: Callable[..., Result], tmp_path: Path) -> None:
    # (C8-C10: "a server reserving max_model_len gives each request 8,192 slots" credited as
    # the refusal step's "fix the start-up failure with max_model_len")
    graded = _graded(run, tmp_path, "paged-blocks-vllm", "why-paging",
                     "A server that reserves max_model_len up front gives every request 8,192 "
                     "slots; paging hands out 16-token blocks as the request grows.")
    assert "Fix the start-up failure" not in _evidence(graded)


def test_a_lowered_max_model_len_in_the_refusal_step_still_earns_the_fix(
        run: Callable[..., Result], tmp_path: Path) -> None:
    graded = _graded(run, tmp_path, "paged-blocks-vllm", "refusal",
                     "It starts only if one max_model_len request fits: cap max_model_len to "
                     "32k and it starts.")
    assert "Fix the start-up failure" in _evidence(graded)


def test_one_explanation_graded_alone_is_given_no_level_rather_than_not_yet_solid(
        run: Callable[..., Result], tmp_path: Path) -> None:
    # (L0: every text answer graded alone read "not yet Solid: it needs Arithmetic 3/4")
    graded = _graded(run, tmp_path, "observed-concurrency-lower", "evidence",
                     "Read the KV-cache usage gauge at p95 and the preemption counter.")
    assert graded["rubric"]["level"] is None
    assert graded["rubric"]["short_of"].startswith("no level: 1 of ")


def test_an_attempt_with_a_numeric_answer_is_still_told_what_it_needs(
        run: Callable[..., Result], tmp_path: Path) -> None:
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text(json.dumps({"drill": "observed-concurrency-lower", "kv-budget": "50 GB",
                                 "evidence": "Read the KV-cache usage gauge at p95."}),
                     encoding="utf-8")
    graded = json.loads(run("grade", "observed-concurrency-lower", "--answers", str(sheet),
                            "--json", ok=False).output)
    assert graded["rubric"]["short_of"].startswith("not yet ")


def test_each_gpu_holding_only_its_own_latents_is_no_replication_under_tp(
        run: Callable[..., Result], tmp_path: Path) -> None:
    # (C17: DP attention's "each GPU holds only its own sessions' latents" credited as TP
    # holding the whole latent on every GPU)
    graded = _graded(run, tmp_path, "deepseek-v3-mla-h200", "experts-and-levers",
                     "With DP attention each GPU holds only its own sessions' latents, so the "
                     "16 sessions grow to about 88.")
    assert "no heads to split" not in _evidence(graded)


def test_a_follow_up_answered_near_the_step_befores_answer_raises_no_red_flag(
        run: Callable[..., Result], tmp_path: Path) -> None:
    # (found practising at 80 columns: 189 sessions for BF16 KV after ~190 with FP8 KV read
    # as a per-GPU mix-up for sure, with its red flag; the FP8 answer kept gives it as well)
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text(json.dumps({"drill": "llama31-70b-tp2-h100", "sessions": "~190",
                                 "sessions-bf16-kv": "189 sessions"}), encoding="utf-8")
    graded = json.loads(run("grade", "llama31-70b-tp2-h100", "--answers", str(sheet),
                            "--model", "qwen3-32b", "--json", ok=False).output)
    assert graded["rubric"]["red_flags"] == []


def test_a_per_gpu_mix_up_far_from_any_earlier_answer_is_still_flagged(
        run: Callable[..., Result], tmp_path: Path) -> None:
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text(json.dumps({"drill": "llama31-70b-tp2-h100", "kv-heads-per-gpu": "8"}),
                     encoding="utf-8")
    graded = json.loads(run("grade", "llama31-70b-tp2-h100", "--answers", str(sheet),
                            "--json", ok=False).output)
    assert [flag["id"] for flag in graded["rubric"]["red_flags"]] == ["per-gpu-confusion"]


# Expert pass 63 (105 answers written before grading on the tree after pass 61's fixes, none
# read here before): red flags printed 36, wrong 2; right and hedged answers flagged 0 of 42;
# partly right answers missed 23 of 42; credit statements false 15 of 299.

def test_a_bigger_chunk_said_to_be_free_is_answered_as_bigger_is_better() -> None:
    # (F1: "a bigger chunk is free … chunking only hurts TTFT" answered as chunking costing the
    # document's user nothing, the one thing the answer got right)
    claims = _claims("chunked-prefill-tpot", "trade-off",
                     "Make the chunk as big as possible: the weights are read once anyway, so a "
                     "bigger chunk is free.")
    assert claims == ["bigger-chunks-always-better"]


def test_five_times_the_weight_reads_is_no_speed_up_claim() -> None:
    # (F2: "verifying 5 tokens needs 5x the weight reads … it only pays when the GPU is
    # compute-bound" corrected as a k + 1 speed-up)
    claims = _claims("speculative-decoding", "when-it-pays",
                     "Verifying the 5 drafted tokens takes 5x the weight reads, so it only pays "
                     "when the GPU is compute-bound.")
    assert "speedup-is-k-plus-one" not in claims and "pays-only-when-compute-bound" in claims


def test_sm_utilisation_is_no_claim_about_gpu_memory() -> None:
    # (F3: "watch SM utilisation" listed as the GPU-memory claim as well as the compute one)
    claims = _claims("long-context-tier", "operations",
                     "On the chat pool, watch SM utilisation: long sessions show up as spikes.")
    assert "gpu-memory-says-full" not in claims and claims


def test_a_figure_the_rubric_does_not_list_is_not_said_to_be_foreign_to_the_drill(
        run: Callable[..., Result], tmp_path: Path) -> None:
    # (S1: "~62% at 32 seqs", the drill's own measured figure, said to be "figures that are
    # not the drill's")
    graded = _graded(run, tmp_path, "decode-roofline-vs-measured", "batch1-why",
                     "Batch 1 reaches well under the bandwidth; achieved BW climbs to ~62% at "
                     "32 seqs.")
    assert "not the drill's" not in _evidence(graded)


def test_the_live_context_named_as_a_cause_is_no_plan_to_measure_it(
        run: Callable[..., Result], tmp_path: Path) -> None:
    # (pass 63 C3, C6: a hypotheses answer's "live ctx ~6,800" credited as "measure the real
    # live context from token histograms or traces")
    graded = _graded(run, tmp_path, "observed-concurrency-lower", "hypotheses",
                     "The prompt-only average is the cause: the live context is nearer 6,800 "
                     "tokens, which alone gives 58 sessions.")
    assert "Measure the real live context" not in _evidence(graded)


def test_vllm_preallocating_its_pool_is_no_per_request_reservation(
        run: Callable[..., Result], tmp_path: Path) -> None:
    # (pass 63 C7: "vLLM preallocates the cache, so nvidia-smi always shows ~90%" credited as
    # ruling out the max_model_len reservation)
    graded = _graded(run, tmp_path, "observed-concurrency-lower", "evidence",
                     "Not nvidia-smi memory: vLLM preallocates the cache so it always reads "
                     "about 90%. Read KV usage at p95 and the preemption counter.")
    assert "Reserving max_model_len per request" not in _evidence(graded)


# Expert pass 64 (100 answers written before grading, on the tree after pass 63's fixes, none
# read here before): red flags 34, wrong 4; hedged answers flagged 2 of 20.

def test_the_instinct_to_buy_named_to_be_overruled_is_no_claim_to_buy() -> None:
    # (F2: "the instinct is to buy 40% more GPUs, but …" flagged as buying before measuring)
    claims = _claims("observed-concurrency-lower", "action",
                     "The instinct is to buy 40% more GPUs, but the arithmetic was right and "
                     "the input wasn't: re-plan at the real live context first.")
    assert "buy-before-measuring" not in claims


def test_flops_set_against_the_bytes_read_raise_no_flops_flag(
        run: Callable[..., Result], tmp_path: Path) -> None:
    # (F1: "it's not 'whenever the GPU has spare FLOPs' — the condition is bytes")
    graded = _graded(run, tmp_path, "llama2-70b-mi300x", "5c",
                     "Not when the GPU has spare FLOPs: the condition is bytes, the weights "
                     "against the KV every step reads.")
    assert "flops-not-memory" not in [flag["id"] for flag in graded["rubric"]["red_flags"]]


def test_int8_said_to_speed_the_step_by_flops_is_not_answered_as_a_tp_claim(
        run: Callable[..., Result], tmp_path: Path) -> None:
    # (F3: "int8 tensor cores double the FLOPs" answered "A second GPU helps decode by …")
    graded = _graded(run, tmp_path, "llama2-70b-mi300x", "4f",
                     "int8 weights make the step faster because the int8 tensor cores double "
                     "the FLOPs.")
    says = " ".join(c["says"] for c in graded["rubric"]["wrong_claims"])
    assert says and not says.startswith("A second GPU")


# Expert pass 65 (115 answers written before grading, on the tree after pass 64's fixes, none
# read here before): answers flagged 36, wrongly 3; hedged answers flagged 1 of 23.

def test_a_condition_on_the_eightfold_cut_is_no_claim_that_gemma_windows_every_layer() -> None:
    # (F1: "…, but that's only true when every layer is windowed like Mistral")
    claims = _claims("sliding-window-kv", "why-different",
                     "A 4k window cuts a session 8x at 32k, but that's only true when every "
                     "layer is windowed like Mistral. Gemma-2's 21 global layers keep "
                     "everything.")
    assert "gemma-windows-every-layer" not in claims


def test_fp8_said_to_halve_the_kv_is_no_claim_that_tp16_halves_it() -> None:
    # (F2: "the budget triples because fp8 KV halves the KV on the second node")
    claims = _claims("llama31-405b-h200-tp", "why-less",
                     "The budget triples because fp8 KV halves the KV on the second node.")
    assert "tp16-halves-kv-per-gpu" not in claims


def test_multi_query_attention_is_not_read_as_a_query_only_width() -> None:
    # (F3: "256 … because Gemma uses multi-query attention" also named query-width-not-cached)
    claims = _claims("sliding-window-kv", "why-different",
                     "Head dim is 256 because Gemma uses multi-query attention with one KV head.")
    assert "query-width-not-cached" not in claims and "gemma-uses-mqa" in claims
