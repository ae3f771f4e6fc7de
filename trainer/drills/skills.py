"""The skills a numeric step exercises: one id and one line each, in one place. Drill files tag
every numeric step with one (`skill:`), lint checks it, and the store keeps a spaced-repetition
card per skill beside the one per drill, so `kvdrill practice --weak` can aim at what is
missed. Imports nothing."""

from __future__ import annotations

SKILLS: dict[str, str] = {
    "model-shape": "reading a model's shape: layers, KV heads, head_dim, bytes per element",
    "kv-bytes-per-token": "KV bytes per token: 2 × layers × KV heads × head_dim × bytes",
    "kv-per-sequence": "KV bytes a whole sequence holds: bytes per token × live tokens",
    "live-context": "the live context of a sequence: prompt, generated tokens and history",
    "kv-budget": "the KV budget: HBM × utilization − reserve − weights",
    "concurrency": "sequences or tokens that fit: floor(budget ÷ KV per sequence)",
    "step-time": "a decode step's time: bytes read ÷ bandwidth, and how close to it a GPU gets",
    "throughput": "tokens per second, in aggregate and per sequence",
    "ratio": "how many times bigger or smaller one figure is than another",
    "tp-split": "what each GPU holds under tensor parallelism (KV heads, bytes, weights)",
    "mla": "multi-head latent attention: one latent per layer, no factor 2, on every GPU",
    "paging": "paged KV: blocks per sequence, blocks in the pool, the tail block's waste",
    "prefix-caching": "a shared prompt prefix stored once, and what it frees",
    "sliding-window": "sliding-window layers holding at most `window` tokens",
    "moe": "mixture of experts: resident against active weights",
    "prefill": "prefill against decode: FLOPs, compute time, the crossover batch",
    "kv-transfer": "KV moved between GPUs or hosts: bytes ÷ link bandwidth, against a budget",
    "speculation": "speculative decoding: tokens per verify step, its cost and speed-up",
    "chunked-prefill": "chunked prefill: the chunk a step's latency target leaves room for",
    "offload": "swapping KV to host memory against recomputing it, and a host KV tier",
    "littles-law": "Little's law: in flight = arrival rate × time in the system",
    "hybrid-state": "hybrid models: a constant recurrent state plus KV in few layers",
}

# The skill lint suggests for a step that has none, by the quantity it asks for (a ratio step:
# "ratio"); the author decides, this is only the likeliest.
SUGGESTED: dict[str, str] = {
    "layers": "model-shape", "heads": "model-shape", "kv_heads": "model-shape",
    "head_dim": "model-shape", "kv_bytes_per_element": "model-shape", "kv_width": "model-shape",
    "kv_bytes_per_token": "kv-bytes-per-token",
    "kv_bytes_per_token_per_gpu": "tp-split", "kv_heads_per_gpu": "tp-split",
    "kv_bytes_per_sequence": "kv-per-sequence", "context": "live-context",
    "kv_budget_bytes": "kv-budget", "weights_bytes": "kv-budget",
    "max_concurrency": "concurrency", "max_tokens": "concurrency",
    "engine_max_concurrency": "paging", "num_blocks": "paging",
    "blocks_per_sequence": "paging", "block_waste_fraction": "paging",
    "max_concurrency_with_prefix": "prefix-caching", "shared_prefix_tokens": "prefix-caching",
    "window_tokens_held_per_sequence": "sliding-window",
    "active_weights_bytes": "moe", "weights_read_per_step": "step-time",
    "bytes_read_per_step": "step-time", "decode_step_seconds": "step-time",
    "achieved_bandwidth_fraction": "step-time",
    "tokens_per_second": "throughput", "tokens_per_second_per_sequence": "throughput",
    "batch1_ceiling_tokens_per_second": "throughput",
    "prefill_flops": "prefill", "prefill_seconds": "prefill",
    "decode_flops_per_step": "prefill", "crossover_batch": "prefill",
    "kv_transfer_seconds": "kv-transfer", "disagg_ttft_seconds": "kv-transfer",
    "decode_gpu_seconds_per_request": "kv-transfer", "prefill_gpus_per_decode_gpu": "kv-transfer",
    "draft_weights_bytes": "speculation", "draft_kv_bytes_per_token": "speculation",
    "draft_step_seconds": "speculation", "spec_expected_tokens": "speculation",
    "spec_round_seconds": "speculation", "spec_speedup": "speculation",
    "spec_max_concurrency": "speculation", "spec_compute_bound_batch": "speculation",
    "spec_breakeven_batch": "speculation",
    "chunk_time_budget_seconds": "chunked-prefill", "max_chunk_tokens": "chunked-prefill",
    "chunked_prefill_steps": "chunked-prefill", "chunked_ttft_seconds": "chunked-prefill",
    "long_prompt_prefill_seconds": "chunked-prefill", "unchunked_stall_seconds": "chunked-prefill",
    "swap_seconds": "offload", "swap_breakeven_link": "offload",
    "swap_recompute_crossover_tokens": "offload", "cpu_tier_sessions": "offload",
    "latency_bound_batch": "littles-law", "operating_batch": "littles-law",
    "operating_step_seconds": "littles-law", "request_seconds": "littles-law",
    "sustainable_qps": "littles-law", "requests_in_flight": "littles-law",
    "open_conversations_at_rate": "littles-law", "replicas_for_load": "littles-law",
    "open_conversations": "littles-law", "weights_read_seconds": "step-time",
    "mixed_step_kv_seconds": "chunked-prefill",
    "attention_layers": "hybrid-state", "kv_layers": "hybrid-state",
    "recurrent_state_bytes_per_sequence": "hybrid-state", "state_equivalent_tokens": "hybrid-state",
    "weights_per_gpu_bytes": "tp-split", "replicated_attention_bytes": "tp-split",
}


def suggested_skill(answer: str | None) -> str:
    """The skill to suggest for a step asking for `answer` (None: a ratio step)."""
    if answer is None:
        return "ratio"
    return SUGGESTED.get(answer, "kv-budget")
