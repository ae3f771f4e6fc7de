"""Expert pass 64 (100 text answers on 20 steps, written before grading, none read here before):
P answers missed 23 of 40, W answers missed 5 of 20, and 22 of 234 credit statements false,
most of them earned by the words of a wrong sentence. Each miss is checked here on the
expert's answer and in other words, through the real matcher; the right and hedged answers to
the same steps stay unflagged."""

from __future__ import annotations

import pytest

from tests.expert_claims import claims_named as _claims
from tests.expert_claims import expert_answer


def _expert(answer_id: str) -> str:
    return expert_answer("expert_pass64_answers.yaml", answer_id)


_L = "llama2-70b-mi300x"
_FORMULA = (_L, "1b")
_RATIO = (_L, "2c-why")
_MHA = (_L, "2d")
_BATCH = (_L, "3c-explain")
_FP8 = (_L, "5a")
_FREE = (_L, "5c")
_MOE = ("mixtral-moe-decode", "what-moe-saves")
_LEVERS = ("mixtral-moe-decode", "serving-levers")
_PAGING = ("paged-blocks-vllm", "why-paging")
_REFUSAL = ("paged-blocks-vllm", "refusal")
_OVER = ("multi-turn-growth", "why-overstated")
_TURNS = ("multi-turn-growth", "policy")
_EVID = ("observed-concurrency-lower", "evidence")
_ACT = ("observed-concurrency-lower", "action")
_LITTLE = ("littles-law-capacity", "plan")
_SWAP = ("swap-or-recompute", "policy")


def _key(step: tuple[str, str], kind: str) -> str:
    return f"expert:{step[0]}/{step[1]}/{kind}"


