"""The tenth blind feedback review (/tmp/w4/review10.md): a mistake or input slip named at an
earlier step and made again where a later step reads the same thing is carried forward, named
once, not charged as a new error; a narrow range around what the candidate's own numbers give
is carried as that number would be; "~300" is the candidate's own 307 rounded; one misconception
said twice is one red flag, and one text answer's claims count once against the level; a level
not reached holds the attempt below those above it. Each test failed before."""

from __future__ import annotations

from pathlib import Path

from trainer.drills.loader import find_drill, load_rubric
from trainer.drills.reference import AnswerKey
from trainer.marking.checker import Mark, mark_sheet
from trainer.marking.claims import claims_made
from trainer.marking.scoring import RubricScore, score_attempt


def marked(drill_id: str, answers: dict[str, str]) -> dict[str, Mark]:
    return mark_sheet(AnswerKey(find_drill(drill_id)[0]), answers)


def test_the_reserve_left_out_again_is_carried_and_names_where_it_was_first() -> None:
    marks = marked("llama2-70b-mi300x", {"1a": "54 GB", "4e": "22"})
    assert marks["1a"].misconception == "forgot-reserve"
    assert marks["4e"].carried_forward
    assert "the mistake named at 1a, made again here" in marks["4e"].feedback


def test_a_mistake_made_again_raises_no_second_red_flag() -> None:
    marks = marked("llama2-70b-mi300x", {"1a": "54 GB", "4e": "22"})
    assert marks["4e"].sure_mistake is None


def test_the_datasheets_80_gb_read_again_is_carried_at_a_later_step() -> None:
    marks = marked("paged-blocks-vllm", {"kv-budget": "52 GB", "colocated-x": "0.93"})
    assert marks["colocated-x"].carried_forward
    assert "hbm_gb = 80 GB instead of 85.52 GB" in marks["colocated-x"].feedback


def test_a_value_no_earlier_slip_gives_is_not_carried() -> None:
    marks = marked("paged-blocks-vllm", {"kv-budget": "52 GB", "colocated-x": "0.7"})
    assert not marks["colocated-x"].carried_forward


def test_a_later_step_with_no_earlier_mistake_names_nothing_again() -> None:
    marks = marked("llama2-70b-mi300x", {"4e": "22"})
    assert "made again" not in marks["4e"].feedback


def test_a_narrow_range_around_a_slip_made_again_is_carried() -> None:
    marks = marked("deepseek-v3-mla-h200", {"kv-budget": "~946 GB",
                                            "kv-budget-dp-attention": "850-855 GB"})
    assert marks["kv-budget-dp-attention"].carried_forward
    assert "give one number" in marks["kv-budget-dp-attention"].feedback


def test_a_wide_range_is_not_carried() -> None:
    marks = marked("deepseek-v3-mla-h200", {"kv-budget": "~946 GB",
                                            "kv-budget-dp-attention": "700-900 GB"})
    assert not marks["kv-budget-dp-attention"].carried_forward


def test_a_narrow_range_around_the_candidates_own_number_is_carried() -> None:
    marks = marked("multi-turn-growth", {"bytes-per-token": "512 KiB", "sessions": "16",
                                         "prompt-only-sessions": "77-78"})
    assert marks["prompt-only-sessions"].carried_forward


def test_a_narrow_range_stands_for_its_middle_at_the_step_after() -> None:
    marks = marked("multi-turn-growth", {"bytes-per-token": "512 KiB", "sessions": "16",
                                         "prompt-only-sessions": "77-78",
                                         "overstatement": "~5x"})
    assert marks["overstatement"].carried_forward


def test_about_300_is_the_candidates_own_307_rounded() -> None:
    marks = marked("llama2-70b-mi300x", {"3a-bytes-per-step": "138 GB",
                                         "5-bytes-per-step": "138 GB", "5b-aggregate": "~300"})
    assert marks["5b-aggregate"].carried_forward


def test_a_bare_300_is_not_rounded_that_far() -> None:
    marks = marked("llama2-70b-mi300x", {"3a-bytes-per-step": "138 GB",
                                         "5-bytes-per-step": "138 GB", "5b-aggregate": "300"})
    assert not marks["5b-aggregate"].carried_forward


def score(drill_id: str, answers: dict[str, str]) -> RubricScore:
    drill = find_drill(drill_id)[0]
    return score_attempt(drill, load_rubric(drill.rubric), marked(drill_id, answers))


def right_numbers(drill_id: str) -> dict[str, str]:
    drill = find_drill(drill_id)[0]
    key = AnswerKey(drill)
    return {s.id: key.reference(s.id).display for s in drill.steps if s.kind == "numeric"}


