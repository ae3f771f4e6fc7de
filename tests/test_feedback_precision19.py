"""Stop 60: what the blind corpora AK (database and OS engineers reasoning by analogy) and AL
(chat replies with the verdict first: "TL;DR:", bold, missing apostrophes) showed the tool
saying wrongly when measured unread, and what running every corpus after each general change
showed. The texts here are written for the tests, not copied from the corpora."""

from __future__ import annotations

from feedback_probes import claimed, evidence

# ---- right answers the reader took for wrong claims ----------------------------------------


def test_causes_dismissed_after_they_are_named_are_no_claim() -> None:
    text = ("Block fragmentation or a max_model_len reservation probably aren't it with "
            "vLLM's paged cache.")
    assert "vllm-reserves-max-model-len" not in claimed("observed-concurrency-lower",
                                                        "hypotheses", text)


def test_a_cause_too_small_to_explain_the_gap_is_no_claim() -> None:
    text = "Fragmentation and the reservation are too small to explain a 40% shortfall."
    assert "reservation-explains-the-gap" not in claimed("observed-concurrency-lower",
                                                         "hypotheses", text)


def test_none_fitting_after_a_zero_is_no_claim_that_some_fit() -> None:
    text = ("With MHA one 32k sequence needs about 86 GB against 44 GB free, so zero users fit "
            "at that context.")
    assert "mha-still-serves-some" not in claimed("llama2-70b-mi300x", "2d", text)


def test_room_denied_by_any_under_a_negation_is_no_claim() -> None:
    text = "A single H100 can't hold the FP8 model with any room for the cache."
    assert "fits-on-one-card" not in claimed("llama31-70b-tp2-h100", "tp-trade", text)


def test_a_contrast_with_a_figure_of_its_own_stays_a_statement_of_its_own() -> None:
    text = "n_kv counts the KV heads (8), not the query heads (64)."
    assert "kv-heads-are-query-heads" not in claimed("llama2-70b-mi300x", "1b", text)


def test_head_dim_derived_from_hidden_over_query_heads_is_no_claim() -> None:
    text = "d_head = 128 (8,192 hidden / 64 query heads), which the config states anyway."
    assert "kv-heads-are-query-heads" not in claimed("llama2-70b-mi300x", "1b", text)


# ---- wrong answers let through ---------------------------------------------------------------


def test_a_cap_raised_for_everyone_as_costing_nothing_is_a_wrong_claim() -> None:
    text = ("Paging hands out blocks on demand, so raising max_model_len to 128k for everyone "
            "doesn't cost the short chats anything.")
    assert "raise-cap-for-everyone" in claimed("llama31-8b-h100", "followup-128k-policy", text)


def test_a_condition_that_closes_the_sentence_still_makes_the_claim() -> None:
    text = ("Each token reads only its two experts, so a step reads the active weights, "
            "whatever the batch.")
    assert "batch-reads-the-active-share" in claimed("mixtral-moe-decode", "what-moe-saves", text)


def test_a_verdict_after_a_tldr_label_is_said_of_its_subject() -> None:
    text = ("TL;DR: **fp8 KV** — it's the cheapest one and the one that improves concurrency "
            "and per-token latency.")
    assert "fp8-kv-improves-both" in claimed("llama2-70b-mi300x", "4f", text)


def test_a_judgement_of_an_earlier_clause_does_not_excuse_the_claim_after_but() -> None:
    text = ("Counting every online user as a slot is wrong, but planning on the mean is too: "
            "size every slot for the p99 of 32k.")
    assert "every-slot-at-the-tail" in claimed("littles-law-capacity", "plan", text)


def test_a_denial_typed_without_its_apostrophe_is_read_as_one() -> None:
    text = "The block size didnt change what gets shared, just the allocator's overhead."
    assert "block-size-irrelevant-to-sharing" in claimed("prefix-caching", "block-size-why",
                                                         text)


def test_a_contrast_set_after_a_comma_belongs_to_its_clause() -> None:
    text = "Block size mostly affects overhead, not the saving."
    assert "block-size-irrelevant-to-sharing" in claimed("prefix-caching", "block-size-why",
                                                         text)


def test_open_chats_from_little_inverted_is_a_wrong_claim() -> None:
    text = ("By Little's law the open conversations are 64 × 15/60 ≈ 16 per card before the "
            "cache fills.")
    assert "open-chats-from-littles-law-inverted" in claimed("multi-turn-growth", "policy", text)


def test_tensor_parallel_ranks_keeping_all_the_weights_is_a_wrong_claim() -> None:
    text = ("With tensor parallelism every card still carries the full 138 GB of weights, so a "
            "second card only adds its own leftover.")
    assert "tp-copies-weights" in claimed("llama2-70b-mi300x", "2d", text)


def test_a_history_called_no_issue_because_the_prefix_cache_holds_it_is_a_wrong_claim() -> None:
    text = ("The history isn't the issue: earlier turns sit in the prefix cache, so they are "
            "shared.")
    assert "history-shared-by-prefix-cache" in claimed("multi-turn-growth", "why-overstated",
                                                       text)


# ---- corpus AM (managers' and product-minded staff engineers' answers) -----------------------


