"""Stop 58: what the blind corpus AF (whiteboard notes: formulas, ≈ × → ·, Greek letters)
showed the tool saying wrongly when measured unread. The texts here are written for the tests,
in the corpus's manner, not copied from it. Each test of a fix failed before; the guards beside
them pass on both."""

from __future__ import annotations

import pytest
from feedback_probes import claimed, evidence

from trainer.marking.prose import read_text

MI300X = "llama2-70b-mi300x"
SPEC = "speculative-decoding"


# --- symbols of a derivation ---------------------------------------------------------------------

def test_a_middle_dot_between_figures_is_a_product() -> None:
    said = evidence(MI300X, {"5a": "t = (W + B·kv)/BW = (138 + 8·5.37)/5.3 TB/s ≈ 34 ms."},
                    "levers")
    assert "'8 × 5.37'" in said


def test_a_spaced_middle_dot_between_terms_is_no_product() -> None:
    assert "×" not in read_text("GQA · FP8 KV · paged blocks").tokens


def test_greek_letters_are_read_by_their_names() -> None:
    assert read_text("tokens per round = k·α + 1").tokens[-4:] == ("×", "alpha", "+", "1")


def test_a_linear_tokens_per_round_is_a_wrong_claim() -> None:
    text = "E[tokens/round] = k·α + 1 = 4·0.8 + 1 = 4.2, so about 3.9× at these step times."
    assert "tokens-per-round-linear" in claimed(SPEC, "when-it-pays", text)


def test_the_geometric_formula_set_against_the_linear_one_claims_nothing() -> None:
    text = ("Acceptance stops at the first miss: (1 − α^(k+1))/(1 − α) = 3.36 tokens per round, "
            "rather than k·α + 1.")
    assert "tokens-per-round-linear" not in claimed(SPEC, "when-it-pays", text)


def test_twice_the_users_is_not_the_factor_of_k_and_v() -> None:
    said = evidence(MI300X, {"5a": "2× users, 0 latency cost: per-seq rate stays 29 tok/s."},
                    "assumptions")
    assert "'2 ×'" not in said


def test_the_factor_two_beside_the_layers_is_the_kv_formula() -> None:
    said = evidence(MI300X, {"1b": "2 × 80 layers × 64 heads × 128 × 2 B = 2.5 MiB per token"},
                    "assumptions")
    assert "The KV formula with every term" in said


def test_a_derivation_that_opens_a_list_of_unchanged_terms_is_explained() -> None:
    text = "The n_kv term: 64 → 8 KV heads, ratio 64/8 = 8×, with L, d_head, b, N unchanged."
    said = evidence(MI300X, {"2c-why": text}, "assumptions")
    assert "'kv heads'" in said and "listed, not explained" not in said


# --- clauses -------------------------------------------------------------------------------------

def test_a_figure_closing_the_sentence_before_is_no_operand_of_the_next() -> None:
    text = ("Capacity: FP8 weights and FP8 KV (2×). Batch-1 latency: FP8 KV is the main lever, "
            "it halves the step.")
    assert "fp8-kv-speeds-batch-1" in claimed("mixtral-moe-decode", "serving-levers", text)


def test_keys_and_values_name_one_thing_and_split_no_clause() -> None:
    text = "In a batch the kernel streams those keys and values once for all users together."
    assert "kv-shared-by-the-batch" in claimed(MI300X, "3c-explain", text)


# --- right answers that are not wrong claims -----------------------------------------------------

@pytest.mark.parametrize(("drill", "step", "claim", "text"), [
    ("deepseek-v3-mla-h200", "experts-and-levers", "only-active-experts-resident",
     "All 256 experts stay resident; budgeting only the 37 GB active would be a 636 GB "
     "overstatement."),
    (MI300X, "5a", "step-gets-slower",
     "Same 181 GB read, so 34.1 ms. 2× users, 0 latency cost: aggregate doubles to 234 tok/s."),
    ("sliding-window-kv", "why-different", "head-dim-from-hidden-overstates",
     "hidden/heads = 3584/16 = 224 → 12.5% low (294 vs 336 KiB/token) → overestimates "
     "sessions."),
    ("long-context-tier", "pool-policy", "raise-cap-for-everyone",
     "Raising max_model_len fleet-wide turns every chat replica into one that 3 long users "
     "can fill."),
    ("llama31-70b-tp2-h100", "per-gpu-vs-total-explain", "per-gpu-holds-every-head",
     "Halving mixes a per-GPU budget with the whole-token cost."),
    ("llama31-405b-h200-tp", "why-less", "weights-on-one-node",
     "Budget 8·122.9 − 487 → 16·122.9 − 487: the second node's memory is all KV since the "
     "weights are paid once."),
    ("prefix-caching", "block-size-why", "partial-block-shared",
     "With 16-token blocks all 2,000 prompt tokens are shared (125 blocks)."),
    (MI300X, "5c", "free-while-memory-bound",
     "Near-free while W ≫ B·kv_seq; exactly free when B·kv_seq holds. It also assumes you stay "
     "below the compute ridge."),
    ("llama31-8b-h100", "policy", "raise-cap-for-everyone",
     "A 32k session costs 8 chat sessions, a 128k one 32, which is why the cap matters."),
    (MI300X, "2d", "tp-copies-weights",
     "With TP each GPU holds 1/N of the weights; data parallel would give each GPU its own "
     "copy of the weights."),
])
def test_a_right_sentence_in_other_words_claims_nothing(drill: str, step: str, claim: str,
                                                        text: str) -> None:
    assert claim not in claimed(drill, step, text)


