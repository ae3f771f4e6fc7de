"""The sixteenth blind feedback review (24 sheets of 8 drills, 661 items) and the blind corpus
W (candidates who name a belief to reject it): Markdown emphasis is no symbol between words;
an answer followed by a dash and words, by the figure it is not, or after working in words
and a colon, reads as the candidate meant it; a belief given to others, or the condition of
a value denied, is no claim; a slip read from the working needs a figure that can be that
input; a figure the drill shows is said to be copied; one typed figure carries nothing.
Each test of a fix failed before; the guards beside them pass on both."""

from __future__ import annotations

import pytest

from trainer.drills.loader import find_drill, load_rubric
from trainer.drills.reference import AnswerKey
from trainer.marking.checker import Mark, mark_sheet
from trainer.marking.claims import claims_made
from trainer.marking.scoring import score_attempt
from trainer.reading.reader import read_answer


def marked(drill_id: str, answers: dict[str, str]) -> dict[str, Mark]:
    return mark_sheet(AnswerKey(find_drill(drill_id)[0]), answers)


def claimed(drill_id: str, step_id: str, text: str) -> list[str]:
    step = find_drill(drill_id)[0].step(step_id)
    return [made.claim.id for made in claims_made(step, text)]


def dimension(drill_id: str, step_id: str, text: str, dimension_id: str) -> float:
    drill = find_drill(drill_id)[0]
    score = score_attempt(drill, load_rubric(drill.rubric), marked(drill_id, {step_id: text}))
    return float(next(d.score for d in score.dimensions if d.id == dimension_id))


# --- Markdown emphasis ---------------------------------------------------------------------

def test_a_bold_word_earns_what_the_plain_word_does() -> None:
    plain = "MoE saves FLOPs always (~28% of dense)."
    bold = "MoE saves **FLOPs** always (~28% of dense)."
    earned = dimension("mixtral-moe-decode", "what-moe-saves", bold, "roofline")
    assert earned > 0
    assert earned == dimension("mixtral-moe-decode", "what-moe-saves", plain, "roofline")


def test_a_bold_or_quoted_as_code_answer_reads_as_its_figure() -> None:
    for typed in ("**52 GB**", "`52 GB`", "*52 GB*", "= **52 GB**"):
        assert read_answer(typed, "B").readings[0].quantity.value == 52 * 10**9, typed


def test_a_double_star_between_figures_is_still_a_power() -> None:
    assert read_answer("2**10 B", "B").readings[0].quantity.value == 1024


# --- answers with words and working around them ---------------------------------------------

def test_words_after_a_double_dash_are_a_remark() -> None:
    mark = marked("llama2-70b-mi300x", {
        "2a-max-sequences": "0 -- not even one fits (85.9 > 44)"})["2a-max-sequences"]
    assert mark.verdict == "correct"


def test_the_figure_an_answer_says_it_is_not_is_a_remark() -> None:
    read = read_answer("4096 (the window), not 32768", "tokens")
    assert [r.quantity.value for r in read.readings] == [4096]


def test_a_figure_after_working_in_words_and_a_comma_is_the_answer() -> None:
    mark = marked("paged-blocks-vllm", {
        "tail-waste": "8 of 1008 slots empty, ~0.8%"})["tail-waste"]
    assert mark.verdict == "correct"


def test_a_figure_after_working_and_a_colon_is_the_answer() -> None:
    read = read_answer("21 layers x 32768 + 21 x 4096, 8 KiB per layer-token: 6.34 GB", "B")
    assert [r.quantity.value for r in read.readings] == [6_340_000_000]


def test_two_bare_figures_after_a_comma_are_not_working_and_result() -> None:
    # "29, 30" is no working: the comma does not make 30 the answer
    assert read_answer("29, 30 tok/s", "tokens/s").readings[0].quantity.value == 29


def test_working_that_adds_a_bare_number_to_a_unit_gets_no_unit_note() -> None:
    # 15.01 is the weights in GB; read as KiB the working "comes to 537 MB", which it does not
    mark = marked("decode-roofline-vs-measured", {
        "b1-bytes": "15.01 + 4096 x 128 KiB (0.537) = 15.55 GB"})["b1-bytes"]
    assert mark.verdict == "correct"
    assert "comes to" not in mark.feedback


