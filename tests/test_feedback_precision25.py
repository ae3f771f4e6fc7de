"""Stop 73: what the tool said wrongly of answers typed tired, at 80 columns, in a practice
run from a fresh install, and of the blind sets measured this stop. The texts here are written
for the tests, not copied from a corpus. Each test of a fix failed before; the guards beside
them pass on both."""

from __future__ import annotations

import pytest
from feedback_probes import claimed, evidence

from trainer.marking.claims import asserts
from trainer.marking.prose import negated, occurrences, read_text

B8 = "llama31-8b-h100"


# --- a lever set, typed short ------------------------------------------------------------------

def test_a_cap_typed_short_is_a_setting_explained() -> None:
    text = ("cap max_model_len near real p99 ctx, long ctx in a separate pool. fp8 kv -> ~2x "
            "sessions (194).")
    said = evidence(B8, {"policy": text}, "levers")
    assert "'max_model_len' with 'p99'" in said and "listed, not explained" not in said


def test_a_cap_among_bare_terms_is_still_a_term_listed() -> None:
    said = evidence(B8, {"policy": "max_model_len cap, separate pool, fp8 kv, quotas"}, "levers")
    assert "listed, not explained" in said


# --- a clause among figures ------------------------------------------------------------------

TP2 = "llama31-70b-tp2-h100"


def test_a_clause_that_reasons_among_figures_is_explained() -> None:
    text = ("Bandwidth — each GPU reads half the weights and its own half of every KV at the "
            "same time, concurrently: 136 GB / (2 × 3.35 TB/s) ≈ 20 ms a step, ~49 tok/s per "
            "user, ~4,800 tok/s in all.")
    said = evidence(TP2, {"tp-trade": text}, "levers")
    assert "What tensor parallelism buys" in said and "listed, not explained" not in said


def test_a_term_labelled_with_figures_in_a_long_list_is_still_listed() -> None:
    text = ("TP8 × PP2: 252 KiB/token, ~174 sessions, pipeline bubbles, micro-batching, "
            "DP attention: 71.9B attention params per GPU, ~48 sessions")
    said = evidence("llama31-405b-h200-tp", {"fix": text}, "levers")
    assert "listed, not explained" in said


# --- a slash between figures divides -----------------------------------------------------------

def test_a_spaced_slash_between_figures_is_a_division() -> None:
    assert read_text("136 GB / (2 × 3.35 TB/s) ≈ 20 ms").tokens[:3] == ("136", "gb", "÷")
    assert "÷" in read_text("⌈2,000 / 94⌉ = 22 GPUs").tokens


def test_a_slash_between_alternatives_is_no_division() -> None:
    assert "÷" not in read_text("16 GiB bf16 / 8 GiB fp8 per session").tokens
    assert "÷" not in read_text("4k / 8k contexts").tokens


# --- said aloud, transcribed (corpus BK's manner) ------------------------------------------------

MOE = "mixtral-moe-decode"


def test_a_small_model_at_batch_one_said_aloud_is_the_batch_1_read() -> None:
    text = ("All eight experts stay loaded, ninety-three gig. At batch one it is quick since you "
            "read two experts, so it's like a thirteen B model there.")
    assert "active-size-at-inference" not in claimed(MOE, "what-moe-saves", text)


def test_the_question_restated_without_its_mark_claims_nothing() -> None:
    text = ("OK so the pitch, is it as cheap as a thirteen B model. Well, for FLOPs yes, but every "
            "expert is resident, ninety-three gig.")
    assert "active-size-at-inference" not in claimed(MOE, "what-moe-saves", text)


def test_the_small_model_said_as_a_fact_is_still_claimed() -> None:
    text = "So basically it's like a thirteen B model, so it's cheap to serve, one card is plenty."
    assert "active-size-at-inference" in claimed(MOE, "what-moe-saves", text)


# --- teaching a junior, in the second person (corpus BL's manner) --------------------------------

def test_a_pitfall_named_as_where_you_trip_up_is_not_claimed() -> None:
    text = ("Budget the step, not the chunk. Where you'll trip up is sizing it as if every "
            "chunk cost the same.")
    assert "chunks-cost-the-same" not in claimed("chunked-prefill-tpot", "trade-off", text)


