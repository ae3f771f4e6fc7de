"""Stop 54: what a tired candidate's own practice at 80 columns, the nineteenth blind feedback
review and the blind corpus Y showed the tool saying wrongly. Each test of a fix failed before;
the guards beside them pass on both."""

from __future__ import annotations

from trainer.drills.loader import find_drill
from trainer.drills.reference import AnswerKey
from trainer.marking.checker import Mark, mark_sheet
from trainer.marking.claims import claims_made

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


def marked(drill_id: str, answers: dict[str, str]) -> dict[str, Mark]:
    return mark_sheet(AnswerKey(find_drill(drill_id)[0]), answers)


def claimed(drill_id: str, step_id: str, text: str) -> list[str]:
    step = find_drill(drill_id)[0].step(step_id)
    return [made.claim.id for made in claims_made(step, text)]


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
