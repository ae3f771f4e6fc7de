"""Stop 59, second corpus: what the blind corpus AI (design-review comments: "Decision:",
"Why:", "Risks:", numbered lists) showed the tool saying wrongly when measured unread, after
AH's fixes: six right answers said to make a wrong claim, ten fluent wrong answers let through.
The texts here are written for the tests, in the corpus's manner, not copied from it. Each
test of a fix failed before; the guards beside them pass on both."""

from __future__ import annotations

from feedback_probes import claimed, marked

from trainer.drills.loader import find_drill, load_rubric
from trainer.marking.scoring import score_attempt

MI300X = "llama2-70b-mi300x"
ROOFLINE = "decode-roofline-vs-measured"
PREFILL = "prefill-vs-decode"
LONG = "long-context-tier"
MIXTRAL = "mixtral-moe-decode"
OBSERVED = "observed-concurrency-lower"


# --- how a sentence is cut ----------------------------------------------------------------------

def test_a_term_of_a_bare_list_names_it_and_claims_nothing() -> None:
    text = "MoE, 256 routed experts, shared expert, expert offload, FP8 KV, FlashMLA, KV budget"
    assert "offload-cold-experts" not in claimed("deepseek-v3-mla-h200", "experts-and-levers",
                                                 text)


def test_a_negated_term_of_a_terse_list_still_claims() -> None:
    text = ("Raise max_model_len on the one fleet and let chat preempt long requests. No "
            "separate pool, no fragmentation of the fleet.")
    assert "no-separate-pool" in claimed(LONG, "pool-policy", text)


def test_and_before_a_short_noun_phrase_goes_on_with_the_subject() -> None:
    text = ("The model ties its input embedding and output LM head, so the 1.05 GB matrix is "
            "stored once.")
    assert "lm-head-tied" in claimed(ROOFLINE, "embedding-why", text)


def test_and_makes_it_says_it_of_the_same_subject() -> None:
    text = ("Every token attends to every earlier token, which is what drives the 61.6 TFLOP "
            "and makes it compute-bound.")
    assert "attention-sets-the-regime" in claimed(PREFILL, "why-two-regimes", text)


def test_and_before_a_clause_of_its_own_still_starts_another_statement() -> None:
    # the untied head is stated, and the next clause is about the table the step skips
    text = "The LM head is a separate matrix and the input embedding is tied to nothing."
    assert "lm-head-tied" not in claimed(ROOFLINE, "embedding-why", text)


# --- excuses in other words ----------------------------------------------------------------------

def test_a_proposal_rejected_is_no_recommendation_of_it() -> None:
    text = 'Decision: reject "raise max_model_len for everyone". Serve long context as a tier.'
    assert "raise-cap-for-everyone" not in claimed(LONG, "pool-policy", text)


def test_a_lever_marked_not_recommended_is_no_recommendation() -> None:
    text = ("4. Not recommended: changing routing to top-1 at inference. It's a different "
            "model, and quality is unvalidated.")
    assert "fewer-experts-at-inference" not in claimed(MIXTRAL, "serving-levers", text)


def test_users_losing_a_quarter_of_the_speed_is_no_even_split() -> None:
    text = ("Adding a user only adds the cost of reading that user's own history, which is why "
            "four users each lose only about a quarter of the speed a lone user gets.")
    assert "per-user-rate-split-evenly" not in claimed(MI300X, "3c-explain", text)


def test_a_reserving_server_described_is_no_claim_about_vllm() -> None:
    text = ("Reserving server: each request claims max_model_len = 8,192 slots at admission, "
            "so the card holds ~53 requests regardless of how short they are.")
    assert "x-is-the-admission-limit" not in claimed("paged-blocks-vllm", "why-paging", text)


def test_fragmentation_as_a_second_possibility_is_not_ranked_first() -> None:
    text = ("Most likely the sessions are longer than planned. It could also be memory overhead "
            "or fragmentation.")
    assert "fragmentation-ranked-first" not in claimed(OBSERVED, "hypotheses", text)


# --- misconceptions said another way -------------------------------------------------------------

def test_autoscaling_on_sm_utilisation_is_a_wrong_claim() -> None:
    assert "compute-utilisation-as-signal" in claimed(
        LONG, "operations", "Decision: autoscale the long pool on SM utilization.")


