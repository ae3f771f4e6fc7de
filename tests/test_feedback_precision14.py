"""Stop 57: what the blind corpora AD (non-native English, wrong figures in prose) and AE
(transcribed speech, wrong answers that reverse one claim) showed the tool saying wrongly when
measured unread. Each test of a fix failed before; the guards beside them pass on both."""

from __future__ import annotations

import pytest
from feedback_probes import claimed, evidence

TP2 = "llama31-70b-tp2-h100"
MI300X = "llama2-70b-mi300x"


# --- a mistake named before the claim is someone else's ------------------------------------------

def test_a_claim_after_calling_a_colleague_wrong_is_the_candidates_own() -> None:
    text = ("Colleague is half right, but direction is wrong. Both lines are per GPU: each rank "
            "logs its own token count, so job total is 2 x N.")
    assert "both-lines-per-gpu" in claimed(TP2, "per-gpu-vs-total-explain", text)


def test_a_claim_called_naive_in_the_sentence_after_it_is_still_reported() -> None:
    text = "Both lines are per GPU. That is the naive reading."
    assert claimed(TP2, "per-gpu-vs-total-explain", text) == []


@pytest.mark.parametrize("text", [
    "Here is the mistake in the colleague's note. Both lines are per GPU, he says, but they "
    "are job totals.",
    "The colleague's reading is wrong. Both lines are per GPU in his view; really only the "
    "memory line is.",
])
def test_a_claim_given_to_someone_by_a_speech_tag_is_reported(text: str) -> None:
    assert claimed(TP2, "per-gpu-vs-total-explain", text) == []


# --- a statement before a list of what stays the same --------------------------------------------

def test_a_statement_that_opens_a_list_of_unchanged_terms_is_explained() -> None:
    text = ("Only n_kv changes: 64 KV heads in MHA vs 8 in GQA, so 64/8 = 8x, everything else "
            "(layers, head_dim, dtype, context) same.")
    said = evidence(MI300X, {"2c-why": text}, "assumptions")
    assert "'kv heads'" in said and "listed, not explained" not in said


def test_a_list_of_terms_alone_stays_a_list() -> None:
    text = "KV heads, GQA, MHA, head_dim, layers, dtype, context"
    said = evidence(MI300X, {"2c-why": text}, "assumptions")
    assert "listed, not explained" in said or "nothing in the text answers" in said


# --- wrong claims the corpora planted ------------------------------------------------------------

PLANTED = [
    ("decode-roofline-vs-measured", "batch1-why", "plan-at-90-percent",
     "HBM3e can sustain ~90% of datasheet in steady state, so for capacity plan I take "
     "4.8 x 0.9 = 4.3TB/s."),
    ("prefill-vs-decode", "stalls-and-levers", "stall-blamed-on-decode-compute",
     "Stall is because decode becomes compute-bound while the prefill runs."),
    ("prefill-vs-decode", "stalls-and-levers", "chunking-makes-stall-worse",
     "Chunked prefill makes it worse because prompt occupies more steps."),
    ("long-context-tier", "pricing", "price-by-alone-step-ratio",
     "Charge per token with a multiplier from latency: charge 2x the chat per-token price."),
    ("long-context-tier", "pool-policy", "over-quota-preempts-running",
     "If a team is over its quota the scheduler preempts the oldest running session."),
    ("llama31-8b-h100", "policy", "driver-reports-less",
     "The driver actually reports less than the sticker, since some of it goes to ECC."),
    ("multi-turn-growth", "why-overstated", "size-on-the-peak",
     "The peak of 6,400 tokens is the number to size on."),
    ("multi-turn-growth", "policy", "prefix-caching-biggest-lever",
     "The biggest lever is prefix caching: sharing the system prompt is the largest saving "
     "available."),
    ("hybrid-state-kv", "how-concurrency-scales", "advantage-fades-with-context",
     "The four attention layers take over and the advantage fades toward parity at long "
     "context."),
    ("llama31-405b-h200-tp", "why-less", "tp16-halves-kv-per-gpu",
     "At TP sixteen each GPU holds half a KV head, so the per-GPU cost halves to about sixteen "
     "KiB. So the reason sessions only go up 1.5x isn't the KV, it's that each node ends up "
     "holding its own copy of a lot of the weights."),
    ("long-context-tier", "operations", "alert-on-zero-preemptions",
     "On the long pool you want a steady trickle of preemptions, so I'd alert if preemptions "
     "drop to zero, meaning we've over-provisioned."),
    ("swap-or-recompute", "policy", "mha-should-swap",
     "MHA models lean even harder toward swapping: the KV is so big that recomputing it costs "
     "far more."),
    ("prefill-vs-decode", "why-two-regimes", "kv-brings-crossover-earlier",
     "The KV reads add FLOPs in proportion to the bytes, so at long contexts the crossover "
     "arrives earlier than 206."),
    ("mixtral-moe-decode", "what-moe-saves", "batch-reads-the-active-share",
     "Each token only ever reads its two experts per layer, so a step reads 25.8 GB of weights "
     "whether the batch is one or sixty-four."),
    ("llama2-70b-mi300x", "1b", "generated-tokens-not-cached",
     "N is the prompt length you prefilled, because generated tokens get streamed back to the "
     "client, they don't need to sit in the cache."),
    ("llama31-8b-h100", "followup-observed-lower", "fragmentation-explains-gap",
     "My top suspect is block fragmentation in the paged cache: partially filled blocks "
     "everywhere."),
    ("sliding-window-kv", "why-different", "hidden-over-heads-overstates",
     "Hidden over heads gives 224, which is wider than the per-head width Gemma caches, so it "
     "overstates every Gemma figure."),
    ("chunked-prefill-tpot", "trade-off", "chunking-costs-user-nothing",
     "The document is prefilled in 2 mixed steps, so the pasting user also wins, nobody pays."),
]


