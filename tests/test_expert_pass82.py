"""Expert pass 82 (172 text answers, written before grading, graded unread on stop 72's last
commit 56be6f7): 2 of 86 right or hedged answers red-flagged (both hedged: "It's tempting to
map …", "Easy to assume …"), no flag naming a claim not made, 25 of 43 partly right answers
missed and 7 of 43 wrong ones, 22 of 471 credits false (7 of them credit the opposite of what
was said), one sentence wrong (a batch of 16 said to touch nearly all 256 experts). Fixed here:
the two hedges, a "while" of time, a lever the answer drops, a figure the idea rejects, and
the claims the missed answers made."""

from __future__ import annotations

import pytest
from feedback_probes import evidence

from tests.expert_claims import answer_keys, claims_named, claims_of_answer, expert_answer
from trainer.drills.loader import find_drill

CORPUS = "expert_pass82_answers.yaml"


def _said(key: str) -> list[str]:
    return claims_of_answer(CORPUS, key)


# --- the false flags (F) ---------------------------------------------------------------------

def test_a_view_called_tempting_is_not_the_candidate_s() -> None:
    assert _said("littles-law-capacity/plan/H:A036") == []


def test_a_view_called_easy_to_assume_is_not_the_candidate_s() -> None:
    assert _said("prefix-caching/when-not/H:A156") == []


def test_easy_to_do_is_still_a_claim_of_what_is_easy() -> None:
    said = claims_named("littles-law-capacity", "plan",
                        "It's easy to size: 2,000 users online are 2,000 slots, so about 22 "
                        "GPUs.")
    assert "online-users-as-slots" in said


# --- the misses (M) --------------------------------------------------------------------------

@pytest.mark.parametrize(("key", "claim"), [
    # "its KV stays pinned while they read": a while of time, not a contrast
    ("littles-law-capacity/plan/W:A035", "thinking-users-hold-kv"),
    ("llama31-8b-h100/policy/P:A082", "max-model-len-at-the-average"),
    ("observed-concurrency-lower/evidence/P:A126", "queue-with-low-usage-means-kv-bound"),
    ("prefix-caching/block-size-why/P:A150", "big-blocks-less-tail-waste"),
    ("sliding-window-kv/why-different/W:A159", "config-head-dim-is-metadata"),
    ("multi-turn-growth/policy/W:A119", "paging-makes-long-context-free"),
    ("multi-turn-growth/policy/P:A118", "prefix-caching-to-128-chats"),
])
def test_the_claim_a_missed_answer_made_is_named(key: str, claim: str) -> None:
    assert claim in _said(key)


def test_right_and_hedged_answers_on_those_steps_claim_nothing() -> None:
    keys = answer_keys(CORPUS, "R", "H")
    assert len(keys) == 14 and all(_said(key) == [] for key in keys)


def test_a_while_that_contrasts_still_cuts_the_clause() -> None:
    # "while" before a clause of its own says what holds of something else
    said = claims_named("littles-law-capacity", "plan",
                        "Requests in flight hold KV, while users reading hold nothing: ~238.")
    assert "thinking-users-hold-kv" not in said


# --- the false credits (C) -------------------------------------------------------------------

def test_a_lever_the_answer_drops_is_not_credited() -> None:
    text = expert_answer(CORPUS, "multi-turn-growth/policy/W:A119")
    assert "'history cap'" not in evidence("multi-turn-growth", {"policy": text}, "levers")


def test_a_lever_whose_name_opens_with_drop_is_still_credited() -> None:
    said = evidence("multi-turn-growth", {"policy": "Drop old turns past 8k: summarise them."},
                    "levers")
    assert "Summarise or truncate old turns" in said


def test_the_figure_an_idea_rejects_does_not_quantify_it() -> None:
    # "hidden / heads = 224 … is the right value": 224 is the figure the idea says is wrong
    text = ("As for head_dim, hidden / heads = 224 is the standard definition, so use it.")
    said = evidence("sliding-window-kv", {"why-different": text}, "mechanisms")
    assert "'head_dim' with '224'" not in said


# --- the wrong sentence (S) ------------------------------------------------------------------

def test_no_claim_says_a_batch_of_16_touches_nearly_all_experts() -> None:
    step = find_drill("deepseek-v3-mla-h200")[0].step("experts-and-levers")
    says = " ".join(claim.says for claim in step.wrong_claims)
    assert "nearly all" not in says and "about 40% of a layer's 256" in says


def test_a_cap_dropped_to_a_figure_is_lowered_not_removed() -> None:
    said = evidence("multi-turn-growth", {"policy": "Drop the history cap to 8k tokens per chat."},
                    "levers")
    assert "'history cap'" in said


def test_a_while_of_time_after_the_user_keeps_the_clause() -> None:
    said = claims_named("littles-law-capacity", "plan",
                        "Each open conversation keeps its KV while the user reads, so 2,000 "
                        "slots.")
    assert "thinking-users-hold-kv" in said