# The misses (M1–M28 but M7 and M21), each on the expert's answer and said again in other words.
@pytest.mark.parametrize("drill_id, step_id, answer, claim", [
    # M1 (and C1, L1): n_kv read as the 64 query heads
    (*_FORMULA, _key(_FORMULA, "P2"), "n-kv-is-64"),
    (*_FORMULA, "n_kv is the number of attention heads, so 64.", "n-kv-is-64"),
    # M2 (and C2, L2): hidden size as the cache width; V derived from K, no K/V factor
    (*_FORMULA, _key(_FORMULA, "W"), "hidden-size-in-the-formula"),
    (*_FORMULA, _key(_FORMULA, "W"), "v-derived-from-k"),
    (*_FORMULA, "Only the keys are cached; V is recomputed from K.", "v-derived-from-k"),
    # M3 (and C3): the GQA ratio given as 4× (it is 8×)
    (*_RATIO, _key(_RATIO, "P2"), "gqa-ratio-4x"),
    (*_RATIO, "It's the KV heads, 64 vs 8, so the MHA cache is four times bigger.",
     "gqa-ratio-4x"),
    # M4 (and C4): FP8 KV said to cut the bytes 4×
    (*_MHA, _key(_MHA, "P2"), "fp8-kv-quarters-the-bytes"),
    (*_MHA, "FP8 KV shrinks each sequence to a quarter of the bytes.",
     "fp8-kv-quarters-the-bytes"),
    # M5: MHA at 32k said to be fine to ship
    (*_MHA, _key(_MHA, "W"), "mha-fine-to-ship"),
    (*_MHA, "Paging handles it, so it's fine to ship as specified.", "mha-fine-to-ship"),
    # M6 (and L4): per-user speed said to halve from 1 to 4 users (it drops ~24%)
    (*_BATCH, _key(_BATCH, "P2"), "per-user-speed-halves"),
    (*_BATCH, "Per-user speed roughly halves going from 1 to 4 users.",
     "per-user-speed-halves"),
    # M8 (and L5): FP8 KV said to halve the weight read too
    (*_FP8, _key(_FP8, "P2"), "fp8-kv-halves-the-weights-too"),
    (*_FP8, "The weight read halves too, since fp8 applies to the weights as well.",
     "fp8-kv-halves-the-weights-too"),
    # M9 (and L5): W ≫ B × kv said to be easiest at long context
    (*_FREE, _key(_FREE, "P1"), "long-context-makes-batching-cheaper"),
    (*_FREE, "The condition is easier to meet at long context.",
     "long-context-makes-batching-cheaper"),
    # M10 (and C7): half the experts touched at batch 64 (it is ~all)
    (*_MOE, _key(_MOE, "P2"), "half-the-experts-at-batch-64"),
    (*_MOE, "At batch 64 about half of the experts get touched.",
     "half-the-experts-at-batch-64"),
    # M11 (and L9): expert parallelism said to be communication-free
    (*_LEVERS, _key(_LEVERS, "P1"), "ep-no-communication"),
    (*_LEVERS, "Expert parallelism is free communication-wise.", "ep-no-communication"),
    # M12: the logged X read as the requests the card carries
    (*_PAGING, _key(_PAGING, "P1"), "logged-x-is-the-real-concurrency"),
    (*_PAGING, "X=53 is the number of requests the card will carry under real traffic.",
     "logged-x-is-the-real-concurrency"),
    # M13 (and C9): blocks said to leave external fragmentation
    (*_PAGING, _key(_PAGING, "P2"), "external-fragmentation-left"),
    (*_PAGING, "Blocks come on demand, but they still leave some external fragmentation.",
     "external-fragmentation-left"),
    # M14: paging as swapping to the CPU; X as the cap
    (*_PAGING, _key(_PAGING, "W"), "paging-is-swapping"),
    (*_PAGING, _key(_PAGING, "W"), "logged-x-is-the-real-concurrency"),
    (*_PAGING, "Paging works by swapping idle blocks to the CPU.", "paging-is-swapping"),
    # M15 (and C10): refusal when X < max_num_seqs
    (*_REFUSAL, _key(_REFUSAL, "P2"), "refuses-below-max-num-seqs"),
    (*_REFUSAL, "vLLM won't start when X is less than max_num_seqs.",
     "refuses-below-max-num-seqs"),
    # M16 (and L6): sizing on the per-request peak
    (*_OVER, _key(_OVER, "P1"), "size-on-the-peak"),
    (*_OVER, "Plan for the peak per request, 6,400 tokens.", "size-on-the-peak"),
    # M17: the previous request's KV said to stay pinned between turns
    (*_OVER, _key(_OVER, "P2"), "kv-pinned-between-turns"),
    (*_OVER, "vLLM keeps the KV pinned while the user types.", "kv-pinned-between-turns"),
    # M18: the context figure said to be fine
    (*_OVER, _key(_OVER, "W"), "context-figure-fine"),
    (*_OVER, "The context figure was fine; the weights were forgotten.",
     "context-figure-fine"),
    # M19: open conversations as the staleness signal
    (*_TURNS, _key(_TURNS, "P1"), "open-conversations-say-stale"),
    (*_TURNS, "Alert on the number of open chats.", "open-conversations-say-stale"),
    # M20 (and C11, L7): history free since KV is freed between turns; low GPU util as fine
    (*_TURNS, _key(_TURNS, "W"), "history-free-between-turns"),
    (*_TURNS, _key(_TURNS, "W"), "gpu-utilisation-low-means-fine"),
    (*_TURNS, "Since vLLM frees the KV between turns, longer conversations are free.",
     "history-free-between-turns"),
    (*_TURNS, "If GPU utilization stays under 80%, the sizing is fine.",
     "gpu-utilisation-low-means-fine"),
    # M22: nvidia-smi at 90% as evidence the KV is the limit
    (*_EVID, _key(_EVID, "P1"), "nvidia-smi-at-90-shows-kv"),
    (*_EVID, "nvidia-smi memory used at 90% means KV is the limit.",
     "nvidia-smi-at-90-shows-kv"),
    # M23 (and C13): preemptions read as the gateway rejecting requests
    (*_EVID, _key(_EVID, "P2"), "preemptions-are-rejections"),
    (*_EVID, "Preemptions count the requests the gateway is rejecting.",
     "preemptions-are-rejections"),
    # M24 (and C14): re-planning on the gateway's prompt length
    (*_ACT, _key(_ACT, "P1"), "replan-on-prompt-lengths"),
    (*_ACT, "Re-plan using the average prompt length from the gateway logs.",
     "replan-on-prompt-lengths"),
    # M25: FP8 KV said to halve the per-token latency
    (*_ACT, _key(_ACT, "P2"), "fp8-kv-halves-latency"),
    (*_ACT, "FP8 KV halves per-token latency.", "fp8-kv-halves-latency"),
    # M26: the memory limit (105) said to bind (TPOT binds at 94)
    (*_LITTLE, _key(_LITTLE, "P2"), "memory-named-the-binding-limit"),
    (*_LITTLE, "Each GPU fits 105 by memory, which is the binding limit.",
     "memory-named-the-binding-limit"),
    # M27: the T² term said to make recompute cheaper for long sequences
    (*_SWAP, _key(_SWAP, "P1"), "quadratic-term-makes-prefill-cheaper"),
    (*_SWAP, "For long sequences the quadratic attention term makes recompute cheaper per "
     "token.", "quadratic-term-makes-prefill-cheaper"),
    # M28: a burst of parallel resumes said to cost one resume's time
    (*_SWAP, _key(_SWAP, "P2"), "burst-resumes-in-parallel"),
    (*_SWAP, "A burst of resumes in parallel still costs only ~21 ms.",
     "burst-resumes-in-parallel"),
])
def test_a_missed_wrong_claim_is_flagged(drill_id: str, step_id: str, answer: str,
                                         claim: str) -> None:
    text = _expert(answer.removeprefix("expert:")) if answer.startswith("expert:") else answer
    assert claim in _claims(drill_id, step_id, text)


