"""Stop 54: what a tired candidate's own practice at 80 columns, the nineteenth to twenty-second
blind feedback reviews and the blind corpora Y and Z showed the tool saying wrongly. Each test
of a fix failed before; the guards beside them pass on both."""

from __future__ import annotations

import pytest
from feedback_probes import claimed, evidence, marked

from trainer.drills.loader import find_drill
from trainer.drills.reference import AnswerKey
from trainer.marking.checker import mark_sheet

TP2 = "llama31-70b-tp2-h100"
# the budget with the 4 GB reserve counted once for the pair (69.45 GB, not 65.4), carried
CARRIED_SHEET = {
    "kv-heads-per-gpu": "4",
    "bytes-per-token-per-gpu": "80 KiB",
    "bytes-per-token": "160 kb i think",
    "weights-per-gpu": "~35 GB",
    "kv-budget": "144-70.55-4 = 69.45gb",
    "live-tokens": "about 424k tokens",
}


# --- a count within its tolerance --------------------------------------------------------------

def test_a_count_well_inside_the_band_is_not_said_to_round_up() -> None:
    # 97.5 sessions fit before the floor; 103 is a figure within 10%, not 97.5 rounded up
    mark = marked(TP2, {**CARRIED_SHEET, "sessions": "103 users"})["sessions"]
    assert mark.verdict == "correct"
    assert "whole sequences fit" not in mark.feedback


def test_a_count_rounded_up_past_the_floor_is_still_said_so() -> None:
    mark = marked(TP2, {"sessions": "98"})["sessions"]
    assert "only 97 whole sequences fit" in mark.feedback


def test_a_carried_count_names_the_figure_ones_nearest_answer_gives() -> None:
    # 424,000 tokens ÷ 4,096 = 103.5: the answer follows from the tokens typed just before, not
    # from the 105 the budget and the 160 KB per token give
    mark = marked(TP2, {**CARRIED_SHEET, "sessions": "103 users"})["sessions"]
    assert "it follows from your earlier answers (103 sequences)" in mark.feedback


# --- claims ------------------------------------------------------------------------------------

def test_one_card_leaving_basically_no_sessions_is_no_claim_of_kv_room() -> None:
    text = ("2nd card buys room for kv: on one h100 the 70gb of fp8 weights leave only ~2gb "
            "so basically no sessions.")
    assert claimed(TP2, "tp-trade", text) == []


def test_one_card_leaving_room_for_sessions_is_still_the_claim() -> None:
    text = "on one h100 the weights leave about 9 GB for KV, so around 13 sessions."
    assert "one-card-leaves-kv" in claimed(TP2, "tp-trade", text)


def test_every_token_seeing_the_whole_document_through_stacked_windows_is_the_claim() -> None:
    text = ("Cost: none really -- stacking 32 windowed layers gives a 131k receptive field, so "
            "every token still \"sees\" the whole 32k doc, just through the layers.")
    assert "stacked-layers-see-everything" in claimed("sliding-window-kv", "what-windows-cost",
                                                      text)


def test_every_token_seeing_the_whole_document_only_indirectly_is_no_claim() -> None:
    text = ("through the stacked windows every token sees the whole document only indirectly, "
            "and recall fades past 4,096")
    assert claimed("sliding-window-kv", "what-windows-cost", text) == []


def test_a_claim_asked_as_a_question_is_not_made() -> None:
    text = "Maybe you could offload some experts to the CPU though?"
    assert claimed("deepseek-v3-mla-h200", "experts-and-levers", text) == []


def test_the_same_claim_said_is_made() -> None:
    text = "You could offload some experts to the CPU."
    assert claimed("deepseek-v3-mla-h200", "experts-and-levers", text) != []


def test_a_question_answered_by_the_claim_is_still_the_claim() -> None:
    text = "Does TP=16 halve the KV per GPU? Yes: at TP=16 the KV per GPU halves."
    assert "tp16-halves-kv-per-gpu" in claimed("llama31-405b-h200-tp", "why-less", text)


# --- review 19: slips read from the working --------------------------------------------------