def test_a_wish_inside_the_claim_s_clause_turned_down_by_but_claims_nothing() -> None:
    text = ("At TP=16 you'd hope for half a head per GPU, but attention needs a head's whole K "
            "and V, so each head sits on two GPUs.")
    assert "tp16-halves-kv-per-gpu" not in claimed("llama31-405b-h200-tp", "why-less", text)


def test_half_a_head_per_gpu_said_plainly_is_still_claimed() -> None:
    text = "At TP=16 each GPU holds half a head, so the KV per GPU halves again."
    assert "tp16-halves-kv-per-gpu" in claimed("llama31-405b-h200-tp", "why-less", text)


def test_open_conversations_from_little_s_law_are_no_staleness_signal() -> None:
    text = ("You also want to tell product that 64 requests in flight means about 256 open "
            "conversations.")
    assert "open-conversations-say-stale" not in claimed("multi-turn-growth", "policy", text)


def test_a_window_that_costs_nothing_for_documents_under_it_is_a_condition() -> None:
    text = "Check your lengths: if most documents are under 4k the window costs nothing."
    assert "window-has-no-quality-cost" not in claimed("sliding-window-kv", "what-windows-cost",
                                                       text)


# --- compare and contrast (corpus BM's manner) ----------------------------------------------------

def test_a_list_of_when_it_buys_little_is_no_claim_of_the_sessions_before_it() -> None:
    text = ("4k sessions 96 → 188 | 32k sessions 12 → 12 (the prefix is 6%). It buys little or "
            "nothing when:\n- the prefix is a small share of the context;\n- the prompt isn't "
            "identical from token 0.")
    assert "short-sessions-gain-least" not in claimed("prefix-caching", "when-not", text)


def test_fewer_active_experts_with_no_retraining_is_the_claim_not_its_excuse() -> None:
    text = ("Reduce the number of active experts from 2 to 1 at serving time: it halves the "
            "per-token read, with no retraining.")
    assert "fewer-experts-at-inference" in claimed(MOE, "serving-levers", text)


# --- what a review of this stop's rules found them doing beyond their word -----------------------

TP16 = "llama31-405b-h200-tp"


@pytest.mark.parametrize("text", [
    "In short, do it: TP=16 doubles the capacity.",  # a command, no question
    "Should it run short of KV blocks, TP=16 doubles the capacity.",  # a condition
    "The intuitive answer is right here: TP=16 doubles the capacity.",  # a first guess endorsed
    "TP=16 doubles the capacity and you'd hope for more, but the link is slow.",  # a later wish
    "Nothing here should trip up the scheduler: TP=16 doubles the capacity.",  # no pitfall
])
def test_a_claim_beside_words_these_rules_read_is_still_made(text: str) -> None:
    assert "tp16-doubles-sessions" in claimed(TP16, "why-less", text)


@pytest.mark.parametrize("text", [
    "People think memory is the limit; decode is compute-bound, but we can batch.",
    "People often say decode is compute-bound, and they are right, but it varies.",
])
def test_the_candidate_s_own_statement_after_others_belief_still_asserts(text: str) -> None:
    assert asserts(text, "compute-bound")


def test_a_slash_after_a_long_run_of_figures_reads_in_bounded_time() -> None:
    # (read in about 3 minutes when the figure before a slash was searched from the line's
    # start; the time itself is not asserted: the reading is, and it must finish)
    reading = read_text("1," * 2000 + "x" + " / 1" * 1000)
    assert reading.tokens[-2:] == ("÷", "1")


@pytest.mark.parametrize(("text", "phrase"), [
    ("You can lift the hit rate by putting the system prompt first.", "hit rate"),
    ("Paging exists to remove fragmentation.", "fragmentation"),
])
def test_a_verb_of_removal_before_no_bound_takes_nothing_away(text: str, phrase: str) -> None:
    reading = read_text(text)
    start, end = next(iter(occurrences(reading, phrase)))
    assert not negated(reading, start, end, phrase)


def test_batch_one_before_what_it_counts_stays_words() -> None:
    assert "1" not in read_text("it adds to the batch one token per sequence").tokens