# --- claims: beliefs reported, denied conditions, figures sized against a budget -------------

def test_a_belief_given_to_others_is_no_claim() -> None:
    text = ("People assume TP=16 halves the KV per GPU, but there are only 8 KV heads: each "
            "GPU still holds one head, so every head is stored twice.")
    assert "tp16-halves-kv-per-gpu" not in claimed("llama31-405b-h200-tp", "why-less", text)


def test_a_claim_after_a_belief_given_to_others_is_still_made() -> None:
    text = "Some say the heads are copied, but really TP=16 halves the KV per GPU."
    assert "tp16-halves-kv-per-gpu" in claimed("llama31-405b-h200-tp", "why-less", text)


def test_the_condition_of_a_value_denied_is_no_claim() -> None:
    text = ("C is about 320 tokens, not the 417 you get ignoring chunk attention, and not 630 "
            "if you give the chunk the whole 25 ms.")
    assert "chunk-gets-whole-target" not in claimed("chunked-prefill-tpot", "trade-off", text)


def test_giving_the_chunk_the_whole_target_is_still_a_claim() -> None:
    text = "Decode tokens ride along for free, so the chunk gets the whole 25 ms budget."
    assert "chunk-gets-whole-target" in claimed("chunked-prefill-tpot", "trade-off", text)


def test_a_sequence_nearly_double_the_budget_is_no_second_card() -> None:
    text = "MHA needs 80 GB per sequence, nearly double the budget, so zero sessions fit."
    assert "tp2-doubles-kv-budget" not in claimed("llama2-70b-mi300x", "2d", text)
    assert "tp2-doubles-kv-budget" in claimed("llama2-70b-mi300x", "2d",
                                              "A second card doubles the budget to 88 GB.")


def test_chunks_free_for_the_decoders_is_not_the_users_ttft() -> None:
    text = ("Because the step is memory-bound, adding chunk tokens is basically free until "
            "the FLOPs exceed the weight read, so bigger chunks cost the decoders nothing.")
    assert "chunking-costs-user-nothing" not in claimed("chunked-prefill-tpot", "trade-off",
                                                        text)


def test_an_output_different_from_the_targets_is_the_lossy_claim() -> None:
    text = ("The trade-off is that the output is slightly different from the target alone "
            "because the draft's tokens are kept when accepted.")
    assert claimed("speculative-decoding", "when-it-pays", text) == ["speculation-changes-output"]


# --- numeric diagnosis ----------------------------------------------------------------------

def test_the_weights_alone_are_named_though_an_earlier_answer_counted_the_kv() -> None:
    marks = marked("decode-roofline-vs-measured", {
        "b1-bytes": "15.01 + 4096 x 128 KiB (0.537) = 15.55 GB",
        "plan-roofline": "15.01 / 4.8 = 3.1 ms"})
    assert marks["b1-bytes"].verdict == "correct"
    assert marks["plan-roofline"].misconceptions == ("forgot-kv",)


def test_a_working_figure_that_is_another_given_is_no_slip_of_the_step() -> None:
    # the 8 of "/8" is the 8 GPUs, not an MLA latent 8 wide
    mark = marked("deepseek-v3-mla-h200", {
        "bytes-per-token-per-gpu": "576*2*61/8 = 8,784 B"})["bytes-per-token-per-gpu"]
    assert mark.diagnosis is None or mark.diagnosis.slip.input != "mla_latent"
    assert "the figure in your working" not in mark.feedback


def test_a_working_figure_with_a_fraction_is_no_count_of_tokens() -> None:
    mark = marked("decode-roofline-vs-measured", {
        "plan-roofline": "15.01 / 4.8 = 3.1 ms"})["plan-roofline"]
    assert "context = 15.01" not in mark.feedback


def test_a_figure_the_situation_gives_is_said_to_be_copied() -> None:
    # 16.06 GB is the checkpoint the situation names; a context of 8,000 tokens would give it
    mark = marked("decode-roofline-vs-measured", {"b1-bytes": "16.06 GB"})["b1-bytes"]
    assert mark.verdict == "wrong"
    assert "a figure the situation gives (16.06 GB)" in mark.feedback
    assert mark.diagnosis is None


