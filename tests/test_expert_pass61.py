"""Expert pass 61 (88 text answers on 22 steps, written before grading, none read here before):
P answers missed 11 of 22, W answers missed 3 of 22, and 17 of 166 concept credits false, most
of them earned by words of a wrong sentence. Each miss is checked here on the expert's answer
and in other words, through the real matcher; the right and hedged answers to the same steps
stay unflagged."""

from __future__ import annotations

import pytest

from tests.expert_claims import claims_named as _claims
from tests.expert_claims import expert_answer


def _expert(answer_id: str) -> str:
    return expert_answer("expert_pass61_answers.yaml", answer_id)


# The misses (M1–M14), each on the expert's answer and said again in other words.
@pytest.mark.parametrize("drill_id, step_id, answer, claim", [
    # M1: a GPU's KV per token said to halve at TP=16
    ("llama31-405b-h200-tp", "why-less", "expert:llama31-405b-h200-tp/why-less/P",
     "per-gpu-token-cost-halves"),
    ("llama31-405b-h200-tp", "why-less",
     "With 16 GPUs each GPU pays only about 16 KiB per token, though the job stores 504 KiB.",
     "per-gpu-token-cost-halves"),
    # M2: DP attention said to beat the pipeline and the replicas on a dense 405B
    ("llama31-405b-h200-tp", "fix", "expert:llama31-405b-h200-tp/fix/P",
     "dp-attention-would-win"),
    ("llama31-405b-h200-tp", "fix",
     "Data-parallel attention would do even better than PP2, as no KV head is kept twice.",
     "dp-attention-would-win"),
    # M3: the token line said to be sized by the freest GPU
    ("llama31-70b-tp2-h100", "per-gpu-vs-total-explain",
     "expert:llama31-70b-tp2-h100/per-gpu-vs-total-explain/P", "sized-by-most-free-gpu"),
    ("llama31-70b-tp2-h100", "per-gpu-vs-total-explain",
     "vLLM sizes the token figure from the GPU with the most headroom.",
     "sized-by-most-free-gpu"),
    # M4 (and S4): one all-reduce per layer
    ("llama31-70b-tp2-h100", "tp-trade", "expert:llama31-70b-tp2-h100/tp-trade/P",
     "one-allreduce-per-layer"),
    ("llama31-70b-tp2-h100", "tp-trade",
     "It costs a second H100 and a single all-reduce per layer over NVLink.",
     "one-allreduce-per-layer"),
    ("llama31-405b-h200-tp", "fix",
     "TP=16 also pays 126 all-reduces per step across the nodes.", "one-allreduce-per-layer"),
    # M5: FP8 KV said to halve the batch-1 step ("and it roughly halves": the subject again)
    ("mixtral-moe-decode", "serving-levers", "expert:mixtral-moe-decode/serving-levers/P",
     "fp8-kv-speeds-batch-1"),
    ("mixtral-moe-decode", "serving-levers",
     "FP8 KV: twice the sessions, and it also nearly halves the batch-1 step.",
     "halving-kv-halves-the-step"),
    # M6: big blocks said to waste less at the tail
    ("prefix-caching", "block-size-why", "expert:prefix-caching/block-size-why/P",
     "big-blocks-less-tail-waste"),
    ("prefix-caching", "block-size-why",
     "Going to 256-token blocks gives shorter tables, fewer hashes, and less waste per "
     "sequence.", "big-blocks-less-tail-waste"),
    # M7: a prefix hit said not to help TTFT
    ("prefix-caching", "when-not", "expert:prefix-caching/when-not/P", "hit-saves-only-memory"),
    ("prefix-caching", "when-not",
     "Watch evictions too. Also, even on a cache hit TTFT is unchanged; the gain is memory.",
     "hit-saves-only-memory"),
    # M8: text past the window said to be invisible to the model
    ("sliding-window-kv", "what-windows-cost", "expert:sliding-window-kv/what-windows-cost/P",
     "beyond-window-invisible"),
    ("sliding-window-kv", "what-windows-cost",
     "Whatever sits more than 4,096 tokens back is invisible to the model, so recall drops.",
     "beyond-window-invisible"),
    # M9: the verify step said to turn compute-bound at the card's own ridge
    ("speculative-decoding", "when-it-pays", "expert:speculative-decoding/when-it-pays/P",
     "verify-ridge-at-the-card-ridge"),
    ("speculative-decoding", "when-it-pays",
     "Disable speculation once the batch reaches the card's ridge, about 247 sequences.",
     "verify-ridge-at-the-card-ridge"),
    # M10: gpu_memory_utilization said to be a fraction of what the other process leaves
    ("paged-blocks-vllm", "refusal", "expert:paged-blocks-vllm/refusal/P",
     "utilization-measured-against-free"),
    ("paged-blocks-vllm", "refusal",
     "Set both to 0.9: the utilization is relative to what is left after the first process "
     "starts.", "utilization-measured-against-free"),
    # M11: FP8 weights said to push the crossover batch up
    ("prefill-vs-decode", "why-two-regimes", "expert:prefill-vs-decode/why-two-regimes/P",
     "fp8-weights-raise-crossover"),
    ("prefill-vs-decode", "why-two-regimes",
     "Quantized weights move the crossover batch later, to about 412.",
     "fp8-weights-raise-crossover"),
    # M12: the logged X read as the real concurrency, beside a max_model_len reservation
    ("paged-blocks-vllm", "why-paging", "expert:paged-blocks-vllm/why-paging/W",
     "logged-x-is-the-real-concurrency"),
    ("paged-blocks-vllm", "why-paging", "expert:paged-blocks-vllm/why-paging/W",
     "vllm-reserves-max-model-len"),
    ("paged-blocks-vllm", "why-paging",
     "X = 53 is the actual concurrency, since vLLM reserves max_model_len for each request.",
     "logged-x-is-the-real-concurrency"),
    # M13: a refusal where it starts, two processes said not to share, a CPU fallback
    ("paged-blocks-vllm", "refusal", "expert:paged-blocks-vllm/refusal/W",
     "refuses-at-these-settings"),
    ("paged-blocks-vllm", "refusal", "expert:paged-blocks-vllm/refusal/W",
     "processes-cannot-share-gpu"),
    ("paged-blocks-vllm", "refusal", "expert:paged-blocks-vllm/refusal/W", "falls-back-to-cpu"),
    ("paged-blocks-vllm", "refusal",
     "This setup won't come up. When the cache is short vLLM spills automatically to host "
     "memory.", "falls-back-to-cpu"),
    # M14: only the active experts kept in HBM, and TP said to split the latent
    ("deepseek-v3-mla-h200", "experts-and-levers",
     "expert:deepseek-v3-mla-h200/experts-and-levers/W", "keeps-only-active-in-hbm"),
    ("deepseek-v3-mla-h200", "experts-and-levers",
     "The engine loads only the active experts on the GPU and streams the rest from host "
     "memory, so the budget is about 946 GB.", "keeps-only-active-in-hbm"),
    ("deepseek-v3-mla-h200", "experts-and-levers",
     "Raise TP to 16 so each GPU gets less latent per GPU, and the sessions double.",
     "more-tp-splits-the-latent"),
])
def test_a_missed_wrong_claim_is_flagged(drill_id: str, step_id: str, answer: str,
                                         claim: str) -> None:
    text = _expert(answer.removeprefix("expert:")) if answer.startswith("expert:") else answer
    assert claim in _claims(drill_id, step_id, text)


