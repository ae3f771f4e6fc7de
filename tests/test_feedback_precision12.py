"""Stop 55: what the twenty-second and twenty-third blind feedback reviews and the blind corpus
AA showed the tool saying wrongly. Each test of a fix failed before; the guards beside them
pass on both."""

from __future__ import annotations

from feedback_probes import claimed, marked

SPEC = "speculative-decoding"
MLA = "deepseek-v3-mla-h200"


# --- working that shows what was done -----------------------------------------------------------

def test_working_with_two_byte_elements_is_no_fp32_cache() -> None:
    # 64 KiB is the fp32 value, but the working's 2 B and 128 wide heads say how it came
    mark = marked(SPEC, {"draft-kv-per-token": "2*16*8*128*2 = 64 KiB"})["draft-kv-per-token"]
    assert "fp32-kv" not in mark.misconceptions
    assert "fp32" not in mark.feedback


def test_working_with_four_byte_elements_is_still_an_fp32_cache() -> None:
    mark = marked(SPEC, {"draft-kv-per-token": "2*16*8*64*4 = 64 KiB"})["draft-kv-per-token"]
    assert "fp32-kv" in mark.misconceptions


def test_a_bare_fp32_value_is_still_named() -> None:
    assert "fp32-kv" in marked(SPEC, {"draft-kv-per-token": "64 KiB"})["draft-kv-per-token"] \
        .misconceptions


def test_a_guess_the_working_shows_none_of_is_not_said() -> None:
    # per query head: 128 × 128, no latent 4,032 wide anywhere in it
    mark = marked(MLA, {"bytes-per-token-per-gpu": "2*61*128*128*2 / 8 = 499,712 B"})[
        "bytes-per-token-per-gpu"]
    assert "Likely slip" not in mark.feedback


def test_the_same_number_without_working_is_still_guessed() -> None:
    mark = marked(MLA, {"bytes-per-token-per-gpu": "499,712 B"})["bytes-per-token-per-gpu"]
    assert "Likely slip" in mark.feedback


def test_working_that_uses_right_figures_is_not_said_to_use_an_earlier_wrong_answer() -> None:
    # 1.476 GB is the right draft session; the 16 KiB answered before is not in the working
    marks = marked(SPEC, {"draft-kv-per-token": "16*8*64*2 = 16 KiB",
                          "sessions-with-draft": "23.2/1.476 = 15.7"})
    assert "uses your answer" not in marks["sessions-with-draft"].feedback


def test_a_step_without_working_is_still_said_to_use_the_earlier_wrong_answer() -> None:
    marks = marked(SPEC, {"draft-kv-per-token": "16*8*64*2 = 16 KiB",
                          "sessions-with-draft": "15.7"})
    assert "uses your answer to draft-kv-per-token" in marks["sessions-with-draft"].feedback


# --- claims --------------------------------------------------------------------------------------

def test_a_list_that_ends_and_it_also_says_it_of_the_sentences_subject() -> None:
    said = "A big block buys less hashing, bigger kernel tiles, and it also cuts tail waste."
    assert "bigger-blocks-waste-less" in claimed("prefix-caching", "block-size-why", said)


def test_smaller_blocks_cutting_tail_waste_is_no_claim() -> None:
    said = "Bigger blocks mean more tail waste per request; smaller blocks cut tail waste."
    assert claimed("prefix-caching", "block-size-why", said) == []


def test_a_prefix_hit_does_not_make_decode_cheaper() -> None:
    said = ("A hit skips the prefill of the shared tokens, so TTFT drops, and TPOT drops too "
            "because the shared tokens no longer cost anything during decode.")
    assert "prefix-hit-speeds-decode" in claimed("prefix-caching", "when-not", said)


def test_tpot_said_to_stay_is_no_claim() -> None:
    said = "TTFT drops but TPOT does not drop: decode still reads the prefix KV."
    assert claimed("prefix-caching", "when-not", said) == []


def test_each_session_still_writing_the_prompt_is_a_claim() -> None:
    said = ("Memory is unaffected, because each session still writes the prompt's KV into its "
            "own blocks after the cache hit.")
    assert "session-keeps-own-prefix" in claimed("prefix-caching", "block-size-why", said)