def test_a_working_figure_the_right_working_uses_names_no_slip() -> None:
    # 15 is the weights a step reads (15.01 GB), not a checkpoint of 15 GB: the slip is the
    # 0.512 GB per sequence (512 MiB written as GB), and no input slip is read from the 15
    mark = marked("chunked-prefill-tpot", {
        "decode-step": "(15 + 64 x 0.512)/3.4 = 47.8/3.4 ≈ 14.05 ms"})["decode-step"]
    assert mark.verdict == "wrong"
    assert "weights_gb" not in mark.feedback
    assert mark.diagnosis is None


def test_a_ceiling_in_the_working_rules_out_rounding_down() -> None:
    mark = marked("littles-law-capacity", {"replicas": "238/166 = 1.4 → 2"})["replicas"]
    assert mark.verdict == "wrong"
    assert "rounded-down" not in mark.misconceptions
    assert "rounded a count down" not in mark.feedback


def test_a_floor_in_the_working_names_rounding_down_alone() -> None:
    mark = marked("littles-law-capacity", {"replicas": "238/94 = 2.5 → 2"})["replicas"]
    assert mark.misconceptions == ("rounded-down",)


def test_a_bare_wrong_count_still_names_its_mistakes() -> None:
    mark = marked("littles-law-capacity", {"replicas": "2"})["replicas"]
    assert "rounded-down" in mark.misconceptions


def test_a_session_count_is_not_carried_from_the_session_without_its_window() -> None:
    # 107 is what leaving out the reserve gives; the 4 GB typed for the session without a
    # window (4.29 GB) is no earlier answer this count follows from
    mark = marked("sliding-window-kv", {
        "mistral-per-sequence": "512 MB", "mistral-per-sequence-full": "4 GB",
        "mistral-sessions": "~107 (72 - 14.5 = 57.5 GB / 0.537)"})["mistral-sessions"]
    assert mark.verdict == "correct"
    assert "follows from your earlier answers" not in mark.feedback
    assert "left out the reserve" in mark.feedback


# --- review 19: wrong claims credited or missed --------------------------------------------------