def test_a_denial_said_before_its_subject_still_makes_the_claim() -> None:
    text = ("I wouldn't alert on preemptions in the long pool: the scheduler preempting is "
            "the engine packing memory.")
    assert "preemptions-transparent" in claimed("long-context-tier", "operations", text)


def test_a_rule_said_with_its_subject_in_an_if_clause_is_a_claim() -> None:
    text = ("If requests are queueing at peak, the card has run out of room for new sessions "
            "and we need more capacity.")
    assert "queue-means-out-of-memory" in claimed("observed-concurrency-lower", "evidence",
                                                  text)


def test_a_token_rate_quota_said_to_bound_the_kv_is_a_wrong_claim() -> None:
    text = ("Each team gets a tokens-per-minute quota sized from the pool's throughput. That "
            "keeps total demand within what the pool can hold, so teams never collectively "
            "exceed its KV.")
    assert "token-rate-quota-bounds-kv" in claimed("long-context-tier", "pool-policy", text)


def test_a_gqa_cache_split_beside_the_whole_latent_is_no_claim_the_latent_splits() -> None:
    text = ("Every GPU keeps the whole latent of every token. Per GPU, a GQA-8 cache split 8 "
            "ways (about 31 KB) is smaller than MLA's 70 KB.")
    assert "latent-split-under-tp" not in claimed("deepseek-v3-mla-h200", "why-mla", text)


def test_dequantisation_said_invisible_while_bandwidth_bound_is_no_claim() -> None:
    text = ("The caveat is that fp8 dequant adds a little compute, which is invisible while "
            "we're bandwidth-bound.")
    assert "fp8-kv-read-at-fp16-width" not in claimed("llama2-70b-mi300x", "5a", text)


def test_a_cap_for_everyone_said_to_spread_the_harm_is_no_claim() -> None:
    text = "Raising the cap for everyone turns a chat SLO problem into a fleet-wide one."
    assert "raise-cap-for-everyone" not in claimed("long-context-tier", "pool-policy", text)


# ---- rubric phrases that named a place or a mechanism, not the concept ----------------------


def test_kv_split_between_the_two_gpus_is_no_cost_of_tensor_parallelism() -> None:
    said = evidence("llama31-70b-tp2-h100", {"per-gpu-vs-total-explain": (
        "The token count is for the whole job, because each token's KV is split between the "
        "two GPUs.")}, "levers")
    assert "What it costs" not in said


def test_paged_on_demand_allocation_is_no_alert() -> None:
    said = evidence("observed-concurrency-lower", {"hypotheses": (
        "prompt-only context, generated tokens, paged on-demand allocation, block "
        "fragmentation")}, "action")
    assert "alert" not in said.lower()


# ---- corpus AN (graduates' textbook framing): careful seniors said to claim wrongly -----------


def test_a_requirement_that_one_request_must_fit_is_no_claim_that_one_fits() -> None:
    text = ("The product is unservable as specified, and the engine would refuse to start with "
            "max_model_len 32,768 (one request must fit).")
    assert "mha-still-serves-some" not in claimed("llama2-70b-mi300x", "2d", text)


def test_head_dim_worked_out_from_the_query_heads_is_no_claim_of_64_kv_heads() -> None:
    text = "- d_head = 128 (8,192 ÷ 64, which happens to be right here; check config.json)."
    assert "kv-heads-are-query-heads" not in claimed("llama2-70b-mi300x", "1b", text)


def test_a_hypothesis_listed_is_no_claim() -> None:
    text = ("The hypotheses are: the context is longer than planned, the server reserves "
            "max_model_len for every request, or block fragmentation.")
    assert "vllm-reserves-max-model-len" not in claimed("observed-concurrency-lower",
                                                        "hypotheses", text)


def test_a_doubled_latent_said_as_what_counting_twice_gives_is_no_claim() -> None:
    text = "Counting a factor 2 gives 140,544 B, which halves every session count."
    assert "latent-doubled-per-token" not in claimed("deepseek-v3-mla-h200", "why-mla", text)


def test_blocks_said_to_be_found_wherever_they_appear_is_a_wrong_claim() -> None:
    text = ("vLLM identifies cached blocks by hashing their contents, so any identical block is "
            "found wherever it appears in the prompt.")
    assert "shared-text-anywhere" in claimed("prefix-caching", "when-not", text)


def test_dp_attention_called_the_cleanest_fix_for_the_405b_is_a_wrong_claim() -> None:
    text = ("The fix is to stop duplicating KV heads, and the cleanest way to do that is "
            "data-parallel attention.")
    assert "dp-attention-for-dense" in claimed("llama31-405b-h200-tp", "fix", text)


# ---- corpus AO (blunt answers in absolutes): rejections in their own forms --------------------


def test_an_imperative_and_its_harm_is_no_claim() -> None:
    text = "Raise it globally and one user can pin 16 GiB, the KV of 32 chat sessions."
    assert "raise-cap-for-everyone" not in claimed("long-context-tier", "pool-policy", text)


def test_a_rejected_proposal_in_quotes_is_no_claim() -> None:
    text = "Don't: 'offload cold experts' — at batch 16 and above nothing is cold."
    assert "offload-inactive-experts" not in claimed("mixtral-moe-decode", "serving-levers",
                                                     text)