def test_another_steps_answer_is_said_to_be_that_answer() -> None:
    mark = marked("multi-turn-growth", {
        "prompt-only-sessions": "64 sequences"})["prompt-only-sessions"]
    assert "the answer to sessions (64 sequences)" in mark.feedback


def test_a_figure_the_drill_does_not_show_gets_no_copy_note() -> None:
    mark = marked("decode-roofline-vs-measured", {"b1-bytes": "17.3 GB"})["b1-bytes"]
    assert "not what this step asks for" not in mark.feedback


def test_one_typed_figure_does_not_follow_from_an_earlier_answer() -> None:
    # the draft's 1.2 GB and 128 KiB give a 0.568 ms draft step: "1 ms" is that to one figure
    marks = marked("speculative-decoding", {"draft-weights": "1.2 GB",
                                            "draft-kv-per-token": "128 KiB",
                                            "draft-step": "1 ms"})
    assert not marks["draft-step"].carried_forward
    assert "follows from your earlier answers" not in marks["draft-step"].feedback


# --- claims corpus W caught, in general terms -----------------------------------------------

def test_shrinking_weights_said_to_barely_move_latency_is_the_int8_claim() -> None:
    text = ("in decode the step is dominated by the KV read, not the weights, so shrinking "
            "weights barely moves latency; it just frees a bit of memory.")
    assert "int8-weights-no-latency" in claimed("llama2-70b-mi300x", "4f", text)


def test_users_free_below_peak_compute_is_the_memory_bound_claim() -> None:
    text = ("Adding concurrency is free as long as the batch's FLOPs stay below the GPU's peak "
            "compute.")
    assert "free-while-memory-bound" in claimed("llama2-70b-mi300x", "5c", text)


def test_bytes_not_limiting_decode_is_a_claim() -> None:
    text = ("The weight-vs-KV comparison is a red herring: bytes don't limit decode, "
            "arithmetic does.")
    assert "decode-limited-by-arithmetic" in claimed("llama2-70b-mi300x", "5c", text)


def test_the_kv_usage_gauge_called_misleading_is_the_claim_it_means_nothing() -> None:
    text = ("KV usage gauges are misleading because vLLM pre-allocates the whole cache at "
            "start-up, so they always read ~90%.")
    assert "kv-usage-meaningless" in claimed("long-context-tier", "operations", text)


def test_an_idea_called_misleading_is_still_reported_not_claimed() -> None:
    text = "The idea that KV usage is meaningless is misleading: it counts live blocks."
    assert claimed("long-context-tier", "operations", text) == []


def test_busy_sms_as_the_clearest_signal_is_the_utilisation_claim() -> None:
    text = ("The clearest signal is GPU compute utilisation: if the long pool's SMs are busy "
            "above ~80% it's sized right.")
    assert "compute-utilisation-as-signal" in claimed("long-context-tier", "operations", text)


def test_sms_that_look_busy_with_the_cache_empty_is_no_claim() -> None:
    text = "GPU utilisation can look busy while the cache is half empty: it says nothing."
    assert claimed("long-context-tier", "operations", text) == []


def test_fp8_kv_halving_a_kv_dominated_batch_one_step_is_a_claim() -> None:
    text = ("The fastest win is FP8 KV: it halves the cache and, since decode is dominated by "
            "KV reads, it halves the batch-1 step too.")
    assert "fp8-kv-speeds-batch-1" in claimed("mixtral-moe-decode", "serving-levers", text)


def test_a_subject_said_not_to_help_is_the_claim_it_does_not() -> None:
    text = "Quantizing the weights doesn't help the batch-1 step much."
    assert claimed("mixtral-moe-decode", "serving-levers", text) == [
        "weight-quantization-only-memory"]
    assert claimed("mixtral-moe-decode", "serving-levers",
                   "Quantizing the weights does help the step: fewer bytes read.") == []


def test_blocks_mapped_at_admission_is_the_reservation_claim() -> None:
    text = ("Paging doesn't really remove fragmentation, it moves it: each request still gets "
            "its max_model_len worth of blocks mapped at admission.")
    assert "vllm-reserves-max-model-len" in claimed("paged-blocks-vllm", "why-paging", text)