def test_a_divided_head_width_reads_across_the_slash() -> None:
    said = "d_head = hidden / n_kv heads = 128 per head."
    assert "head-dim-from-kv-heads" in claimed("llama2-70b-mi300x", "1b", said)


def test_the_hidden_size_over_query_heads_is_no_claim_of_kv_heads() -> None:
    said = "d_head = hidden / n_heads = 8192/64 = 128."
    assert "head-dim-from-kv-heads" not in claimed("llama2-70b-mi300x", "1b", said)


def test_instead_of_excuses_nothing_in_the_sentence_joined_after() -> None:
    said = ("Instead of a separate pool I would turn on prefix caching. Then raising "
            "max_model_len for everyone is safe.")
    assert "cap-raised-for-all-is-harmless" in claimed("long-context-tier", "pool-policy", said)


def test_instead_of_still_excuses_its_own_clause() -> None:
    said = "A separate long-context pool instead of raising max_model_len for everyone."
    assert claimed("long-context-tier", "pool-policy", said) == []


def test_vllm_compacting_blocks_is_a_claim() -> None:
    said = "It also periodically compacts live blocks to defragment the pool."
    assert "vllm-compacts-blocks" in claimed("paged-blocks-vllm", "why-paging", said)


def test_no_compaction_needed_is_no_claim() -> None:
    said = "Blocks need not be contiguous, so there is no compaction: a block table maps them."
    assert "vllm-compacts-blocks" not in claimed("paged-blocks-vllm", "why-paging", said)


def test_prefix_caching_passing_the_start_up_check_is_a_claim() -> None:
    said = "Or enable prefix caching, which would let the 131k request fit by sharing its blocks."
    assert "prefix-caching-makes-it-fit" in claimed("paged-blocks-vllm", "refusal", said)


def test_kv_reads_negligible_is_a_claim() -> None:
    said = "Unchanged: the weight read dominates and the KV reads are negligible next to it."
    assert "kv-read-negligible" in claimed("llama2-70b-mi300x", "5a", said)


def test_long_contexts_making_batching_cheaper_is_a_claim() -> None:
    said = "Long contexts make batching cheaper because the weight read is amortised."
    assert "long-context-makes-batching-cheaper" in claimed("llama2-70b-mi300x", "5c", said)


def test_fp8_kv_doubling_each_users_speed_is_a_claim() -> None:
    said = ("FP8 KV halves bytes/token: 96 -> 193 sessions, and it also doubles each user's "
            "decode speed since the step reads half the bytes.")
    assert "fp8-kv-doubles-decode-speed" in claimed("llama31-8b-h100", "policy", said)


def test_fp8_kv_doubling_the_sessions_alone_is_no_claim() -> None:
    said = "FP8 KV halves bytes per token: 96 -> 193 sessions, each user's speed unchanged."
    assert "fp8-kv-doubles-decode-speed" not in claimed("llama31-8b-h100", "policy", said)


def test_the_token_budget_counting_only_the_chunk_is_a_claim() -> None:
    said = ("In vLLM set max_num_batched_tokens = 320, since that budget only counts the "
            "prefill chunk's tokens.")
    assert "batched-tokens-prefill-only" in claimed("chunked-prefill-tpot", "trade-off", said)


def test_each_sequence_streaming_the_weights_for_itself_is_a_claim() -> None:
    said = ("Each sequence's forward pass streams the 138 GB of weights for itself, so each "
            "extra user slows everyone by a full weight read.")
    assert "weights-read-per-sequence" in claimed("llama2-70b-mi300x", "3c-explain", said)


def test_verification_as_k_plus_one_full_passes_is_a_claim() -> None:
    said = "Verifying k + 1 tokens costs k + 1 full forward passes of the 70B."
    assert "verify-costs-a-step-per-token" in claimed(SPEC, "when-it-pays", said)


def test_compute_bound_batch_one_far_from_the_roofline_is_a_claim() -> None:
    said = ("Batch 1 is far from the bandwidth roofline because at batch 1 decode is "
            "compute-bound.")
    assert "decode-compute-bound" in claimed("decode-roofline-vs-measured", "batch1-why", said)