@pytest.mark.parametrize(("drill", "step", "claim", "text"), PLANTED,
                         ids=[case[2] for case in PLANTED])
def test_a_planted_claim_of_the_corpora_is_flagged(drill: str, step: str, claim: str,
                                                   text: str) -> None:
    assert claim in claimed(drill, step, text)


RIGHT = [
    ("hybrid-state-kv", "how-concurrency-scales",
     "So put long-document work on it; for short chat the edge over a transformer shrinks."),
    ("decode-roofline-vs-measured", "batch1-why",
     "Planning on the datasheet promises about one point six times what the card delivers."),
    ("llama31-405b-h200-tp", "why-less",
     "At TP sixteen, eight over sixteen would be half a head, but a head's attention needs all "
     "of its K and V on one rank, so it's replicated: still one head per GPU, so the per-GPU "
     "cost doesn't move."),
    ("sliding-window-kv", "why-different",
     "On head_dim: 3584 over 16 is 224, but Gemma-2 projects Q, K and V to heads wider than the "
     "residual stream, and the config's head_dim field is 256."),
    ("long-context-tier", "pricing", "Why per-token like chat fails: it bills tokens, not KV."),
    ("llama31-8b-h100", "followup-128k-policy",
     "Make a separate group of GPUs for 128 k users, so chat users are not affected."),
    ("deepseek-v3-mla-h200", "experts-and-levers",
     "All 673GB fp8 weights stay resident. Subtract only 37GB and you get fantasy budget."),
    ("llama31-8b-h100", "policy",
     "Metrics that say it went stale: vllm:gpu_cache_usage_perc near 100%, preemptions rising."),
    ("llama31-405b-h200-tp", "why-less",
     "At TP=16 a head cannot be split, so each GPU keeps a copy of one: the per-GPU cost stays "
     "31.5 KiB."),
    ("prefill-vs-decode", "why-two-regimes",
     "KV reads add bytes with few FLOPs, so at long context the crossover comes later."),
    ("sliding-window-kv", "why-different",
     "Hidden over heads gives 224, which understates Gemma's cache by 12.5%: its heads are 256 "
     "wide, so 224 promises more sessions than the card holds."),
    ("llama2-70b-mi300x", "1b",
     "Generated tokens are streamed back to the client and also stay in the cache, so N is "
     "the prompt plus the output."),
    ("llama2-70b-mi300x", "1b",
     "Tokens get streamed back to the client as they are produced, but each one's K and V is "
     "cached, so N counts them."),
    ("long-context-tier", "operations",
     "Alert when preemptions exceed 1%; it's fine if they fall to zero."),
    ("long-context-tier", "operations",
     "A healthy sign is preemptions at zero and KV usage below 85%."),
    ("long-context-tier", "pricing",
     "A multiplier from latency misses the point; charge in KV-seconds."),
    ("decode-roofline-vs-measured", "batch1-why",
     "Planning at 90% of peak would be far too optimistic."),
    ("paged-blocks-vllm", "refusal",
     "Both processes sit on the card's 80 GB HBM, each with 16 GB weights."),
    ("prefill-vs-decode", "stalls-and-levers",
     "Chunked prefill fixes it, though a chunk size set too high makes it worse again."),
    ("multi-turn-growth", "why-overstated",
     "Size on the average live context, not the peak: a request is at 6,400 only at its end."),
]


@pytest.mark.parametrize(("drill", "step", "text"), RIGHT, ids=[case[0] for case in RIGHT])
def test_a_right_sentence_of_the_corpora_is_no_claim(drill: str, step: str, text: str) -> None:
    assert claimed(drill, step, text) == []
