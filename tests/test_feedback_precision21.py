"""Stop 62: what the blind corpora AT (a practice dialogue pasted whole: the interviewer's lines
float wrong ideas between the candidate's replies) and AU (answers that cite and quote docs,
configs and papers) showed the tool saying wrongly when measured unread. The texts here are
written for the tests, not copied from the corpora."""

from __future__ import annotations

from feedback_probes import claimed


def test_a_wrong_idea_floated_by_the_interviewer_is_not_the_candidates_claim() -> None:
    text = ("Interviewer: Product says raise max_model_len to 128k for everyone. Your move?\n"
            "Me: No. A 128k session pins 16 GiB; keep chat capped and route long requests to "
            "their own pool.")
    assert "raise-cap-for-everyone" not in claimed("long-context-tier", "pool-policy", text)


def test_the_interviewers_line_under_any_of_its_labels_is_left_out() -> None:
    for label in ("Interviewer:", "them:", "Q:", "**Interviewer:**"):
        text = (f"{label} It's a 12.9B model at inference, so it's as cheap as one. True?\n"
                "A: For FLOPs per token, yes; for memory it is all 46.7B, and a batch of 16 "
                "touches nearly every expert.")
        assert "active-size-at-inference" not in claimed("mixtral-moe-decode",
                                                         "what-moe-saves", text), label


def test_the_candidates_own_wrong_reply_in_a_dialogue_is_still_claimed() -> None:
    text = ("Interviewer: What do you do about the 128k request?\n"
            "Me: Raise max_model_len to 128k for everyone; paging means it costs nothing "
            "until someone uses it.")
    assert "raise-cap-for-everyone" in claimed("long-context-tier", "pool-policy", text)


def test_weights_reused_across_a_batch_is_no_claim_that_kv_makes_decode_memory_bound() -> None:
    text = ("Decode still reads every weight for one token, so it waits on memory; batching "
            "helps because the weights get reused across more sequences.")
    assert "kv-read-makes-decode-memory-bound" not in claimed("prefill-vs-decode",
                                                              "why-two-regimes", text)


def test_flops_per_kv_byte_stated_flat_is_no_claim_that_intensity_grows() -> None:
    text = ("Decode attention is linear in context: one query against T cached keys, about a "
            "FLOP per KV byte read, so long contexts stay memory-bound.")
    assert "intensity-grows-with-context" not in claimed("prefill-vs-decode",
                                                         "why-two-regimes", text)


def test_fp8_math_hidden_behind_memory_traffic_is_no_claim_it_keeps_the_step() -> None:
    text = ("Twice the FLOPs, yes, but about a TFLOP is hidden behind 34 ms of memory traffic; "
            "the step stays where it was.")
    assert "fp8-math-keeps-step" not in claimed("llama2-70b-mi300x", "5a", text)


def test_fp8_kv_dequantised_in_the_kernel_is_no_claim_fp8_math_keeps_the_step() -> None:
    text = ("The kernel has to dequantize the fp8 K and V (or run fp8 math), which costs a "
            "little on the attention slice.")
    assert "fp8-math-keeps-step" not in claimed("llama2-70b-mi300x", "5a", text)


def test_fp8_math_as_the_reason_the_step_holds_is_still_claimed() -> None:
    text = "The step stays at 34 ms because fp8 math runs twice as fast."
    assert "fp8-math-keeps-step" in claimed("llama2-70b-mi300x", "5a", text)


def test_a_suspicion_that_the_average_is_prompts_only_is_no_claim_that_it_is() -> None:
    text = "Two risks. The 4k average might be prompts only."
    assert "context-is-the-prompt" not in claimed("llama31-8b-h100", "policy", text)


def test_the_scheduler_preempting_when_a_long_request_grows_is_no_quota_claim() -> None:
    text = ("Paging makes a long request no cheaper: once admitted it grows to 16 GiB and the "
            "scheduler preempts chat requests to make room.")
    assert "over-quota-preempts-running" not in claimed("long-context-tier", "pool-policy",
                                                        text)


def test_a_date_at_the_top_named_as_the_regression_is_no_claim_it_still_hits() -> None:
    text = ("A hit rate that drops right after a prompt edit is the usual regression: "
            "somebody added a date at the top.")
    assert "shared-text-anywhere" not in claimed("prefix-caching", "when-not", text)


def test_a_reserving_server_described_is_no_claim_about_vllm() -> None:
    text = ("A reserving server gives each request max_model_len contiguous slots up front, "
            "8,192 here; vLLM hands out a 16-token block only when the last one fills.")
    assert "vllm-reserves-max-model-len" not in claimed("paged-blocks-vllm", "why-paging", text)