# The right (R) and hedged (H) answers to the same steps, and right answers in other words.
@pytest.mark.parametrize("drill_id, step_id, answer", [
    *[(*step, _key(step, kind))
      for step in (_FORMULA, _RATIO, _MHA, _BATCH, _FP8, _FREE, _MOE, _LEVERS, _PAGING,
                   _REFUSAL, _OVER, _TURNS, _EVID, _ACT, _LITTLE, _SWAP)
      for kind in ("R", "H")],
    (*_RATIO, "64 KV heads against 8, so 8x; with FP8 KV on top it would be 16x."),
    (*_MHA, "FP8 KV halves each sequence to ~42.9 GB, so one user fits; with int4 weights "
     "too it's about a quarter of today's footprint."),
    (*_FP8, "twice the seqs at half the bytes each, same kv read + same weights, ~34 ms."),
    (*_PAGING, "Contiguous regions of different sizes also leave external fragmentation as "
     "requests finish; paging removes it."),
    (*_OVER, "Size the pool on the average live context and use the peak (6,400) for "
     "admission and max_model_len."),
    (*_TURNS, "Watch KV usage p95 and preemptions, not the number of open conversations."),
    (*_EVID, "Not nvidia-smi: vLLM preallocates, so it always reads about 90%."),
    (*_ACT, "We sized on prompt length; re-plan at the measured p95 live context."),
    (*_ACT, "FP8 KV halves bytes per token, about 2x the sessions at the same step time."),
    (*_LITTLE, "Memory fits 105, but the TPOT limit binds first at 94, so 3 GPUs."),
])
def test_a_right_answer_to_the_same_step_makes_no_wrong_claim(drill_id: str, step_id: str,
                                                              answer: str) -> None:
    text = _expert(answer.removeprefix("expert:")) if answer.startswith("expert:") else answer
    assert _claims(drill_id, step_id, text) == []