SPLIT_LATENT = ("MLA caches a 576-element latent per layer, 70 KB per token per GPU vs 4.77 MiB "
                "for MHA, about 71x less. Under TP the latent is also split 8 ways across the "
                "GPUs, so each GPU only holds one eighth of it.")


def test_one_misconception_said_two_ways_is_one_red_flag() -> None:
    flags = score("deepseek-v3-mla-h200", {"why-mla": SPLIT_LATENT}).red_flags
    assert len(flags) == 1


def test_two_wrong_claims_in_one_answer_hold_right_numbers_at_the_first_level() -> None:
    answers = right_numbers("llama31-8b-h100")
    answers["followup-observed-lower"] = (
        "Mostly block fragmentation and max_model_len reservations: vLLM reserves the max "
        "length for each request, so with 128k max_model_len you lose most of the cache.")
    found = score("llama31-8b-h100", answers)
    assert found.red_flags
    assert found.level == "solid"


def test_wrong_claims_in_two_answers_keep_the_attempt_below_the_first_level() -> None:
    answers = right_numbers("llama31-8b-h100")
    answers["followup-observed-lower"] = "Mostly block fragmentation explains the 40%."
    answers["policy"] = ("FP8 weights double the KV capacity 1:1, so about 190 sessions; "
                         "prefix caching on top.")
    assert score("llama31-8b-h100", answers).level is None


def test_the_latent_counted_as_k_and_v_is_not_solid_whatever_follows() -> None:
    answers = right_numbers("deepseek-v3-mla-h200")
    answers.update({"bytes-per-token-per-gpu": "140,544 B", "bytes-per-token-node": "1098 KiB"})
    assert score("deepseek-v3-mla-h200", answers).level is None


def test_a_level_not_reached_holds_the_attempt_below_the_levels_above_it() -> None:
    answers = right_numbers("deepseek-v3-mla-h200")
    answers.update({"bytes-per-token-per-gpu": "140,544 B", "why-mla": SPLIT_LATENT})
    found = score("deepseek-v3-mla-h200", answers)
    assert found.level is None and "Solid" in found.sounds_like


def test_the_logged_x_planned_on_as_the_cards_users_is_a_claim() -> None:
    said = ("The logged X = 53 is the number of concurrent users the card will carry in "
            "production, so that's what I'd plan capacity on.")
    step = find_drill("paged-blocks-vllm")[0].step("why-paging")
    assert "logged-x-is-the-real-concurrency" in [m.claim.id for m in claims_made(step, said)]


def test_a_ratio_of_two_right_answers_is_not_said_to_be_before_rounding() -> None:
    marks = marked("multi-turn-growth", {"sessions": "61", "prompt-only-sessions": "309",
                                         "overstatement": "5.07"})
    assert marks["overstatement"].verdict == "correct"
    assert "before rounding" not in marks["overstatement"].feedback
    assert "your own two answers" in marks["overstatement"].feedback


def test_a_count_rounded_up_within_tolerance_says_how_many_whole_ones_fit() -> None:
    mark = marked("sliding-window-kv", {"gemma-sessions": "8"})["gemma-sessions"]
    assert mark.verdict == "correct"
    assert "only 7 whole sequences fit" in mark.feedback


def test_a_count_past_the_band_of_what_fits_is_wrong() -> None:
    # review 13: 5 Gemma sessions need 56.4 GB of a 49.5 GB budget; 4 fit, and 5 is 25% above
    # them, outside the step's 20% (it was inside only the band of the 4.39 before the floor)
    mark = marked("sliding-window-kv", {"gemma-sessions-full": "5"})["gemma-sessions-full"]
    assert mark.verdict == "wrong"


def test_every_prompt_token_shared_whatever_the_block_is_named() -> None:
    mark = marked("prefix-caching", {"shared-tokens-256": "2000"})["shared-tokens-256"]
    assert mark.misconceptions == ("blocks-ignored",)


def test_a_wrong_answer_later_right_answers_did_not_carry_feeds_nothing() -> None:
    # 2 MiB typed for the bytes per token, then every block count right: the co-located X is
    # not "worked from your answer to bytes-per-token"
    marks = marked("paged-blocks-vllm", {
        "bytes-per-token": "2 MiB", "block-bytes": "2 MiB", "kv-budget": "57 GB",
        "num-blocks": "27,164", "engine-max-concurrency": "53", "colocated-x": "0.7"})
    assert "uses your answer to bytes-per-token" not in marks["colocated-x"].feedback


def test_a_wrong_answer_no_later_step_contradicts_still_feeds() -> None:
    marks = marked("paged-blocks-vllm", {"bytes-per-token": "2 MiB", "colocated-x": "0.7"})
    assert "uses your answer to bytes-per-token" in marks["colocated-x"].feedback


