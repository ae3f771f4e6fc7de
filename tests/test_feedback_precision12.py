"""Stop 55: what the twenty-second and twenty-third blind feedback reviews and the blind corpus
AA showed the tool saying wrongly. Each test of a fix failed before; the guards beside them
pass on both."""

from __future__ import annotations

import pytest
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


PLANTED_REVIEW_22_OR_CORPUS_AA = [
    ("prefix-caching", "when-not",
     "A hit skips the prefill of the shared tokens, so TTFT drops, and TPOT drops too because "
     "the shared tokens no longer cost anything during decode.", "prefix-hit-speeds-decode"),
    ("prefix-caching", "block-size-why",
     "Memory is unaffected, because each session still writes the prompt's KV into its own "
     "blocks after the cache hit.", "session-keeps-own-prefix"),
    ("paged-blocks-vllm", "why-paging",
     "It also periodically compacts live blocks to defragment the pool.", "vllm-compacts-blocks"),
    ("paged-blocks-vllm", "refusal",
     "Or enable prefix caching, which would let the 131k request fit by sharing its blocks.",
     "prefix-caching-makes-it-fit"),
    ("llama2-70b-mi300x", "5a",
     "Unchanged: the weight read dominates and the KV reads are negligible next to it.",
     "kv-read-negligible"),
    ("llama2-70b-mi300x", "5c",
     "Long contexts make batching cheaper because the weight read is amortised.",
     "long-context-makes-batching-cheaper"),
    ("llama31-8b-h100", "policy",
     "FP8 KV halves bytes/token: 96 -> 193 sessions, and it also doubles each user's decode "
     "speed since the step reads half the bytes.", "fp8-kv-doubles-decode-speed"),
    ("chunked-prefill-tpot", "trade-off",
     "In vLLM set max_num_batched_tokens = 320, since that budget only counts the prefill "
     "chunk's tokens.", "batched-tokens-prefill-only"),
    ("llama2-70b-mi300x", "3c-explain",
     "Each sequence's forward pass streams the 138 GB of weights for itself, so each extra "
     "user slows everyone by a full weight read.", "weights-read-per-sequence"),
    (SPEC, "when-it-pays",
     "Verifying k + 1 tokens costs k + 1 full forward passes of the 70B.",
     "verify-costs-a-step-per-token"),
    ("decode-roofline-vs-measured", "batch1-why",
     "Batch 1 is far from the bandwidth roofline because at batch 1 decode is compute-bound.",
     "decode-compute-bound"),
]


@pytest.mark.parametrize(("drill", "step", "said"), [
    ("prefix-caching", "when-not",
     "TTFT drops but TPOT does not drop: decode still reads the prefix KV."),
    ("paged-blocks-vllm", "why-paging",
     "Blocks need not be contiguous, so there is no compaction: a block table maps them."),
    ("llama31-8b-h100", "policy",
     "FP8 KV halves bytes per token: 96 -> 193 sessions, each user's speed unchanged."),
])
def test_the_right_form_of_a_review_22_claim_is_not_flagged(drill: str, step: str,
                                                            said: str) -> None:
    assert claimed(drill, step, said) == []


# --- review 23's planted claims ----------------------------------------------------------------