@pytest.mark.parametrize(("drill_id", "step_id", "text", "claim"), [
    ("prefix-caching", "when-not",
     "A per-user line at the start doesn't matter much since the common text after it still "
     "matches.", "shared-text-anywhere"),
    ("prefix-caching", "when-not",
     "Once cached, a prefix block is pinned and never evicted while the server runs, so the "
     "hit rate only drops on restart.", "prefix-never-evicted"),
    ("observed-concurrency-lower", "evidence",
     "its 'Maximum concurrency' line is computed at our 4,096-token average, so it should "
     "read 96.", "logged-concurrency-at-average-context"),
    ("observed-concurrency-lower", "hypotheses",
     "Each token stores K and V for all 32 attention heads, 512 KiB in bf16, so the card "
     "holds about 99k live tokens", "kv-for-every-query-head"),
    ("decode-roofline-vs-measured", "long-why",
     "Flash-decoding fixes it by compressing the KV it reads, so a long sequence streams "
     "fewer bytes per step.", "flash-decoding-reads-less"),
    ("littles-law-capacity", "plan",
     "Little's law only holds for Poisson arrivals, which chat traffic at peak roughly is.",
     "littles-law-needs-poisson"),
    ("sliding-window-kv", "what-windows-cost",
     "Anything more than 4,096 tokens back is completely invisible to a windowed model: no "
     "layer can reach it at all.", "beyond-window-invisible"),
    ("sliding-window-kv", "what-windows-cost",
     "Since both models window every layer they cost the same in quality.",
     "both-models-window-every-layer"),
    ("chunked-prefill-tpot", "trade-off",
     "I price every step at the H200's HBM bandwidth of 4.8 TB/s: the 64 streams' KV read "
     "takes about 7.2 ms", "size-on-datasheet-rates"),
    ("chunked-prefill-tpot", "trade-off",
     "In vLLM, max_num_batched_tokens counts only the prefill (chunk) tokens, so I'd set it "
     "to 320", "batched-tokens-prefill-only"),
    ("llama31-405b-h200-tp", "fix",
     "TP=16 is fine for capacity since the heads are split evenly; if latency matters, run "
     "TP8 x PP2 instead, which gives the same ~174 sessions.", "tp16-heads-split-evenly"),
    ("llama31-405b-h200-tp", "why-less",
     "The budget grows about 3x because the weights are stored only on the first node, so "
     "the second node's memory is all KV", "weights-on-one-node"),
    ("deepseek-v3-mla-h200", "experts-and-levers",
     "DP attention would cost capacity (94 instead of 134, because of the copied attention "
     "weights), so keep TP and turn on an FP8 latent.", "dp-attention-costs-capacity"),
    ("deepseek-v3-mla-h200", "why-mla",
     "There is no factor 2 because MLA caches only the keys; the values are recomputed from "
     "the query at attention time.", "mla-caches-only-keys"),
    ("mixtral-moe-decode", "serving-levers",
     "Since memory is already small, add FP8 KV for ~2x sessions and use a larger batch; "
     "quantizing weights buys little.", "quantizing-weights-buys-little"),
    ("mixtral-moe-decode", "serving-levers",
     "FP8 KV: ~2x sessions, and it also halves the batch-1 weight read, so batch 1 gets ~2x "
     "faster.", "fp8-kv-speeds-batch-1"),
    ("llama2-70b-mi300x", "5a",
     "Unchanged, because the step reads only the 138 GB of weights whatever the batch.",
     "step-reads-only-the-weights"),
    ("hybrid-state-kv", "how-concurrency-scales",
     "At long context it holds ~8-9x as many sequences; at short contexts its advantage grows "
     "even larger than 8x, because the state is tiny.", "short-context-advantage-grows"),
    ("hybrid-state-kv", "how-concurrency-scales",
     "every layer keeps keys and values for every token", "kv-in-every-layer"),
    ("paged-blocks-vllm", "why-paging",
     "vLLM hands out 16-token blocks on demand; the only waste left is external "
     "fragmentation between the blocks.", "external-fragmentation-left"),
    ("paged-blocks-vllm", "refusal",
     "vLLM never refuses a config: if one request does not fit it silently clamps "
     "max_model_len to what fits.", "vllm-never-refuses"),
    ("multi-turn-growth", "why-overstated",
     "The reply's tokens are not written to the cache until the reply finishes, so they do "
     "not add while it is generated.", "reply-not-cached-until-done"),
    ("speculative-decoding", "when-it-pays",
     "The price is that the output distribution shifts slightly toward the draft's, a small "
     "quality cost.", "speculation-changes-output"),
    ("long-context-tier", "pool-policy",
     "Not for everyone: raising max_model_len makes vLLM reserve max_model_len worth of KV for "
     "every request up front, so chat capacity would collapse.",
     "vllm-reserves-max-model-len"),
    ("prefill-vs-decode", "why-two-regimes",
     "Both prefill and decode are matrix multiplies, so both are compute-bound: the ops:byte "
     "ratio of the H200 is ~206.", "both-regimes-compute-bound"),
    ("llama31-70b-tp2-h100", "per-gpu-vs-total-explain",
     "vLLM's GiB there is the same as GB, so you can compare it directly with my 32.7 GB.",
     "gib-same-as-gb"),
    ("llama31-70b-tp2-h100", "per-gpu-vs-total-explain",
     "Each GPU caches K and V for its 32 attention heads (64 heads split over 2), so each token "
     "costs 640 KiB per GPU.", "per-gpu-caches-query-heads"),
    ("swap-or-recompute", "policy",
     "That's why vLLM's V1 engine swaps preempted KV to CPU by default.",
     "vllm-swaps-by-default"),
])
def test_the_reviewed_wrong_claim_is_caught(drill_id: str, step_id: str, text: str,
                                            claim: str) -> None:
    assert claim in claimed(drill_id, step_id, text)