# The right (R) and hedged (H) answers to the same steps, and right answers in other words.
@pytest.mark.parametrize("drill_id, step_id, answer", [
    *[(key.split("/")[0], key.split("/")[1], f"expert:{key}/{kind}")
      for key in ("llama31-405b-h200-tp/why-less", "llama31-405b-h200-tp/fix",
                  "llama31-70b-tp2-h100/per-gpu-vs-total-explain",
                  "llama31-70b-tp2-h100/tp-trade", "mixtral-moe-decode/serving-levers",
                  "prefix-caching/block-size-why", "prefix-caching/when-not",
                  "sliding-window-kv/what-windows-cost", "speculative-decoding/when-it-pays",
                  "paged-blocks-vllm/refusal", "prefill-vs-decode/why-two-regimes",
                  "paged-blocks-vllm/why-paging", "deepseek-v3-mla-h200/experts-and-levers")
      for kind in ("R", "H")],
    ("llama31-70b-tp2-h100", "tp-trade",
     "It costs a second card and two all-reduces per layer, one after the attention and one "
     "after the MLP: 160 per step over NVLink."),
    ("llama31-405b-h200-tp", "why-less",
     "Per GPU a token still costs 31.5 KiB at TP=16, not half of it; the job's cost doubles."),
    ("llama31-70b-tp2-h100", "per-gpu-vs-total-explain",
     "vLLM gives every worker the smallest block count among them, so the token line is the "
     "minimum across the GPUs, for the whole job."),
    ("prefix-caching", "block-size-why",
     "Smaller blocks mean less tail waste; bigger ones buy a shorter block table."),
    ("sliding-window-kv", "what-windows-cost",
     "Text past 4,096 tokens is invisible to any single layer, but it reaches the current "
     "token indirectly, layer by layer."),
    ("speculative-decoding", "when-it-pays",
     "Plain decode turns compute-bound at the card's ridge, about 247, but the verify step "
     "does at 247 ÷ 5 ≈ 49 sequences."),
    ("prefill-vs-decode", "why-two-regimes",
     "With fp8 weights at the bf16 rate the crossover batch halves, to about 103."),
    ("deepseek-v3-mla-h200", "experts-and-levers",
     "Keeping only the active 37B in HBM would stall every step on PCIe, since a batch "
     "touches nearly all 256 experts."),
])
def test_a_right_answer_to_the_same_step_makes_no_wrong_claim(drill_id: str, step_id: str,
                                                              answer: str) -> None:
    text = _expert(answer.removeprefix("expert:")) if answer.startswith("expert:") else answer
    assert _claims(drill_id, step_id, text) == []
