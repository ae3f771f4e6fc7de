"""Stop 76's readings, from corpus BW (plain prose typed into a live interview's coding pad)
and expert pass 91: what a claim's own sentence says of it after it, and what it only seems to
excuse. Each case failed before its fix; each guard holds on both trees."""

from __future__ import annotations

import pytest
from feedback_probes import claimed

from trainer.marking.claims import asserts

TP16 = ("llama31-405b-h200-tp", "why-less")


def test_rather_than_after_a_claim_chooses_the_claim() -> None:
    text = ("Honestly raising max_model_len for everyone is mostly fine on vLLM, and I'd do that "
            "rather than build a second fleet.")
    assert "raise-cap-for-everyone" in claimed("long-context-tier", "pool-policy", text)


def test_rather_than_before_a_claim_still_sets_it_aside() -> None:
    text = ("I'd build a separate long-context pool rather than raise max_model_len to 128k for "
            "everyone.")
    assert "raise-cap-for-everyone" not in claimed("long-context-tier", "pool-policy", text)


def test_the_quoted_start_up_line_excuses_nothing() -> None:
    text = ("'Maximum concurrency for 32,768 tokens per request: X' is the number of sessions "
            "the card will actually carry, so compare X against observed concurrency.")
    assert "logged-concurrency-is-the-sessions" in claimed(
        "observed-concurrency-lower", "evidence", text)


def test_a_worst_case_said_of_the_logged_line_still_excuses() -> None:
    text = ("The logged maximum concurrency is a worst case at 32,768 tokens per request, not "
            "the number of sessions we serve.")
    assert "logged-concurrency-is-the-sessions" not in claimed(
        "observed-concurrency-lower", "evidence", text)


def test_its_not_that_denies_what_follows() -> None:
    text = ("It's not that long-context decode turns compute-bound - per new token the "
            "attention is linear in context and still bandwidth-limited.")
    assert not asserts(text, "compute-bound")  # the rubric's red flag read it as said


def test_its_not_that_simple_is_a_degree_not_a_denial() -> None:
    text = "It's not that simple: long-context decode is compute-bound."
    assert "long-attention-compute-bound" in claimed(
        "decode-roofline-vs-measured", "long-why", text)


def test_not_a_lever_after_a_claim_dismisses_it() -> None:
    text = ("Dropping the 'unused' experts is not a lever - the router may send any token to "
            "any expert.")
    assert claimed("mixtral-moe-decode", "serving-levers", text) == []


def test_a_junior_might_gives_the_idea_away() -> None:
    text = ("A junior might hand the chunk the whole 25 ms, but every mixed step still reads "
            "the 64 streams' KV, so only about 14.9 ms is left for the matmuls.")
    assert "chunk-gets-whole-target" not in claimed("chunked-prefill-tpot", "trade-off", text)


def test_a_mistake_that_names_its_own_subject_does_not_report_the_claim() -> None:
    text = "TP=16 halves the KV per GPU, and leaving out the 4 GB reserve is the real mistake."
    assert "tp16-halves-kv-per-gpu" in claimed(*TP16, text)


@pytest.mark.parametrize("text", [
    "TP=16 halves the KV per GPU, and that's a mistake.",
    "TP=16 halves the KV per GPU - a classic mistake.",
    "TP=16 halves the KV per GPU; people making this mistake forget replication.",
])
def test_a_mistake_said_of_the_claim_still_reports_it(text: str) -> None:
    assert "tp16-halves-kv-per-gpu" not in claimed(*TP16, text)


def test_chunked_prefill_said_not_to_help_the_stall_is_named() -> None:
    text = "Chunked prefill doesn't really help because you still read the same total bytes."
    assert "chunking-does-not-help-the-stall" in claimed(
        "prefill-vs-decode", "stalls-and-levers", text)


def test_chunked_prefill_said_not_to_help_its_own_prompt_is_right() -> None:
    text = "Chunked prefill doesn't help the long prompt's TTFT, it costs it."
    assert "chunking-does-not-help-the-stall" not in claimed(
        "prefill-vs-decode", "stalls-and-levers", text)


def test_a_re_prefill_priced_as_one_weight_read_is_named() -> None:
    text = ("A re-prefill just reads the 16 GB of weights once, about 3.4 ms, versus 43 ms over "
            "PCIe.")
    assert "reprefill-priced-as-a-weight-read" in claimed("swap-or-recompute", "policy", text)


def test_the_weight_read_set_beside_the_prefill_flops_is_no_claim() -> None:
    text = "Recompute is a prefill of 132 TFLOP, 240 ms; the weight read alone would be 3.3 ms."
    assert claimed("swap-or-recompute", "policy", text) == []


def test_max_num_seqs_is_not_read_as_maxing_out() -> None:
    text = "Admission via max_num_seqs ~64 so overload queues instead of preempting mid-answer."
    assert "max-num-seqs-adds-chats" not in claimed("multi-turn-growth", "policy", text)