PLANTED_REVIEW_23 = [
    ("deepseek-v3-mla-h200", "why-mla",
     "Every decode step each GPU has to all-gather the other seven GPUs' latents over NVLink "
     "before it can attend.", "latent-all-gathered"),
    ("deepseek-v3-mla-h200", "why-mla",
     "MLA compresses the KV so it is smaller. TP splits it 8 ways so each GPU has 1/8.",
     "latent-split-eight-ways"),
    ("deepseek-v3-mla-h200", "experts-and-levers",
     "The 37B active figure is per token, but the router picks a sequence's 8 experts once at "
     "prefill and the session keeps them for all of decode.", "routing-fixed-per-sequence"),
    ("mixtral-moe-decode", "what-moe-saves",
     "Batch 64: every expert is touched, and the FLOPs per token also rise to a dense 46.7B "
     "model's.", "batch-raises-flops-per-token"),
    ("mixtral-moe-decode", "serving-levers",
     "Expert parallelism over more GPUs: each holds fewer experts, and it needs no inter-GPU "
     "communication at all since each token just stays on the GPU that owns its experts.",
     "ep-tokens-stay-put"),
    ("hybrid-state-kv", "how-concurrency-scales",
     "The Mamba state can also be shared across sessions by prefix caching just like KV "
     "blocks.", "state-shared-by-prefix-caching"),
    (SPEC, "when-it-pays",
     "The catch is that the output is only approximately the target model's distribution, so "
     "I would turn it off where exact sampling matters.", "output-only-approximate"),
    ("disaggregated-prefill", "when-it-pays",
     "The transfer can never be overlapped with the prefill, because the KV only exists once "
     "the whole prompt has been processed.", "transfer-never-overlaps"),
    ("observed-concurrency-lower", "hypotheses",
     "Activations and CUDA graphs cost ~11% at start-up, but that memory keeps growing as "
     "sessions get longer, so over months it could explain the 40% alone.",
     "activation-memory-grows"),
    ("observed-concurrency-lower", "evidence",
     "vllm:num_preemptions_total counts requests rejected at admission when no blocks are "
     "free.", "preemptions-are-rejections"),
    ("observed-concurrency-lower", "action",
     "FP8 KV (vLLM only allows an fp8 KV cache when the weights are fp8 too, so requantise "
     "the weights first).", "fp8-kv-needs-fp8-weights"),
    ("llama31-405b-h200-tp", "why-less",
     "The replication is forced by NCCL: its all-reduce needs every rank to hold the full KV "
     "of its head group.", "replication-forced-by-allreduce"),
    ("llama31-405b-h200-tp", "why-less",
     "It does double: TP16 gives twice the sessions; the only issue is the slower "
     "interconnect.", "tp16-doubles-sessions"),
]


@pytest.mark.parametrize(("drill", "step", "said"), [
    ("deepseek-v3-mla-h200", "why-mla",
     "Under TP each GPU keeps the whole 576-wide latent; GQA splits its KV heads, each GPU "
     "holding 1/8 of them."),
    ("deepseek-v3-mla-h200", "experts-and-levers",
     "Experts are picked per token and per layer, so with many sessions every expert is hit "
     "and all 673 GB stay resident."),
    (SPEC, "when-it-pays",
     "Rejection sampling keeps the output exactly the target's distribution; a weak draft "
     "costs speed, never quality."),
    ("disaggregated-prefill", "when-it-pays",
     "A layer-wise connector overlaps the transfer with the prefill, so only its tail lands "
     "on TTFT."),
    ("llama31-405b-h200-tp", "why-less",
     "TP16 does not double the sessions: 8 KV heads on 16 GPUs are each held twice, so about "
     "1.5x."),
])
def test_the_right_form_of_a_review_23_claim_is_not_flagged(drill: str, step: str,
                                                            said: str) -> None:
    assert claimed(drill, step, said) == []


# --- review 24 ----------------------------------------------------------------------------------

def test_a_tilde_after_labelled_working_reads_the_result() -> None:
    mark = marked("prefill-vs-decode", {"decode-bytes": "16.06GB weights + 537MB kv ~ 16.6 GB"})[
        "decode-bytes"]
    assert mark.verdict == "correct"
    assert "comes to" not in mark.feedback  # the labelled working is not read as 16.06 GB


def test_a_tilde_after_a_closing_bracket_reads_the_result() -> None:
    mark = marked("prefill-vs-decode", {
        "crossover-batch": "B* = 989e12*16.06e9/(2*8.03e9*4.8e12) ~ 206"})["crossover-batch"]
    assert mark.verdict == "correct"


def test_one_quantity_in_two_units_is_no_range() -> None:
    mark = marked("sliding-window-kv", {"gemma-per-token": "2*42*8*224*2 = 301056 B ~ 294 KiB"})[
        "gemma-per-token"]
    assert mark.span is None and "range" not in mark.feedback