def test_a_tied_model_read_in_full_is_no_claim_about_this_untied_one() -> None:
    text = ("For a tied model like Llama-3.2-1B the embedding table is read in full, so "
            "there is nothing to subtract.")
    assert "embedding-streamed" not in claimed("decode-roofline-vs-measured", "embedding-why",
                                               text)


def test_i_think_is_a_hedge_not_users_thinking() -> None:
    text = "I think we should plan on requests in flight, not on users."
    assert "thinking-users-hold-kv" not in claimed("littles-law-capacity", "plan", text)


def test_the_layer_head_width_from_the_config_is_no_claim_kv_heads_are_query_heads() -> None:
    text = ("| d_head | `hidden_size / num_attention_heads` = 8192/64 | 128 |\n"
            "| n_kv | `num_key_value_heads` | 8 |")
    assert "kv-heads-are-query-heads" not in claimed("llama2-70b-mi300x", "1b", text)


def test_a_queue_with_low_usage_read_as_another_limit_is_no_kv_bound_claim() -> None:
    text = ("A queue with low KV usage means something other than memory is the limit, so "
            "look at the engine's settings.")
    assert "queue-with-low-usage-means-kv-bound" not in claimed("observed-concurrency-lower",
                                                                "evidence", text)


def test_a_prefix_resident_only_if_it_matches_is_no_claim_it_is_never_evicted() -> None:
    text = ("The gain is the prefix's share of each session, and only if the prefix matches "
            "and stays resident.")
    assert "prefix-never-evicted" not in claimed("prefix-caching", "when-not", text)


# Corpus AV: answers explained by a toy example or another model first.

def test_a_toy_examples_head_dim_of_64_is_no_claim_of_64_kv_heads() -> None:
    text = ("Toy first: 2 layers, 4 KV heads of width 64, fp16: 2 × 2 × 4 × 64 × 2 = 2,048 "
            "bytes per token.")
    assert "kv-heads-are-query-heads" not in claimed("llama2-70b-mi300x", "1b", text)


def test_the_kv_width_worked_from_the_kv_heads_is_no_claim_they_are_query_heads() -> None:
    text = "d_head is 8,192 ÷ 64 heads = 128, so d_kv = n_kv × d_head = 1,024, not 8,192."
    assert "kv-heads-are-query-heads" not in claimed("llama2-70b-mi300x", "1b", text)


def test_the_query_heads_in_the_kv_formula_are_still_claimed() -> None:
    text = "KV per token = 2 × 80 × 64 × 128 × 2 = 2.5 MiB, one K and V per head."
    assert "kv-heads-are-query-heads" in claimed("llama2-70b-mi300x", "1b", text)


def test_a_what_if_called_a_fiction_is_no_claim() -> None:
    text = "Taking off only the 37B active parameters gives about 946 GB, a 3× fiction."
    assert "only-active-experts-resident" not in claimed("deepseek-v3-mla-h200",
                                                         "experts-and-levers", text)


def test_mha_split_eight_ways_is_no_claim_the_latent_is_split() -> None:
    text = ("Per GPU the latent is 70,272 B against 624,640 B for MHA split 8 ways: only "
            "about 9× smaller.")
    assert "latent-split-eight-ways" not in claimed("deepseek-v3-mla-h200", "why-mla", text)


# Corpus AW: rebuttals of a teammate's quoted message.

def test_a_teammates_quoted_wrong_claim_is_not_the_candidates() -> None:
    text = ("> @sam: TP=16 should halve the KV per GPU again\n"
            "Not quite: with 8 KV heads each of the 16 ranks holds a whole copy of one, so "
            "the KV per GPU stays where TP=8 left it.")
    assert "tp16-halves-kv-per-gpu" not in claimed("llama31-405b-h200-tp", "why-less", text)


def test_a_quoted_claim_the_reply_agrees_with_is_the_candidates() -> None:
    text = ("> @sam: TP=16 should halve the KV per GPU again\n"
            "+1, twice the ranks means half the cache on each.")
    assert "tp16-halves-kv-per-gpu" in claimed("llama31-405b-h200-tp", "why-less", text)


def test_an_option_the_candidate_would_avoid_is_no_claim_for_it() -> None:
    text = "Offloading cold experts to host memory is the one I'd avoid for a latency product."
    assert "offload-cold-experts" not in claimed("deepseek-v3-mla-h200", "experts-and-levers",
                                                 text)