# --- wrong claims the corpus planted, said in other words ----------------------------------------

PLANTED = [
    ("chunked-prefill-tpot", "trade-off", "chunking-costs-user-nothing",
     "Cost to the user who pasted it: essentially nothing, the Σ FLOPs are the same."),
    ("decode-roofline-vs-measured", "long-why", "long-attention-compute-bound",
     "Attention work grows as O(T²), so 8×32k crosses the ridge point: attention becomes "
     "compute-bound."),
    ("hybrid-state-kv", "how-concurrency-scales", "concurrency-independent-of-context",
     "Concurrency ≈ budget/S whether the context is 1k or 128k; a transformer falls as 1/n."),
    ("long-context-tier", "pool-policy", "tp-doubles-sessions-per-card",
     "At TP=2 the heads split 4+4, so per-GPU KV halves and each card holds 2× the long "
     "sessions."),
    ("long-context-tier", "operations", "preemptions-transparent",
     "Preemptions I wouldn't alert on: recompute is cheap and transparent to the user."),
    ("observed-concurrency-lower", "action", "utilization-closes-the-gap",
     "Raise gpu_memory_utilization to 0.98: that 8% is exactly the margin we're missing."),
    ("multi-turn-growth", "policy", "prefix-caching-shares-history",
     "With automatic prefix caching each chat only stores its new message and reply."),
    ("prefill-vs-decode", "why-two-regimes", "intensity-grows-with-context",
     "At 32k+ the attention's intensity rises and decode turns compute-bound at smaller "
     "batches."),
    ("prefix-caching", "block-size-why", "partial-block-shared",
     "The engine hashes all 8 and shares the partial one too."),
    ("sliding-window-kv", "why-different", "head-dim-is-the-main-cause",
     "Gemma-2 saves less mainly because of its head_dim of 256, with the global layers on "
     "top."),
    ("swap-or-recompute", "policy", "recompute-is-free",
     "Recompute slots into the idle compute of memory-bound decode at essentially zero cost."),
    ("llama2-70b-mi300x", "2d", "tp-copies-weights",
     "TP last: with TP each GPU keeps its own copy of the weights beside its slice of KV."),
    ("decode-roofline-vs-measured", "batch1-why", "batch1-gap-is-kv-attention",
     "At batch 1 the KV is proportionally a much bigger share of what the step reads."),
    ("llama31-70b-tp2-h100", "tp-trade", "fits-on-one-card",
     "For a small internal tool I'd serve it on one card and skip the all-reduces."),
    ("long-context-tier", "pool-policy", "over-quota-preempts-running",
     "When a team is over its quota the scheduler preempts the oldest running session."),
    ("long-context-tier", "pricing", "long-token-32x-slower",
     "A 128k output token reads 32× the context, so it costs ~32× the GPU time to make."),
    ("prefill-vs-decode", "why-two-regimes", "prefill-bound-by-attention",
     "What makes prefill compute-bound is attention: its quadratic T² term."),
    ("multi-turn-growth", "policy", "prefix-caching-shares-history",
     "With prefix caching on, each user's history from the previous turn is already in the "
     "cache."),
    ("observed-concurrency-lower", "evidence", "nvidia-smi-shows-the-kv",
     "If framebuffer usage sits at ~90% at the plateau the KV pool is full."),
    ("observed-concurrency-lower", "evidence", "nvidia-smi-shows-the-kv",
     "nvidia-smi at ~90%+ means the card is full of KV; if it's well below, memory isn't the "
     "limit."),
]


@pytest.mark.parametrize(("drill", "step", "claim", "text"), PLANTED)
def test_a_planted_misconception_is_claimed(drill: str, step: str, claim: str,
                                            text: str) -> None:
    assert claim in claimed(drill, step, text)