def test_working_that_subtracts_the_reserve_is_not_told_it_left_it_out() -> None:
    mark = marked("llama31-8b-h100", {"kv-budget": "80*.9 - 4 - 16 = 52 GiB = 55.8 GB"})[
        "kv-budget"]
    assert "forgot-reserve" not in mark.misconceptions


def test_working_without_the_reserve_is_still_told_it_left_it_out() -> None:
    mark = marked("llama31-8b-h100", {"kv-budget": "80*.9 - 16 = 56 GB"})["kv-budget"]
    assert "forgot-reserve" in mark.misconceptions


def test_working_that_comes_to_a_near_value_is_not_called_close() -> None:
    # 80 × 0.9 − 16 = 56: the marketed 80 GB and no reserve, not a rounding of 57
    mark = marked("paged-blocks-vllm", {"kv-budget": "80*0.9 - 16 = 56 GB"})["kv-budget"]
    assert "Close" not in mark.feedback


def test_a_bare_near_value_is_still_called_close() -> None:
    assert "Close (1.7% off)" in marked("paged-blocks-vllm", {"kv-budget": "56 GB"})[
        "kv-budget"].feedback


# --- review 25 ----------------------------------------------------------------------------------

def test_a_tilde_after_an_x_product_reads_the_result() -> None:
    assert marked("littles-law-capacity", {"in-flight": "30 x 7.94 ~ 238"})[
        "in-flight"].verdict == "correct"


def test_a_tilde_after_a_bracket_with_a_unit_reads_the_result() -> None:
    # a per-GPU answer that was refused as "invalid" is marked, and its slip named
    mark = marked("llama31-8b-h100", {
        "followup-70b-tp-sessions": "per GPU: 32.7 GB / (4096*80 KiB) ~ 48 sessions"})[
        "followup-70b-tp-sessions"]
    assert mark.verdict == "wrong" and "per-gpu-vs-total" in mark.misconceptions


def test_a_figure_of_kib_in_working_is_no_head_dim() -> None:
    # "64 KiB" is a token's KV with K and V counted once, not head_dim = 64
    mark = marked("llama31-8b-h100", {"sessions-32k": "52 GB / (32768 * 64 KiB) = 24 sessions"})[
        "sessions-32k"]
    assert "head_dim" not in mark.feedback


def test_a_bandwidth_in_tb_per_s_is_still_a_figure_of_its_input() -> None:
    # "4.8 TB/s" is no amount of bytes: the working shows the datasheet bandwidth
    mark = marked("chunked-prefill-tpot", {"decode-step": "(15.01 + 64*0.537)/4.8 TB/s = 10.3 ms"})[
        "decode-step"]
    assert "Your working shows the slip" in mark.feedback


def test_working_a_ceiling_step_rounds_up_is_not_said_to_disagree() -> None:
    # replicas: 30/29 = 1.03, and a part of a replica is a whole one: 2
    mark = marked("littles-law-capacity", {"replicas": "30/29 = 2"})["replicas"]
    assert "Your working" not in mark.feedback


def test_swapping_above_a_link_speed_is_no_claim_that_it_always_wins() -> None:
    said = ("Swap: 4 KV heads make the KV tiny, and swapping wins on any link above ~5 GB/s; "
            "copies run on copy engines.")
    assert "swap-always-wins" not in claimed("swap-or-recompute", "policy", said)