@pytest.mark.parametrize(("drill_id", "step_id", "text"), [
    ("prefix-caching", "when-not",
     "put the per-user line after the shared text, or nothing after it matches."),
    ("prefix-caching", "when-not", "A prefix block is never evicted while a running request "
                                   "uses it."),
    ("observed-concurrency-lower", "evidence",
     "the Maximum concurrency line is for max_model_len requests, not our average context: "
     "about 13."),
    ("observed-concurrency-lower", "hypotheses",
     "K and V for the 8 KV heads, not the 32 query heads: 128 KiB per token."),
    ("decode-roofline-vs-measured", "long-why",
     "flash-decoding splits the KV of each sequence across thread blocks so 8 sequences fill "
     "the SMs; it reads the same bytes, not fewer."),
    ("littles-law-capacity", "plan",
     "Little's law holds for any arrival process; Poisson only matters for the p99 spread."),
    ("sliding-window-kv", "what-windows-cost",
     "A single windowed layer never sees tokens more than 4,096 back directly; they reach it "
     "only through the stack, fading."),
    ("sliding-window-kv", "what-windows-cost",
     "Mistral windows every layer, Gemma only 21 of 42: its global layers keep full recall."),
    ("chunked-prefill-tpot", "trade-off",
     "max_num_batched_tokens ~ 384: the 320-token chunk plus the 64 decode tokens"),
    ("llama31-405b-h200-tp", "fix",
     "TP8 x PP2: each node holds half the layers, one KV head per GPU, nothing replicated, "
     "252 KiB per token on TP16's 1,479 GB budget: about 174 sessions."),
    ("llama31-405b-h200-tp", "why-less",
     "The budget grows about 3x because the weights are split over all 16 GPUs."),
    ("deepseek-v3-mla-h200", "experts-and-levers",
     "First lever: DP attention, 16 to 88 sessions, for about 93 GB of copied weights."),
    ("deepseek-v3-mla-h200", "why-mla",
     "No factor 2: the one latent stands for both the keys and the values."),
    ("mixtral-moe-decode", "serving-levers",
     "Quantize the weights to fp8: half the resident bytes and half the read."),
    ("llama2-70b-mi300x", "5a",
     "34.1 ms: the step reads the 138 GB of weights plus 8 × 5.37 GB of fp8 KV, the same "
     "bytes as before."),
    ("hybrid-state-kv", "how-concurrency-scales",
     "At short context the fixed state dominates, so the advantage shrinks to about 5x."),
    ("paged-blocks-vllm", "why-paging",
     "Paging removes external fragmentation; the waste left is internal, the tail of the last "
     "block."),
    ("paged-blocks-vllm", "refusal",
     "X = 1.08, so it starts; vLLM would raise a ValueError only below 1."),
    ("multi-turn-growth", "why-overstated",
     "Each generated token's K and V are cached as it is produced, so the reply adds while it "
     "is written."),
    ("long-context-tier", "pool-policy",
     "Raising max_model_len won't work: a 128k session is 16 GiB of the 52 GB budget; the long "
     "tier needs its own pool."),
    ("prefill-vs-decode", "why-two-regimes",
     "Prefill is compute-bound; decode at batch 1 is memory-bound, not both compute-bound."),
    ("llama31-70b-tp2-h100", "per-gpu-vs-total-explain",
     "The log's GiB are not the same as GB: 30.5 GiB is 32.7 GB, 7.4% more, so convert."),
])
def test_the_right_answer_beside_it_is_no_claim(drill_id: str, step_id: str,
                                                text: str) -> None:
    assert claimed(drill_id, step_id, text) == []


def test_a_sentence_starting_inside_a_wrapped_line_keeps_its_claim_whole() -> None:
    # "it⏎swaps": the sentence's first line is the tail of a longer one, not a short line
    text = ("the copy runs on the DMA engines. vLLM V1 already does this: it\n"
            "swaps preempted sequences to CPU memory by default.")
    assert "vllm-swaps-by-default" in claimed("swap-or-recompute", "policy", text)


# --- review 19: credit read from the right words ----------------------------------------------

def test_a_percentage_is_no_figure_of_a_count() -> None:
    said = evidence("observed-concurrency-lower", {"hypotheses": (
        "max_model_len reservation would give 3, far too few; a 10 GB reserve gives 21, "
        "about 12% less, not enough alone.")}, "hypotheses")
    assert "with '12'" not in said