def test_that_after_a_dash_says_it_of_the_item_before() -> None:
    text = ("The log says 53.05x — that's the actual number of concurrent requests the card "
            "will run.")
    assert "logged-x-is-the-real-concurrency" in claimed("paged-blocks-vllm", "why-paging", text)


def test_and_before_a_verb_keeps_the_clauses_subject() -> None:
    text = "I'd quantize the weights to FP8: that halves the model and doubles the KV capacity."
    assert "fp8-weights-double-sessions" in claimed("llama31-8b-h100", "policy", text)


def test_weights_cached_between_steps_is_a_claim() -> None:
    text = "The 16 GB of weights are effectively cached after the first step."
    assert "weights-cached-between-steps" in claimed("prefill-vs-decode", "why-two-regimes",
                                                     text)
    assert "weights-cached-between-steps" not in claimed(
        "prefill-vs-decode", "why-two-regimes",
        "The weights cannot be cached: 16 GB is far too big for the L2.")


def test_splitting_the_compute_does_not_excuse_full_weights_on_each_gpu() -> None:
    text = ("Tensor parallelism splits the compute, but each GPU still streams the full "
            "70.6 GB of weights every decode step.")
    assert "tp-copies-weights" in claimed("llama31-70b-tp2-h100", "tp-trade", text)
    assert "tp-copies-weights" not in claimed(
        "llama31-70b-tp2-h100", "tp-trade",
        "The weights are split across the two GPUs: each holds half, not the full 70.6 GB.")


# --- review 17 and corpus X ------------------------------------------------------------------

def test_a_carried_zero_share_is_no_band_for_any_answer() -> None:
    # a live context of 6,800 tokens (a multiple of 16) leaves 0% of each session's blocks
    # empty; "~35%" does not follow from it, and the reference is 0.0878%
    marks = marked("observed-concurrency-lower", {
        "live-tokens": "396,728", "estimate": "97", "implied-context": "~6,800 tokens",
        "real-sessions": "~58", "fragmentation": "~35% (paged blocks, allocator holes)"})
    assert marks["fragmentation"].verdict == "wrong"


def test_a_carried_zero_count_still_stands_for_none_fit() -> None:
    # the 70B's MHA sequence of 42.9 GB against a 44 GB budget minus nothing: 0 fit is right
    mark = marked("llama2-70b-mi300x", {"2a-max-sequences": "0"})["2a-max-sequences"]
    assert mark.verdict == "correct"


def test_a_table_row_after_another_is_not_read_as_one_figure_divided() -> None:
    text = "| batch | per seq |\n|---|---|\n| 1 | 38.4 tok/s | 38.4 |\n| 4 | 29.3 tok/s | 117 |"
    assert "per-user-rate-split-evenly" not in claimed("llama2-70b-mi300x", "3c-explain", text)


def test_an_analogy_to_forgot_weights_is_no_claim_of_it() -> None:
    text = "Subtracting 37 GB is the MoE version of forgot-weights."
    assert "only-active-experts-resident" not in claimed("deepseek-v3-mla-h200",
                                                         "experts-and-levers", text)


def test_a_count_rounded_up_from_the_candidates_own_quotient_says_so() -> None:
    # 641 GB ÷ (4,032 KiB × 32,768) = 4.74 sessions: "about 5" rounds the candidate's own
    # quotient up, where only 4 fit
    marks = marked("llama31-405b-h200-tp", {
        "kv-heads-per-gpu-tp8": "1", "bytes-per-token-per-gpu-tp8": "504 KiB",
        "bytes-per-token-tp8": "4032 KiB", "kv-budget-tp8": "641 GB",
        "sessions-tp8": "about 5"})
    feedback = marks["sessions-tp8"].feedback
    assert "give 4.74 sequences here before the floor" in feedback
    assert "only whole ones fit: 4 sequences" in feedback


def test_one_figure_of_the_candidates_own_ratio_is_carried() -> None:
    # recompute 15 ms ÷ swap 80 ms = 0.1875, typed to one figure
    marks = marked("swap-or-recompute", {"recompute-time": "15 ms", "swap-time": "80 ms",
                                         "recompute-vs-swap": "0.2"})
    assert marks["recompute-vs-swap"].carried_forward


