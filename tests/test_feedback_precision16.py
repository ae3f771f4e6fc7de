"""Stop 59: what the blind corpus AH (kernel and hardware engineers: bytes moved, FLOP/B, tables,
scientific notation) showed the tool saying wrongly when measured unread: five right senior
answers said to make a wrong claim, three fluent wrong answers let through. The texts here are
written for the tests, in the corpus's manner, not copied from it. Each test of a fix failed
before; the guards beside them pass on both."""

from __future__ import annotations

from feedback_probes import claimed, evidence

from trainer.marking.prose import read_text

MI300X = "llama2-70b-mi300x"
SPEC = "speculative-decoding"
PREFIX = "prefix-caching"
LONG = "long-context-tier"


# --- a product is no ratio -----------------------------------------------------------------------

def test_a_factor_that_multiplies_a_figure_is_no_speed_up() -> None:
    text = ("Scoring k + 1 = 5 positions in one pass reads the same bytes and adds ≈5 × 1.4e11 "
            "FLOP, still far below the ridge, so verification costs about one step.")
    assert "speedup-is-k-plus-one" not in claimed(SPEC, "when-it-pays", text)


def test_a_speed_up_of_k_plus_one_is_still_a_wrong_claim() -> None:
    text = "With k = 4 every round yields 5 tokens, so speculation gives a 5× speed-up."
    assert "speedup-is-k-plus-one" in claimed(SPEC, "when-it-pays", text)


def test_a_verify_step_priced_at_k_plus_one_steps_is_a_wrong_claim() -> None:
    text = ("Verifying 4 drafted tokens means the target does 5 tokens' worth of forward "
            "passes, so a verify step costs ≈5 × 26.9 ≈ 134 ms.")
    assert "verify-costs-a-step-per-token" in claimed(SPEC, "when-it-pays", text)


# --- a table's rows ------------------------------------------------------------------------------

TABLE = """Only full blocks are hashed and shared.

| | 16-token blocks | 256-token blocks |
|---|---|---|
| shared once | 2,000 | 1,792 |
| prompt tokens each session stores again | 0 | 208 |
"""


def test_a_tables_rows_are_read_apart() -> None:
    reading = read_text(TABLE)
    rows = {reading.row[p] for p, token in enumerate(reading.tokens) if token in ("208", "onc")}
    assert len(rows) == 2


def test_one_rows_figure_and_the_next_rows_label_make_no_claim_together() -> None:
    assert "partial-block-shared" not in claimed(PREFIX, "block-size-why", TABLE)


def test_a_sentence_that_says_the_partial_block_is_shared_still_claims_it() -> None:
    text = "With 256-token blocks the last 208 tokens are shared as well, copy-on-write."
    assert "partial-block-shared" in claimed(PREFIX, "block-size-why", text)


def test_sharing_lost_on_the_last_208_tokens_is_no_claim_that_they_are_shared() -> None:
    text = ("So the 256 block loses the last 208 prompt tokens of sharing (≈26 MiB × every "
            "session).")
    assert "partial-block-shared" not in claimed(PREFIX, "block-size-why", text)


# --- hedges and names of sizes -------------------------------------------------------------------

def test_a_step_fractionally_slower_in_practice_is_no_claim_that_it_slows() -> None:
    text = ("Unchanged, ≈34.1 ms: 8 × 5.37 GB = 43 GB of KV as before. On real hardware "
            "expect the 8-row step to be fractionally slower, not faster.")
    assert "step-gets-slower" not in claimed(MI300X, "5a", text)


def test_a_step_that_slows_to_68_ms_is_still_a_wrong_claim() -> None:
    text = "FP8 KV at batch 8 means twice the sequences, so the step is slower, about 68 ms."
    assert "step-gets-slower" in claimed(MI300X, "5a", text)


def test_a_size_per_block_per_layer_is_no_partial_block_per_layer() -> None:
    text = ("Cost: one extra indirection per block. With 16 tokens × 8 heads × 128 × 2 B = "
            "32 KiB per block per layer for K, loads stay coalesced.")
    assert "partial-block-per-layer" not in claimed("paged-blocks-vllm", "why-paging", text)


def test_less_to_store_per_layer_is_no_other_term_shrinking() -> None:
    text = "It's 8× because GQA groups the heads together, so there's less to store per layer."
    assert "another-term-shrinks" not in claimed(MI300X, "2c-why", text)


def test_capacity_held_idle_is_no_kv_pinned_between_turns() -> None:
    text = ("Price GiB-seconds of KV plus a reservation fee for quota slots, because capacity "
            "held idle is still capacity.")
    assert "kv-pinned-between-turns" not in claimed(LONG, "pricing", text)


def test_a_conversation_holding_its_kv_between_turns_is_still_a_wrong_claim() -> None:
    text = "Bill by the hour the session is open: between turns it still holds its 16 GiB."
    assert "kv-pinned-between-turns" in claimed(LONG, "pricing", text)


def test_per_token_pricing_said_to_under_price_is_no_claim_that_it_is_enough() -> None:
    text = "Why per-token under-prices it: a live 131k request pins 16 GiB for its duration."
    assert "per-token-is-enough" not in claimed(LONG, "pricing", text)


# --- fluent wrong answers ------------------------------------------------------------------------

def test_the_winner_and_the_one_that_improves_both_is_one_subject() -> None:
    text = "FP8 KV is the clear winner and the one that improves both metrics."
    assert "fp8-kv-improves-both" in claimed(MI300X, "4f", text)


def test_fragmentation_as_the_biggest_contributor_is_a_wrong_claim() -> None:
    text = ("The biggest contributor is fragmentation: freed blocks are scattered across the "
            "pool.")
    assert "fragmentation-ranked-first" in claimed("observed-concurrency-lower", "hypotheses",
                                                   text)


def test_a_paged_cache_keeping_every_open_conversation_resident_is_a_wrong_claim() -> None:
    text = ("In a multi-turn chat the KV of each open conversation stays resident between "
            "turns, because vLLM's paged cache keeps a session's blocks.")
    assert "thinking-users-hold-kv" in claimed("littles-law-capacity", "plan", text)


def test_blocks_that_stay_cached_but_evictable_excuse_the_claim() -> None:
    text = ("A user who is reading holds no slot: the request ended, and its blocks only stay "
            "cached, evictable.")
    assert "thinking-users-hold-kv" not in claimed("littles-law-capacity", "plan", text)


# --- precise forms seniors use -------------------------------------------------------------------

def test_a_weight_share_that_halves_is_the_weights_split() -> None:
    text = "Each GPU's KV budget only grows because its weight share halves (≈61 → ≈30 GB)."
    said = evidence("llama31-405b-h200-tp", {"why-less": text}, "assumptions")
    assert "Tensor parallelism splits the weights" in said


def test_waste_of_at_most_15_slots_is_the_last_blocks_tail() -> None:
    text = ("Paging hands out 16-token blocks on demand, so the waste per request is ≤15 slots: "
            "8 of 1,008 here, 0.79%.")
    said = evidence("paged-blocks-vllm", {"why-paging": text}, "mechanism")
    assert "unfilled tail of each sequence's last block" in said
