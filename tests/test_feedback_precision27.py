"""Corpus BU (stop 75): answers spoken in a video interview and transcribed, with
self-corrections. A value said and taken back at once ("sixty-four, no wait, that's the query
heads") is not claimed; a bare "actually" after a claim keeps it."""

from __future__ import annotations

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