def test_a_proposal_called_bad_is_no_claim_of_it() -> None:
    text = "Raising max_model_len for everyone is bad: long sessions preempt chat users."
    assert "raise-cap-for-everyone" not in claimed("long-context-tier", "pool-policy", text)


def test_vllm_said_to_preallocate_max_model_len_is_a_claim_in_the_pool_policy() -> None:
    text = "vLLM pre-allocates max_model_len worth of KV for every request."
    assert "vllm-reserves-max-model-len" in claimed("long-context-tier", "pool-policy", text)


def test_a_word_respelled_in_the_remark_after_a_number_is_not_noted() -> None:
    # "d_head" among the words after the dash is no unit read as "heads"
    read = read_answer("8192 -- n_kv x d_head = 8 x 1024? no: 64 x 128 for MHA", "")
    assert read.readings[0].quantity.value == 8192
    assert read.readings[0].note == ""


def test_a_misspelt_unit_that_is_read_is_still_noted() -> None:
    read = read_answer("96 sesions at 4k", "sequences")
    assert read.readings[0].note == "read 'sesions' as 'sessions'"


# --- review 18 ------------------------------------------------------------------------------

def test_a_value_with_its_unit_before_a_dash_and_its_working_is_the_answer() -> None:
    read = read_answer("~93 GB — P(expert unused) = (6/8)^64 ≈ 1e-8, so every expert is read",
                       "B")
    assert [r.quantity.value for r in read.readings] == [93 * 10**9]


def test_working_with_a_minus_sign_still_ends_in_its_result() -> None:
    read = read_answer("192 - 138 - 10 = 44 GB", "B")
    assert [r.quantity.value for r in read.readings] == [44 * 10**9]


def test_users_not_slowed_down_much_is_no_claim_they_lose_nothing() -> None:
    text = "Batching is efficient because GPUs are parallel, so each user is not slowed down much."
    assert "no-per-user-slowdown" not in claimed("llama2-70b-mi300x", "3c-explain", text)
    assert "no-per-user-slowdown" in claimed("llama2-70b-mi300x", "3c-explain",
                                             "each user is not slowed down at all: full speed")


def test_checking_the_drafted_tokens_for_one_step_earns_the_verify_concept() -> None:
    text = ("At batch 1 the target is memory-bound: checking 5 tokens costs about the same as "
            "one step.")
    assert dimension("speculative-decoding", "when-it-pays", text, "mechanisms") > 0


def test_ideas_held_to_nothing_beside_a_wrong_claim_are_said_not_nothing_earned() -> None:
    # review 18: a wrong claim in the same answer held the trade-offs to nothing, and the
    # feedback said "nothing in the text answers earned this dimension"
    drill = find_drill("disaggregated-prefill")[0]
    text = ("Disaggregation pays when prefill bursts would stall decode: prefill GPU time per "
            "request is ~112 ms. The 100 GbE link moves 100 GB/s, so the transfer is free.")
    score = score_attempt(drill, load_rubric(drill.rubric),
                          marked("disaggregated-prefill", {"when-it-pays": text}))
    held = [d for d in score.dimensions
            if any("no credit beside a wrong claim in when-it-pays" in e for e in d.evidence)]
    assert held
    assert all("nothing in the text answers earned this dimension" not in d.evidence
               for d in held)



@pytest.mark.parametrize(("typed", "gigabytes"), [
    ("192 GB - (138 + 10) = 44 GB", 44), ("192 GB - (138 GB + 10 GB) = 44 GB", 44),
    ("141 GB -- weights = 125 GB", 125)])
def test_a_minus_or_a_dash_before_working_that_ends_in_a_unit_is_working(
        typed: str, gigabytes: int) -> None:
    # a spaced "-" is a minus, and a remark whose last figure has a unit is the working that
    # ends in the answer: only a remark of something else after a dash is set aside
    assert [r.quantity.value for r in read_answer(typed, "B").readings] == [gigabytes * 10**9]


@pytest.mark.parametrize("typed", ["44 GB, 8", "44 GB, 8 sessions"])
def test_a_figure_after_a_comma_in_another_unit_or_none_is_a_remark(typed: str) -> None:
    assert [r.quantity.value for r in read_answer(typed, "B").readings] == [44 * 10**9]