def test_a_rejected_reservation_hypothesis_is_no_lever() -> None:
    said = evidence("observed-concurrency-lower", {
        "hypotheses": "max_model_len reservation would give 12 (-88%), far too much.",
        "action": "No purchase yet: pull FP8 KV, prefix caching and per-tier caps first."},
        "action")
    assert "'max_model_len'" not in said


def test_a_contradicted_dimension_is_not_also_said_to_earn_nothing() -> None:
    said = evidence("sliding-window-kv", {"what-windows-cost": (
        "Since both models window every layer they cost the same in quality.")}, "levers")
    assert "contradicted by the wrong claim" in said
    assert "nothing in the text answers earned" not in said


# --- numbers said in words ----------------------------------------------------------------------

@pytest.mark.parametrize(("said", "read"), [
    ("about fifty-eight sessions, eighty eight percent down", "about 58 sessions, 88% down"),
    ("six thousand eight hundred tokens", "6800 tokens"),
    ("one point three gigs", "1.3 gigs"),
    ("five twelve latent plus sixty-four rope", "512 latent plus 64 rope"),
    ("about a hundred forty", "about 140"),
    ("eighty-five point five times point four five", "85.5 times 0.45"),
])
def test_a_number_said_in_words_is_read_as_its_figure(said: str, read: str) -> None:
    from trainer.marking.prose import _fold

    assert _fold(said) == read


@pytest.mark.parametrize("words", ["one card holds it", "the point is that", "tensor parallel"])
def test_words_that_are_not_numbers_stay_words(words: str) -> None:
    from trainer.marking.prose import _fold

    assert _fold(words) == words


# --- review 20: slips the working rules out ----------------------------------------------------

def test_plain_working_that_leaves_out_the_reserve_is_not_an_earlier_unit_mix_again() -> None:
    marks = marked("llama31-8b-h100", {
        "kv-budget": "~52 GiB", "kv-budget-real-card": "85.5 x 0.9 = 76.95 - 16 = ~61 GB"})
    mark = marks["kv-budget-real-card"]
    assert mark.misconceptions == ("forgot-reserve",)
    assert not mark.carried_forward


def test_the_same_unit_mix_without_working_is_still_said_to_be_made_again() -> None:
    marks = marked("llama31-8b-h100", {"kv-budget": "~52 GiB", "kv-budget-real-card": "61.2 GB"})
    assert marks["kv-budget-real-card"].carried_forward


def test_plain_working_names_the_reserve_alone_not_beside_a_unit_mix() -> None:
    mark = marked("multi-turn-growth", {
        "kv-budget": "80 x 0.9 = 72 - 16.06 = ~56 GB"})["kv-budget"]
    assert mark.misconceptions == ("forgot-reserve",)


def test_a_working_figure_far_from_any_input_is_no_slip_of_it() -> None:
    # 172.8 is 0.9 × 192 GB, not a draft of 172.8 parameters
    mark = marked("speculative-decoding", {
        "sessions-with-draft": "172.8 - 6 - 141.1 - 2.5 = 23.2 GB / 1.34 GB = 17"})[
        "sessions-with-draft"]
    assert "draft_params" not in mark.feedback


def test_a_latent_divided_over_the_gpus_is_said_as_such() -> None:
    mark = marked("deepseek-v3-mla-h200", {"bytes-per-token-per-gpu": "8784 B"})[
        "bytes-per-token-per-gpu"]
    assert "split the MLA latent over the GPUs" in mark.feedback


def test_a_count_just_under_the_next_is_not_shown_rounded_to_it() -> None:
    # Qwen3-32B on an H200: 12.95 before the floor, not "13 sequences" beside "only 12 fit"
    from trainer.capacity.presets import find_model
    from trainer.drills.variants import make_target, retarget

    drill = find_drill("multi-turn-growth")[0]
    key = AnswerKey(drill, retarget(drill, dict(drill.givens),
                                    make_target(find_model("qwen3-32b"), "h200")))
    mark = mark_sheet(key, {"uncapped-sessions": "13"})["uncapped-sessions"]
    assert "only 12 whole sequences fit (12.95 sequences before the floor)" in mark.feedback