def test_a_right_answer_within_its_tolerance_is_carried_as_typed() -> None:
    # the eleventh blind review: 120 ms of prefill (right within 10%) over 82 ms of decode
    # time is 1.46, not "you counted K and V once"
    marks = marked("disaggregated-prefill", {"prefill-time": "120 ms",
                                             "decode-gpu-time": "82 ms", "pool-ratio": "1.46"})
    assert marks["prefill-time"].verdict == "correct"
    assert marks["pool-ratio"].carried_forward
    assert not marks["pool-ratio"].misconceptions


def test_a_ratio_of_a_wrong_and_a_loosely_right_answer_is_theirs() -> None:
    marks = marked("llama31-405b-h200-tp", {"sessions-tp8": "62ish",
                                            "sessions-tp16": "about 180",
                                            "sessions-ratio": "~2.9x"})
    assert marks["sessions-tp8"].verdict == "correct"
    assert marks["sessions-ratio"].carried_forward


def test_a_wide_tolerance_says_when_a_right_answer_carries_an_earlier_slip() -> None:
    # 400 Gb/s read as 400 GB/s: 1.34 ms of transfer, then a TTFT of 113 ms, within the
    # step's tolerance of 123 ms but only because of the slip. (Stop 52 tried a carried-forward
    # verdict here, after review 14; review 15 read it as wrong ten times where the prompt
    # promises its tolerance: the verdict is kept, the note says why.)
    marks = marked("disaggregated-prefill", {"transfer-ib": "1.34 ms", "ttft": "113 ms"})
    assert marks["ttft"].verdict == "correct"
    assert "it follows from your earlier answers" in marks["ttft"].feedback
    assert "from the reference figures it is 123 ms" in marks["ttft"].feedback

def test_a_right_answer_near_the_reference_says_nothing_of_earlier_slips() -> None:
    marks = marked("disaggregated-prefill", {"transfer-ib": "1.34 ms", "ttft": "123 ms"})
    assert "earlier answers" not in marks["ttft"].feedback


def test_a_colon_inside_an_answer_says_how_to_quote_it(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from trainer.app.cli import cli

    sheet = tmp_path / "sheet.yaml"
    sheet.write_text("1a: 44 GB\n1b: KV bytes: 2 x 80 x 8\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["grade", "llama2-70b-mi300x", "--answers", str(sheet)])
    assert result.exit_code == 2
    assert "must be quoted" in result.output and len(result.output.strip().splitlines()) == 1


def test_a_bare_number_read_in_seconds_on_a_ms_step_says_so() -> None:
    mark = marked("prefill-vs-decode", {"prefill-peak": "0.062"})["prefill-peak"]
    assert mark.verdict == "correct"
    assert "Typed without a unit, it was read in s: write the unit (ms)" in mark.feedback


def test_a_product_of_the_shape_is_not_told_to_write_its_unit() -> None:
    mark = marked("llama31-8b-h100", {"bytes-per-token": "2*32*8*128*2"})["bytes-per-token"]
    assert mark.verdict == "correct" and "write the unit" not in mark.feedback


def test_convos_count_conversations() -> None:
    # typed at 80 columns in practice: "about 256 convos" was refused as an unknown word
    mark = marked("multi-turn-growth", {"open-conversations": "about 256 convos"})
    assert mark["open-conversations"].verdict == "correct"


def test_an_answer_said_about_carries_what_its_digits_allow() -> None:
    # the eleventh blind review: "~34 GB" was the 33.86 GB of all of HBM, and 33.86 GB over
    # 521.5 MiB a sequence is 61 sessions, not the 62 that 34 GB exactly gives
    marks = marked("hybrid-state-kv", {"bytes-per-sequence": "521.5", "kv-budget": "~34 GB",
                                       "sessions": "about 61 i think"})
    assert marks["sessions"].carried_forward


def test_an_exact_answer_carries_only_its_own_value() -> None:
    marks = marked("hybrid-state-kv", {"bytes-per-sequence": "521.5", "kv-budget": "34 GB",
                                       "sessions": "about 61 i think"})
    assert not marks["sessions"].carried_forward


def test_a_listed_mistake_rounded_to_two_figures_is_named_over_a_typo() -> None:
    # the twelfth blind review: "1.3ms" is the 1.34 ms of 400 Gb/s read as 400 GB/s, not a
    # context of 496 tokens
    mark = marked("disaggregated-prefill", {"transfer-ib": "1.3ms"})["transfer-ib"]
    assert mark.misconceptions == ("link-bits-as-bytes",)
    assert "496 tokens" not in mark.feedback


def test_of_two_claims_of_one_misconception_the_more_specific_is_flagged() -> None:
    said = "The transfer is ~1% of the prefill here, 1.3 ms over 400 Gb/s, so it's basically free."
    found = score("disaggregated-prefill", {"when-it-pays": said}).red_flags
    assert [flag for flag, _ in found] == ["link-bits-as-bytes"]