PLANTED_REVIEW_25 = [
    ("llama31-8b-h100", "policy",
     "Turn on FP8 KV: since both K and V shrink to one byte, it roughly quadruples the "
     "sessions per card.", "fp8-kv-more-than-doubles"),
    ("llama31-8b-h100", "followup-128k-policy",
     "Because vLLM reserves the full max_model_len up front for every request, raising it to "
     "128k for all users would cut chat capacity about 32x.", "max-model-len-reserved-per-request"),
    ("llama2-70b-mi300x", "2d",
     "Options: tensor parallelism, since TP=2 halves the KV bytes each token costs so one MHA "
     "sequence then fits.", "tp-halves-token-kv"),
    ("prefix-caching", "block-size-why",
     "A large block buys fewer block-table entries, less hashing work, bigger kernel tiles, and "
     "it wastes less memory at the tail of each request.", "bigger-blocks-waste-less"),
    ("multi-turn-growth", "why-overstated",
     "The reply being generated doesn't occupy KV until the request finishes, so the only "
     "thing missed is history.", "reply-not-cached-until-done"),
    ("paged-blocks-vllm", "why-paging", "Paging compresses the KV so it uses less memory.",
     "paging-compresses-kv"),
    ("hybrid-state-kv", "how-concurrency-scales",
     "Same as a transformer; Mamba just makes it faster.", "hybrid-scales-like-transformer"),
    ("llama2-70b-mi300x", "2c-why", "the head_dim term", "head-dim-term-gives-ratio"),
]
PLANTED_REVIEW_24 = [
    ("swap-or-recompute", "policy",
     "The PCIe copies are driven by the SMs, so a swap stalls the running batch about as much "
     "as a recompute would.", "swap-copies-stall-like-recompute"),
    ("long-context-tier", "pool-policy",
     "Just raise max_model_len, vLLM pages the cache so it's fine for everyone.",
     "raise-it-paging-covers-it"),
    ("decode-roofline-vs-measured", "batch1-why",
     "Batch 1 is compute bound so it's far from the memory roofline. Use the 989 TFLOPS in the "
     "plan.", "plan-at-datasheet"),
    ("decode-roofline-vs-measured", "batch1-why",
     "For a capacity plan I would use about 86% of the datasheet, the copy ceiling.",
     "plan-at-86-percent"),
    ("decode-roofline-vs-measured", "long-why",
     "vLLM's default FlashAttention backend does not do split-KV, so vLLM still has this "
     "problem at 32k.", "vllm-has-no-split-kv"),
    ("llama31-70b-tp2-h100", "per-gpu-vs-total-explain",
     "vLLM computes it by applying gpu_memory_utilization to the memory left free after the "
     "weights are loaded.", "utilization-of-what-is-free"),
    ("llama31-70b-tp2-h100", "tp-trade",
     "And it keeps scaling: going to TP=16 would halve the KV per GPU again.",
     "tp16-halves-again"),
    ("prefill-vs-decode", "stalls-and-levers",
     "Chunked prefill is off by default in vLLM V1, so I would turn on enable_chunked_prefill.",
     "chunked-prefill-off-in-v1"),
    ("sliding-window-kv", "what-windows-cost",
     "Because every layer in Mistral is windowed the model's effective reach is just 4,096 "
     "tokens: nothing older can influence the output at all.", "beyond-window-invisible"),
    ("llama31-8b-h100", "followup-128k-policy",
     "Turn on chunked prefill in that pool too; it shrinks the 128k session's KV footprint "
     "because only one chunk's KV is resident at a time.", "chunked-prefill-shrinks-kv"),
    ("paged-blocks-vllm", "why-paging",
     "What remains is internal waste of up to one partial block per layer, so at most 32 "
     "blocks' worth per request.", "partial-block-per-layer"),
]


def test_a_quoted_proposal_answered_with_a_pool_is_no_claim() -> None:
    said = ('"Just raise max_model_len" is a promise of 16 GiB per request on every replica. '
            "My counter-proposal: a long pool of its own replicas, admitted by quota.")
    assert "raise-it-paging-covers-it" not in claimed("long-context-tier", "pool-policy", said)


@pytest.mark.parametrize(("drill", "step", "said", "claim"),
                         PLANTED_REVIEW_22_OR_CORPUS_AA + PLANTED_REVIEW_23 + PLANTED_REVIEW_24
                         + PLANTED_REVIEW_25)
def test_a_claim_a_review_planted_is_flagged(drill: str, step: str, said: str,
                                             claim: str) -> None:
    assert claim in claimed(drill, step, said)
