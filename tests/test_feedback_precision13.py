"""Stop 56: what the blind corpus AB (terse bullet points, read once unread and then opened) and
the twenty-sixth feedback review showed the tool saying wrongly. Each test of a fix failed
before; the guards beside them pass on both."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result
from feedback_probes import claimed, evidence, marked

Run = Callable[..., Result]
TP2 = "llama31-70b-tp2-h100"
MI300X = "llama2-70b-mi300x"
LITTLE = "littles-law-capacity"


# --- credit the words did not earn ---------------------------------------------------------------

def test_a_quoted_kv_cache_memory_line_is_not_what_tensor_parallelism_buys() -> None:
    text = ('- the "KV cache memory: 30.5 GiB" line is per gpu\n'
            "- the tokens line is the whole job, so 97 sessions is right; he double-counts")
    assert evidence(TP2, {"per-gpu-vs-total-explain": text}, "levers") == \
        "nothing in the text answers earned this dimension"


def test_double_counting_is_no_factor_of_two() -> None:
    text = ("TP=2 gives both cards' memory to the job.\n"
            "Halving 97 again double-counts the split.")
    said = evidence(TP2, {"per-gpu-vs-total-explain": text}, "levers")
    assert "'double'" not in said


def test_little_s_law_written_with_its_figures_is_explained() -> None:
    text = "only requests in flight hold KV\nL = 30 req/s × 8 s ≈ 240 in flight, so 3 GPUs"
    said = evidence(LITTLE, {"plan": text}, "mechanisms")
    assert "Little's law" in said and "listed, not explained" not in said
    assert "a user thinking holds no KV" in said


# --- wrong claims the corpus planted --------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "GQA only saves attention compute; the cache still stores the full hidden width",
    "- KV = 2 × L × hidden × 2 B × tokens, hidden 8192 is the KV width",
])
def test_the_hidden_width_as_the_cache_width_is_flagged(text: str) -> None:
    assert "hidden-size-in-the-formula" in claimed(MI300X, "1b", text)


def test_the_hidden_size_that_gives_head_dim_is_no_claim() -> None:
    text = "head_dim = hidden / heads = 8192 / 64 = 128; KV = 2 × 80 × 8 × 128 × 2 B per token"
    assert claimed(MI300X, "1b", text) == []


def test_tp2_as_the_only_option_that_improves_both_is_flagged() -> None:
    text = "recommend TP=2 - the only option that improves both, it halves weights per gpu"
    assert "only-tp-improves-both" in claimed(MI300X, "4f", text)


def test_tp2_beside_int8_weights_is_no_claim() -> None:
    text = ("fp8 kv first. int8 weights improve both on the same card; with a second card "
            "TP=2 would too, at double the hardware")
    assert claimed(MI300X, "4f", text) == []


def test_fp8_kv_doubling_the_latency_is_flagged() -> None:
    text = "fp8 kv → 2x seqs, but the step reads 2x as many seqs so latency doubles"
    assert "fp8-kv-doubles-latency" in claimed(MI300X, "4f", text)


def test_mqa_that_costs_nothing_is_flagged() -> None:
    assert "mqa-is-a-config-change" in claimed(
        MI300X, "4f", "Go with MQA; it costs nothing and quadruples the sessions.")


# --- the reader -------------------------------------------------------------------------------

def test_a_ratio_sign_before_its_working_in_parentheses_reads_the_ratio() -> None:
    mark = marked(MI300X, {"2c-ratio": "8× (64/8)"})["2c-ratio"]
    assert mark.verdict == "correct"


def test_a_spaced_times_before_a_group_still_multiplies() -> None:
    assert marked(MI300X, {"2c-ratio": "8 × (64/8)"})["2c-ratio"].verdict == "wrong"


def test_ki_before_tokens_counts_tokens_in_working() -> None:
    # 128 KiB × 131,072 tokens = 16 GiB: the working comes to the answer, nothing to say of it
    mark = marked("long-context-tier",
                  {"long-session-bytes": "128 KiB × 128 Ki tokens = 16 GiB"})["long-session-bytes"]
    assert mark.verdict == "correct" and "comes to" not in mark.feedback


def test_ki_alone_is_still_kib() -> None:
    mark = marked("long-context-tier", {"long-session-bytes": "16777216 Ki"})["long-session-bytes"]
    assert mark.verdict == "correct"


# --- review 26 ------------------------------------------------------------------------------------

def test_the_query_heads_said_not_to_enter_are_no_claim_that_they_do() -> None:
    text = ("KV = 2 × 80 layers × n_kv (8 KV heads) × 128 × 2 B × N. The 64 query heads do not "
            "enter: only KV heads are cached.")
    assert claimed(MI300X, "1b", text) == []


def test_generated_tokens_left_out_of_the_cache_is_flagged() -> None:
    text = ("N is the prompt length only: the tokens generated during decode are not written to "
            "the cache, since they are recomputed each step.")
    assert "generated-tokens-not-cached" in claimed(MI300X, "1b", text)


def test_a_reservation_rejected_for_giving_too_few_is_no_claim() -> None:
    text = "Reserving 32k per request gives 5 sessions, way too few: not the cause."
    assert claimed("observed-concurrency-lower", "hypotheses", text) == []


def test_a_reservation_said_to_happen_is_still_flagged() -> None:
    text = "vLLM reserves 32k per request, so we get 5 sessions."
    assert "vllm-reserves-max-model-len" in claimed("observed-concurrency-lower", "hypotheses",
                                                    text)


def test_the_quotient_of_working_is_no_input_it_replaced(run: Run, tmp_path: Path) -> None:
    # Qwen3-8B on an A100 80GB: 51.6 GB ÷ 18 GB = 2.9 → 3, where 2 is keyed; the 2.9 is what the
    # working came to, no weights of 2.9 GB
    sheet = tmp_path / "d.yaml"
    sheet.write_text("long-sessions: 51.6/18 = 2.9 → 3\n", encoding="utf-8")
    out = run("grade", "long-context-tier", "--answers", str(sheet), "--model", "qwen3-8b",
              "--gpu", "a100-80gb", ok=False).output
    assert "weights_gb = 2.9" not in out and "the figure in your working" not in out


# Review 26's planted claims (one wrong sentence inside each senior c answer): 1 of 21 was
# flagged when the review graded; these are the claims written for them, each with a right
# statement beside it that must stay unflagged.
PLANTED_REVIEW_26 = [
    (MI300X, "2c-why", "ratio-changes-with-context",
     "The ratio is 64/8 = 8 at short context and shrinks at longer contexts, since attention "
     "grows quadratically with N."),
    (MI300X, "2d", "tp-does-not-help-mha-kv",
     "Tensor parallelism adds compute but no cache room: every GPU must hold a full replica "
     "of each sequence's KV."),
    (MI300X, "3c-explain", "cost-falls-without-limit",
     "The weights are read once per step, so the per-user cost keeps falling as 1/B with no "
     "limit however large the batch grows."),
    (MI300X, "4f", "fp8-kv-improves-both",
     "fp8 KV also cuts per-token latency at the doubled batch, since each sequence's KV read "
     "is halved."),
    (MI300X, "5a", "fp8-kernels-slower",
     "In practice an fp8 KV step is about twice as slow as fp16, because fp8 attention "
     "kernels run at half the throughput."),
    (MI300X, "5c", "step-reads-only-new-token-kv",
     "kv_seq is one token of KV per sequence: a decode step only reads the newest token's "
     "K and V."),
    ("sliding-window-kv", "what-windows-cost", "rope-scaling-restores-recall",
     "Since Mistral was trained with the window, RoPE scaling restores full-context recall "
     "at no extra cost."),
    ("speculative-decoding", "when-it-pays", "acceptance-independent-of-temperature",
     "The speed-up doesn't depend on temperature: rejection sampling keeps the acceptance "
     "rate the same at any temperature."),
    ("observed-concurrency-lower", "evidence", "nvidia-smi-shows-the-kv",
     "nvidia-smi's memory-used figure is the most direct gauge of KV occupancy, as vLLM "
     "grows its allocation while the cache fills."),
    ("observed-concurrency-lower", "action", "fp8-kv-halves-weights",
     "FP8 KV also halves the memory the weights take, which is where the room comes from."),
    ("deepseek-v3-mla-h200", "why-mla", "latent-decompressed-per-step",
     "The saving is only in capacity: each decode step must decompress the latent into full "
     "per-head K and V and read those."),
    ("deepseek-v3-mla-h200", "experts-and-levers", "int4-experts-free",
     "Routed experts in int4 cost nothing in quality, since experts are insensitive to "
     "quantization."),
    ("long-context-tier", "pricing", "long-token-32x-slower",
     "Each long-session token is about 32× slower to generate than a chat token."),
    ("long-context-tier", "operations", "preemptions-are-normal",
     "Target 100% KV usage for the long pool, with preemptions allowed to run freely."),
    ("mixtral-moe-decode", "what-moe-saves", "moe-shrinks-the-kv",
     "MoE does save KV: the cache scales with the active parameters, about a quarter of a "
     "dense 47B's."),
    ("mixtral-moe-decode", "what-moe-saves", "moe-saves-at-every-batch",
     "MoE saves memory and bandwidth at every batch size."),
    ("mixtral-moe-decode", "serving-levers", "more-tp-same-step",
     "Going from TP=2 to TP=4 leaves the batch-1 step unchanged: each token still reads the "
     "same 25.8 GB."),
    (MI300X, "3c-explain", "no-per-user-slowdown",
     "Each user gets full speed no matter how many users share the card."),
]

RIGHT_BESIDE_26 = [
    (MI300X, "2c-why", "The ratio is 8 at any context: N does not enter bytes per token."),
    (MI300X, "3c-explain",
     "The per-user cost falls with B only until each user's KV read dominates the step."),
    (MI300X, "5c", "Each step writes only the new token's K and V but reads the whole "
                   "context's."),
    ("sliding-window-kv", "what-windows-cost",
     "RoPE scaling stretches positions but does not restore recall beyond the window."),
    ("speculative-decoding", "when-it-pays",
     "Rejection sampling keeps the output distribution at any temperature; acceptance falls "
     "as the temperature rises."),
    ("deepseek-v3-mla-h200", "why-mla",
     "With the up-projections absorbed, the kernel reads the latent and never materialises "
     "per-head K and V."),
    ("deepseek-v3-mla-h200", "experts-and-levers",
     "int4 experts are often fine but must be evaluated before they ship."),
    ("mixtral-moe-decode", "what-moe-saves", "MoE saves FLOPs at every batch size, not memory."),
    ("mixtral-moe-decode", "serving-levers",
     "TP=4 halves what each GPU reads per step, less the all-reduce communication."),
    ("observed-concurrency-lower", "action",
     "FP8 KV halves the cache's bytes per token and leaves the weights as they are."),
]


# --- numeric feedback (review 26) ---------------------------------------------------------------

def test_a_bare_product_with_two_byte_elements_is_no_bits_for_bytes() -> None:
    # 2*80*64*128*2: the 64 query heads, not 16 bits, give 2.5 MiB
    mark = marked(MI300X, {"2b-bytes-per-token": "2*80*64*128*2"})["2b-bytes-per-token"]
    assert mark.misconceptions == ("query-heads",)


def test_a_bare_number_still_names_both_ways_to_it() -> None:
    mark = marked(MI300X, {"2b-bytes-per-token": "2621440"})["2b-bytes-per-token"]
    assert set(mark.misconceptions) == {"query-heads", "bits-for-bytes"}


def test_a_carried_answer_names_the_step_it_follows_from() -> None:
    mark = marked("llama31-8b-h100", {"kv-budget": "30 GB", "sessions": "55"})["sessions"]
    assert ("It follows from your answer to kv-budget, which gives 55 sequences here: "
            "carried forward.") in mark.feedback


# --- review 27 ------------------------------------------------------------------------------------

@pytest.mark.parametrize(("drill", "step", "answer"), [
    ("disaggregated-prefill", "prefill-time",
     "≈112 ms: (5.72e13 + 4.4e12 + 1e9) FLOP / 550 TFLOP/s"),
    ("littles-law-capacity", "latency-batch", "94 seqs: (20 ms × 3.35 TB/s − 16.06 GB)/0.537 GB"),
    ("llama31-405b-h200-tp", "kv-heads-per-gpu-tp16", "1, heads get duplicated"),
])
def test_a_value_then_its_working_or_a_remark_is_read(drill: str, step: str,
                                                       answer: str) -> None:
    assert marked(drill, {step: answer})[step].verdict == "correct"


def test_a_model_names_numbers_are_no_figures() -> None:
    from trainer.marking.prose import read_text

    reading = read_text("Llama-3.1-8B reads 16 GB; Qwen3-30B-A3B and gpt-oss-120b too")
    assert [value for _, value in reading.numbers] == [16.0]


PLANTED_REVIEW_27 = [
    ("decode-roofline-vs-measured", "embedding-why", "lm-head-reads-top-k",
     "The LM head only reads the rows for the top-k candidate tokens, so it adds almost "
     "nothing."),
    ("decode-roofline-vs-measured", "batch1-why", "batch1-above-ridge",
     "At batch 1 a GEMV has an arithmetic intensity above the ridge, so it is compute-bound."),
    ("decode-roofline-vs-measured", "long-why", "softmax-is-linear",
     "Softmax is linear, so the partial outputs can simply be summed without any rescaling."),
    ("littles-law-capacity", "plan", "vllm-reserves-max-model-len",
     "vLLM reserves max_model_len worth of KV blocks for each request, so cap it at 4k."),
    ("llama31-405b-h200-tp", "fix", "pipeline-is-free",
     "PP adds no latency at all, the stages run in parallel on the same token."),
    ("llama31-70b-tp2-h100", "per-gpu-vs-total-explain", "tokens-line-in-blocks",
     "N is printed in blocks of 16 tokens, so multiply it by 16 to get tokens."),
    ("llama31-8b-h100", "followup-observed-lower", "default-cap-256",
     "max_num_seqs defaults to 256 on an H100, which caps you below the estimate."),
    ("hybrid-state-kv", "how-concurrency-scales", "state-grows",
     "The Mamba state grows linearly with the sequence too, just with a smaller constant."),
]

RIGHT_BESIDE_27 = [
    ("decode-roofline-vs-measured", "embedding-why",
     "The LM head is read in full every step: every row, 1.05 GB."),
    ("decode-roofline-vs-measured", "long-why",
     "Softmax is not linear: the partials are rescaled by their running max and sum."),
    ("llama31-70b-tp2-h100", "per-gpu-vs-total-explain",
     "The tokens line is already in tokens for the whole job, not in blocks."),
    ("hybrid-state-kv", "how-concurrency-scales",
     "The Mamba state is constant, while the attention KV grows linearly with context."),
    ("llama31-70b-tp2-h100", "tp-trade",
     "Not one H100; an H200 or MI300X single card would hold it with room for KV."),
]


@pytest.mark.parametrize(("drill", "step", "claim", "text"),
                         PLANTED_REVIEW_26 + PLANTED_REVIEW_27)
def test_a_planted_claim_of_the_reviews_is_flagged(drill: str, step: str, claim: str,
                                                   text: str) -> None:
    assert claim in claimed(drill, step, text)


@pytest.mark.parametrize(("drill", "step", "text"), RIGHT_BESIDE_26 + RIGHT_BESIDE_27)
def test_the_right_statement_beside_a_plant_is_not(drill: str, step: str, text: str) -> None:
    assert claimed(drill, step, text) == []


def test_a_claims_own_denial_does_not_deny_its_subject() -> None:
    # "won't run more than" is the claim; its "not" is no dismissal of the X after it
    assert "x-is-the-admission-limit" in claimed(
        "paged-blocks-vllm", "why-paging", "the scheduler won't run more than X requests at once")


def test_a_denial_of_its_own_still_excuses() -> None:
    assert claimed("paged-blocks-vllm", "why-paging",
                   "the scheduler caps concurrency at 1,024, not X") == []


# --- guards the self-review asked for: working then its result is still read as before ---------

@pytest.mark.parametrize(("answer", "read"), [
    ("72 - 16: 52 GB", "read as 52 GB"),
    ("72 GB usable, so after weights and reserve 52 GB", "read as 52 GB"),
])
def test_working_then_its_result_is_read_as_the_result(answer: str, read: str) -> None:
    assert read in marked("llama31-8b-h100", {"kv-budget": answer})["kv-budget"].feedback


@pytest.mark.parametrize("answer", ["Step 2: 52 GB", "70B: 140 GB"])
def test_a_label_with_a_figure_before_a_colon_is_not_read_as_the_value(answer: str) -> None:
    assert marked("llama31-8b-h100", {"kv-budget": answer})["kv-budget"].verdict != "wrong"


def test_a_ratio_sign_glued_to_a_number_on_a_gb_step_still_multiplies() -> None:
    assert marked("llama31-8b-h100", {"kv-budget": "2× (26 GB)"})["kv-budget"].verdict == \
        "correct"


def test_a_number_after_a_family_name_that_is_a_quantity_is_a_figure() -> None:
    from trainer.marking.prose import read_text

    assert [v for _, v in read_text("For Llama, 80 layers; Qwen3 4 GPUs").numbers] == [80.0, 4.0]


def test_a_follow_up_on_another_model_is_not_fed_by_the_first_models_shape() -> None:
    # the 70B follow-up states its own 8 KV heads: the 32 typed for the 8B does not feed it,
    # and the total counted twice is named (review 27)
    mark = marked("llama31-8b-h100", {
        "shape-kv-heads": "32",
        "followup-70b-tp-sessions": "65.4GB / 671 MB = 97 per GPU, so 194 total",
    })["followup-70b-tp-sessions"]
    assert mark.misconceptions == ("per-gpu-vs-total",)
    assert "shape-kv-heads" not in mark.feedback


def test_a_head_on_two_gpus_and_each_token_stored_twice_is_replication() -> None:
    text = ("Only 8 KV heads, so at TP16 every head sits on 2 GPUs: the whole job stores each "
            "token twice (504 KiB).")
    assert "replicates KV heads" in evidence("llama31-405b-h200-tp", {"why-less": text},
                                             "assumptions")