def test_fp8_kv_called_a_helper_not_a_fix_is_no_claim() -> None:
    text = ("fp8 KV halves the per-sequence bytes to ~43 GB, which on its own is borderline at "
            "best at this context, so it's a helper not a fix.")
    assert "fp8-kv-solves-mha" not in claimed("llama2-70b-mi300x", "2d", text)


def test_not_just_buy_before_a_first_step_turns_the_purchase_down() -> None:
    text = ("Not 'just buy 1.67× the GPUs' — first find which input was wrong. Read KV usage, "
            "preemptions, the start-up log.")
    assert "buy-before-measuring" not in claimed("observed-concurrency-lower", "action", text)


def test_not_just_one_lever_but_also_another_keeps_the_first() -> None:
    text = "I'd not just buy 1.67× the GPUs now but also turn on FP8 KV."
    assert "buy-before-measuring" in claimed("observed-concurrency-lower", "action", text)


# The review of stop 76's change (225 hostile sentences, each run on the trees before and
# after): the guards its narrowing keeps.
@pytest.mark.parametrize(("drill", "step", "claim", "text"), [
    ("swap-or-recompute", "policy", "parked-sessions-recomputed",
     "Parked sessions come back from the host tier by a 21 ms copy rather than paying ~240 ms "
     "to re-prefill them."),
    ("observed-concurrency-lower", "evidence", "logged-concurrency-is-the-sessions",
     "The startup log's maximum concurrency for 32k-token requests is the real capacity only "
     "if everyone uses the full window; at 4k we hold ~96."),
    ("chunked-prefill-tpot", "trade-off", "chunk-gets-whole-target",
     "The chunk gets the whole 25 ms, and that assumption is a mistake."),
    ("swap-or-recompute", "policy", "reprefill-priced-as-a-weight-read",
     "Recomputing is way more than one weight read of 3.3 ms: it's 8,192 tokens of matmuls."),
    ("mixtral-moe-decode", "serving-levers", "offload-inactive-experts",
     "What I would not do: offload idle experts to CPU to free HBM."),
])
def test_what_the_review_found_set_aside_stays_unclaimed(drill: str, step: str, claim: str,
                                                          text: str) -> None:
    assert claim not in claimed(drill, step, text)


@pytest.mark.parametrize(("drill", "step", "claim", "text"), [
    ("chunked-prefill-tpot", "trade-off", "chunk-gets-whole-target",
     "A junior might hand the chunk the whole 25 ms; I'd do the same."),
    ("chunked-prefill-tpot", "trade-off", "chunk-gets-whole-target",
     "Someone might paste a 30k doc, so I'd give the chunk the whole 25 ms."),
    ("observed-concurrency-lower", "action", "buy-before-measuring",
     "I'd not just buy 1.67x the GPUs, I'd turn on FP8 KV as well."),
    ("llama2-70b-mi300x", "2d", "fp8-kv-solves-mha",
     "FP8 KV fixes it: 42.9 GB per sequence, borderline on headroom but 2 users fit fine."),
    ("mixtral-moe-decode", "serving-levers", "offload-inactive-experts",
     "The first change I would make is to offload the idle experts to CPU memory."),
])
def test_what_the_review_found_said_stays_claimed(drill: str, step: str, claim: str,
                                                  text: str) -> None:
    assert claim in claimed(drill, step, text)


def test_not_that_surprising_is_a_degree() -> None:
    assert asserts("It's not that surprising that long-context decode is compute-bound.",
                   "compute-bound")


def test_a_claim_said_to_conflate_two_things_is_reported() -> None:
    text = ("The claim conflates users who are online with requests that are in flight: by "
            "Little's law about 238 are in flight.")
    assert "thinking-users-hold-kv" not in claimed("littles-law-capacity", "plan", text)


def test_a_signal_read_with_which_would_indicate_is_the_answer_s_own() -> None:
    text = ("The new sizing can be considered stale when GPU compute utilisation rises above "
            "approximately 90%, which would indicate that the card has become saturated.")
    assert "compute-utilisation-says-stale" in claimed("multi-turn-growth", "policy", text)


def test_a_what_if_s_price_after_that_would_stays_a_what_if() -> None:
    text = ("Plan on the mean live context, not p99 for everybody, that would buy 21 GPUs "
            "for 2,000 slots.")
    assert "online-users-as-slots" not in claimed("littles-law-capacity", "plan", text)


def test_a_sequence_s_size_is_no_count_of_users() -> None:
    text = ("The MHA number is zero. One full-context sequence holds 85.9 GB of KV (2.5 MiB per "
            "token x 32,768), and the card has 44 GB left.")
    assert "mha-still-serves-some" not in claimed("llama2-70b-mi300x", "2d", text)


def test_a_conversation_s_kv_kept_resident_between_turns_is_named() -> None:
    text = ("The user sits there for another 45 s reading and typing, and the engine keeps that "
            "conversation's KV resident the whole time so the next turn is fast.")
    assert "kv-pinned-between-turns" in claimed("multi-turn-growth", "why-overstated", text)