# --- review 20: wrong claims it did not flag ------------------------------------------------------

def test_a_lever_rejected_by_a_wrong_claim_earns_no_credit() -> None:
    said = evidence("deepseek-v3-mla-h200", {"experts-and-levers": (
        "All experts are resident because any token can go to any expert. DP attention would "
        "cost capacity (94 instead of 134, because of the copied attention weights), so keep "
        "TP and turn on an FP8 latent (~2x).")}, "levers")
    assert "'dp attention' with" not in said


def test_a_threshold_concept_is_not_said_to_have_other_figures_when_none_is_given() -> None:
    said = evidence("llama31-8b-h100", {"policy": (
        "Cap max_model_len near the p99 of real contexts, FP8 KV for about 2x, prefix caching; "
        "watch KV-cache usage and preemptions, 48 sessions per card is tight.")},
        "operational-close")
    assert "figures the rubric does not list" not in said


# --- review 21 ----------------------------------------------------------------------------------

def test_a_count_ones_own_answers_give_is_not_said_to_round_the_reference_up() -> None:
    # 53.5 GB ÷ 4 GB (one's own GiB read as GB) = 13.4 → 13: no "only 12 fit (12.5 before the
    # floor)", which reads as a rounding up the candidate never did
    mark = marked("sliding-window-kv", {
        "mistral-per-sequence-full": "4 GB", "mistral-sessions-full": "53.5/4 = 13"})[
        "mistral-sessions-full"]
    assert "it follows from your earlier answers (13 sequences)" in mark.feedback
    assert "whole sequences fit" not in mark.feedback


def test_an_idea_said_right_beside_a_wrong_claim_is_held_not_called_contradicted() -> None:
    said = evidence("long-context-tier", {"operations": (
        "Sized right when KV usage p95 stays under ~85% and preemptions under 1%; I'd also use "
        "nvidia-smi GPU utilisation near 100% as the sign the pool is saturated.")},
        "operational-close")
    assert "'kv usage' with '85%', no credit beside the wrong claim in operations" in said
    assert "contradicted" not in said


def test_an_idea_whose_words_are_the_claims_own_is_still_contradicted() -> None:
    said = evidence("prefill-vs-decode", {"why-two-regimes": (
        "Both prefill and decode are matrix multiplies, so both are compute-bound: the ops:byte "
        "ratio of the H200 is ~206.")}, "roofline")
    assert "contradicted by the wrong claim in why-two-regimes" in said



# --- review 22 ----------------------------------------------------------------------------------

def test_plain_working_names_no_unit_mix_where_a_right_answer_rules_the_reserve_out() -> None:
    # the reserve is in the right kv-budget, so leaving it out is ruled out there; "77 - 16"
    # still mixed no GB and GiB: nothing is named rather than the unit mix
    mark = marked("llama31-8b-h100", {
        "kv-budget": "80 x 0.9 = 72, 72 - 4 - 16 = 52 GB",
        "kv-budget-real-card": "85.5 x 0.9 = 77 - 16 = 61 GB"})["kv-budget-real-card"]
    assert "gb-gib" not in mark.misconceptions


def test_a_step_of_working_read_only_in_part_is_not_quoted_as_its_value() -> None:
    # "8,814 blocks / 8,192" is not 8,814: the working note says nothing of it
    mark = marked("paged-blocks-vllm", {
        "colocated-x": "38.48 - 4 - 16 = 18.48 GB -> 8,814 blocks / 8,192 = 1.08x"})[
        "colocated-x"]
    assert mark.verdict == "correct"
    assert "comes to 8,814" not in mark.feedback


def test_a_count_just_over_a_whole_is_not_shown_as_the_whole_beside_it() -> None:
    # (stop 67, practised at 80 columns: "only 106 whole sequences fit (106 sequences before
    # the floor)" for 107 on the real card's 106.1)
    mark = marked("llama31-8b-h100", {"sessions-real-card": "107"})["sessions-real-card"]
    assert "only 106 whole sequences fit (106.1" in mark.feedback