def test_preemption_cheap_with_prefix_caching_is_a_wrong_claim() -> None:
    text = "vLLM recomputes the preempted requests, and with prefix caching that's cheap."
    assert "preemptions-transparent" in claimed(LONG, "operations", text)


def test_skipping_weight_quantization_is_a_wrong_claim_here() -> None:
    text = "2. Skip weight quantization: FP8 weights wouldn't move either number much."
    assert "quantizing-weights-buys-little" in claimed(MIXTRAL, "serving-levers", text)


def test_fp8_kv_speeding_every_step_including_batch_1_is_a_wrong_claim() -> None:
    text = ("1. FP8 KV halves KV bytes per token. Decode is memory-bound, so halving the bytes "
            "also speeds up every step, including batch 1.")
    assert "fp8-kv-speeds-batch-1" in claimed(MIXTRAL, "serving-levers", text)


def test_the_engine_capping_concurrency_on_max_model_len_is_a_wrong_claim() -> None:
    text = ("If the log reads ~12 while we expected ~96, the engine is capping concurrency "
            "based on max_model_len.")
    assert "engine-caps-by-max-model-len" in claimed(OBSERVED, "evidence", text)


def test_sm_activity_near_100_as_evidence_is_a_wrong_claim() -> None:
    text = ("2. DCGM GPU utilization / SM active. If SM activity sits near 100%, the card is "
            "compute-saturated and more GPUs are justified.")
    assert "gpu-utilization-as-evidence" in claimed(OBSERVED, "evidence", text)


def test_bigger_decode_batches_deeper_into_memory_bound_is_a_wrong_claim() -> None:
    text = "Bigger decode batches push the step deeper into the memory-bound regime."
    assert "batch-makes-decode-more-memory-bound" in claimed(PREFILL, "why-two-regimes", text)


def test_kv_traffic_overlapping_under_the_weight_read_is_a_wrong_claim() -> None:
    text = ("As long as the total KV read stays below the weight bytes, the KV traffic overlaps "
            "under the weight read and adds no time.")
    assert "kv-rides-along-free" in claimed(MI300X, "5c", text)


def test_the_attention_history_shared_across_the_batch_is_a_wrong_claim() -> None:
    text = "The attention history is also read once per step and shared across the batch."
    assert "kv-shared-by-the-batch" in claimed(MI300X, "3c-explain", text)


def test_paging_that_allocates_as_tokens_arrive_does_not_make_mha_fit() -> None:
    text = ("With PagedAttention, blocks are allocated as tokens arrive, so the 85.9 GB figure "
            "is manageable.")
    assert "paging-makes-it-fit" in claimed(MI300X, "2d", text)


def test_tp_that_does_not_actually_buy_speed_is_a_wrong_claim() -> None:
    text = "Latency: TP=2 doesn't actually buy speed; one card decodes at about the same TPOT."
    assert "second-card-only-memory" in claimed("llama31-70b-tp2-h100", "tp-trade", text)


# --- what a wrong claim costs --------------------------------------------------------------------

def _text_score(drill_id: str, step_id: str, text: str) -> float:
    drill = find_drill(drill_id)[0]
    score = score_attempt(drill, load_rubric(drill.rubric), marked(drill_id, {step_id: text}))
    return float(sum(d.score for d in score.dimensions if d.id != "arithmetic"))


def test_an_answer_that_makes_a_wrong_claim_earns_nothing_of_its_steps_concepts() -> None:
    # right terms beside the wrong claim (one H100 holds the FP8 weights with room for KV):
    # a junior answer that earns nothing must not be outscored by it
    text = ("Decision: move to one H100 and drop TP. FP8 weights are 70.55 GB on an 80 GB "
            "card, which leaves 9.5 GB for KV, and the all-reduce per layer over NVLink goes "
            "away.")
    assert "one-card-leaves-kv" in claimed("llama31-70b-tp2-h100", "tp-trade", text)
    assert _text_score("llama31-70b-tp2-h100", "tp-trade", text) == 0


def test_the_same_terms_without_the_wrong_claim_still_earn() -> None:
    text = ("TP=2 splits the 70.55 GB of FP8 weights, so each H100 keeps room for KV, and the "
            "all-reduce per layer over NVLink is what it costs.")
    assert _text_score("llama31-70b-tp2-h100", "tp-trade", text) > 0
