"""Corpus BU (stop 75): answers spoken in a video interview and transcribed, with
self-corrections. A value said and taken back at once ("sixty-four, no wait, that's the query
heads") is not claimed; a bare "actually" after a claim keeps it."""

from __future__ import annotations

import pytest
from feedback_probes import claimed


def test_a_value_taken_back_with_no_wait_is_not_claimed() -> None:
    text = ("n_kv is the number of KV heads, which is sixty-four, no wait, that's the query "
            "heads, it's eight for the GQA model.")
    assert "kv-heads-are-query-heads" not in claimed("llama2-70b-mi300x", "1b", text)


def test_a_value_taken_back_with_sorry_is_not_claimed() -> None:
    text = "n_kv is the number of KV heads, which is sixty-four, sorry, eight for the GQA model."
    assert "kv-heads-are-query-heads" not in claimed("llama2-70b-mi300x", "1b", text)


def test_a_claim_followed_by_a_bare_actually_is_still_claimed() -> None:
    text = ("The colleague is right, actually. Both lines are per GPU, so it is about 48 "
            "sessions across the pair.")
    assert "colleague-right" in claimed("llama31-70b-tp2-h100", "per-gpu-vs-total-explain", text)


def test_a_latent_sharded_the_way_the_kv_heads_are_is_named() -> None:
    text = ("Tensor parallelism shards the latent across the eight GPUs the same way you'd "
            "shard the KV heads: each GPU holds one eighth of the latent.")
    assert "latent-sharded-like-any-kv" in claimed("deepseek-v3-mla-h200", "why-mla", text)


def test_a_latent_kept_whole_unlike_the_kv_heads_is_no_claim() -> None:
    text = ("Unlike the KV heads, the latent is not split under TP: each GPU holds the whole "
            "576-wide latent, not one eighth of it.")
    assert "latent-sharded-like-any-kv" not in claimed("deepseek-v3-mla-h200", "why-mla", text)


# The review of stop 75's change: what its new readings must not excuse or flag.
@pytest.mark.parametrize(("drill", "step", "text", "claim"), [
    ("llama31-405b-h200-tp", "why-less",
     "I used to think the heads were replicated; now I know TP=16 halves the KV per GPU.",
     "tp16-halves-kv-per-gpu"),
    ("llama31-405b-h200-tp", "why-less",
     "I used to think TP=16 halves the KV per GPU and I still do.", "tp16-halves-kv-per-gpu"),
    ("llama31-405b-h200-tp", "why-less", "My first guess was right: TP=16 halves the KV per GPU.",
     "tp16-halves-kv-per-gpu"),
    ("llama31-405b-h200-tp", "why-less",
     "From the head count you'd conclude that TP=16 halves the KV per GPU, which is correct.",
     "tp16-halves-kv-per-gpu"),
    ("llama31-405b-h200-tp", "why-less",
     "TP=16 halves the KV per GPU, no no, it really does: each GPU holds half a head.",
     "tp16-halves-kv-per-gpu"),
    ("llama31-405b-h200-tp", "why-less",
     "At TP=16 the weights halve and the KV per GPU halves too, so each GPU holds 16 KiB per "
     "token.", "tp16-halves-kv-per-gpu"),
    ("long-context-tier", "pricing",
     "Billing KV-seconds would over-count the usage: the per-token price already charges for "
     "the memory, so it's double-charging.", "kv-seconds-double-count"),
])
def test_a_claim_the_review_found_excused_is_named(drill: str, step: str, text: str,
                                                   claim: str) -> None:
    assert claim in claimed(drill, step, text)


@pytest.mark.parametrize(("drill", "step", "text", "claim"), [
    ("swap-or-recompute", "policy",
     "Swap or recompute, always do the arithmetic first: 43 ms of PCIe against 240 ms of "
     "prefill, so swap wins here.", "swap-takes-seconds"),
    ("long-context-tier", "pool-policy",
     "Q: Two options. Option A: raise max_model_len to 128k for everyone. Option B: a separate "
     "pool. Which? A: B, a separate pool with quotas.", "raise-cap-for-everyone"),
    ("llama2-70b-mi300x", "3c-explain",
     "At batch 4 the one weight read per step is shared four ways, so each user still gets "
     "about 29 tok/s.", "per-user-rate-split-evenly"),
    ("llama31-405b-h200-tp", "fix",
     "Going from TP=4 to TP=8 the KV per GPU keeps halving; TP=16 gains nothing because each "
     "head gets copied.", "wider-tp-keeps-cutting-kv"),
    ("long-context-tier", "operations",
     "Alert when preemptions exceed 1% of requests; the pool is oversized only when "
     "preemptions are zero and usage is low.", "preemptions-mean-oversized"),
    ("llama2-70b-mi300x", "1b",
     "The KV heads, 8, are what the cache stores; the query heads, 64, are not in the formula.",
     "kv-heads-are-query-heads"),
])
def test_a_right_answer_the_review_found_flagged_is_not(drill: str, step: str, text: str,
                                                        claim: str) -> None:
    assert claim not in claimed(drill, step, text)


def test_a_lone_sorry_with_no_figure_after_it_takes_nothing_back() -> None:
    text = "The LM head is skipped until the last token, sorry, until the sampled token."
    assert "lm-head-skipped" in claimed("decode-roofline-vs-measured", "embedding-why", text)


# Corpus BV (stop 75, the last set: plain written answers in a shared document), its right
# answers flagged unread.
@pytest.mark.parametrize(("drill", "step", "text", "claim"), [
    ("littles-law-capacity", "plan",
     "I don't think 2,000 users online means 2,000 slots, because most of those people are "
     "reading the answer or typing their next message.", "online-users-as-slots"),
    ("observed-concurrency-lower", "hypotheses",
     "It could also be memory overhead or fragmentation eating some of the space, but I would "
     "guess session length is the main one.", "fragmentation-explains-the-gap"),
    ("llama2-70b-mi300x", "1b",
     "The two classic slips are putting the hidden size in place of n_kv, and sizing N on "
     "prompt length only.", "context-is-prompt-only"),
    ("prefix-caching", "when-not",
     "A low hit rate with high KV usage points at a per-user prefix or eviction.",
     "shared-text-anywhere"),
])
def test_a_right_answer_of_corpus_bv_is_not_flagged(drill: str, step: str, text: str,
                                                     claim: str) -> None:
    assert claim not in claimed(drill, step, text)


def test_what_one_does_not_think_then_says_is_still_claimed() -> None:
    text = ("I don't think it's complicated: 2,000 users online means 2,000 slots, so buy "
            "about 22 GPUs.")
    assert "online-users-as-slots" in claimed("littles-law-capacity", "plan", text)
