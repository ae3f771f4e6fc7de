"""Stop 63: what the blind corpora AX (European number conventions), AY (casual chat typed
fast, apostrophes dropped), AZ (war stories) and BA (coaching) showed the tool saying wrongly
when measured unread. The texts here are written for the tests, not copied from the corpora."""

from __future__ import annotations

from feedback_probes import claimed


def test_a_figure_called_fake_reports_the_idea_that_gives_it() -> None:
    text = "taking only the 37b active would give a fake ~940gb budget."
    assert "only-active-experts-resident" not in claimed("deepseek-v3-mla-h200",
                                                         "experts-and-levers", text)


def test_i_wouldnt_just_raise_it_denies_raising_it() -> None:
    text = ("i wouldnt just raise it for everybody tbh, long chats eat a lot of memory and the "
            "short ones suffer.")
    assert "raise-it-paging-covers-it" not in claimed("long-context-tier", "pool-policy", text)


def test_just_raising_it_is_still_claimed() -> None:
    text = "just raise it for everyone, vllm pages the cache so nothing is reserved up front"
    assert "raise-it-paging-covers-it" in claimed("long-context-tier", "pool-policy", text)


def test_not_just_raising_it_but_adding_to_it_still_claims_raising_it() -> None:
    text = ("We should not just raise it for everyone but also add alerts, since paging "
            "handles it.")
    assert "raise-it-paging-covers-it" in claimed("long-context-tier", "pool-policy", text)


def test_capacity_that_stops_growing_is_no_growing_state() -> None:
    text = ("at short contexts the mamba state dominates so capacity stops growing as quickly, "
            "about 2,300 at most.")
    assert "state-grows" not in claimed("hybrid-state-kv", "how-concurrency-scales", text)


def test_a_state_that_grows_is_still_claimed() -> None:
    text = "The mamba state grows with the context, so long sessions cost more."
    assert "state-grows" in claimed("hybrid-state-kv", "how-concurrency-scales", text)


def test_stopping_a_practice_is_not_read_as_a_denial_of_what_follows() -> None:
    # only a change stops so: "stop duplicating", "stop eating" are plans, their claims kept
    text = ("The fix is to stop duplicating KV heads, and the cleanest way is data-parallel "
            "attention, as SGLang does for DeepSeek.")
    assert "dp-attention-for-dense" in claimed("llama31-405b-h200-tp", "fix", text)


def test_a_price_that_only_partly_captures_the_cost_is_no_price_that_captures_it() -> None:
    text = ("a 128k session pins 32x the memory of a chat for as long as its live, and per-token "
            "only partly captures that.")
    assert "per-token-is-enough" not in claimed("long-context-tier", "pricing", text)


def test_a_product_that_drops_is_no_factor_of_it_dropping() -> None:
    text = ("d_kv = n_kv × d_head drops from 64 × 128 = 8 192 to 8 × 128 = 1 024, while L and "
            "d_head stay: exactly 8×.")
    assert "head-dim-compressed" not in claimed("llama2-70b-mi300x", "2c-why", text)


def test_a_head_dim_that_drops_is_still_claimed() -> None:
    text = "GQA makes d_head drop to 16, so each head is eight times thinner."
    assert "head-dim-compressed" in claimed("llama2-70b-mi300x", "2c-why", text)


def test_watching_kv_usage_to_see_if_it_runs_out_is_no_alert_at_100_percent() -> None:
    text = "turn on fp8 kv, and watch the kv cache usage to see if we're running out"
    assert "alert-at-full-usage" not in claimed("llama31-8b-h100", "policy", text)


def test_an_alert_when_the_kv_cache_is_full_is_still_claimed() -> None:
    text = "Page the on-call when KV cache usage hits 100%."
    assert "alert-at-full-usage" in claimed("llama31-8b-h100", "policy", text)


def test_a_guarantee_of_room_to_max_model_len_is_a_reservation() -> None:
    text = "vLLM still guarantees each admitted request room to reach max_model_len."
    assert "vllm-reserves-max-model-len" in claimed("paged-blocks-vllm", "why-paging", text)
