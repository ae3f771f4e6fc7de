"""The fourteenth blind feedback review (/tmp/w4/review14.md): the thousands of a range's high
end are its low end's too ("38-39k"); a mistake only near a wrong answer gives way to the slip
of one input that gives it as typed; a measured bandwidth of the drill said as "~2 TB/s" at
batch 1 quantifies the plan. (A carried-forward verdict for an answer inside a wide tolerance
by an earlier slip was tried and undone after review 15: the prompt promises the tolerance.)
Each test of a fix failed before; the guards beside them pass on both."""

from __future__ import annotations

from trainer.drills.loader import find_drill, load_rubric
from trainer.drills.reference import AnswerKey
from trainer.marking.checker import Mark, mark_sheet
from trainer.marking.claims import claims_made
from trainer.marking.scoring import score_attempt
from trainer.reading.reader import read_answer


def marked(drill_id: str, answers: dict[str, str]) -> dict[str, Mark]:
    return mark_sheet(AnswerKey(find_drill(drill_id)[0]), answers)


def test_the_thousands_of_a_ranges_high_end_are_its_low_ends_too() -> None:
    span = read_answer("38-39k tokens", "tokens").span
    assert span is not None
    assert [end.quantity.value for end in span] == [38_000, 39_000]


def test_a_low_end_above_the_high_ends_digits_keeps_its_own_scale() -> None:
    span = read_answer("500-1k tokens", "tokens").span
    assert span is not None
    assert [end.quantity.value for end in span] == [500, 1_000]


def test_a_thousands_range_around_the_answer_is_right() -> None:
    # swap-or-recompute's MHA crossover is 38,590 tokens, ±2%
    mark = marked("swap-or-recompute", {"mha-crossover": "38-39k tokens"})["mha-crossover"]
    assert mark.verdict == "correct"


def test_a_slip_that_gives_the_number_as_typed_leads_a_mistake_only_near_it() -> None:
    # (15.01 + 34.36 GB) ÷ 4.8 TB/s = 10.29 ms; the weights left out give 34.36 ÷ 3.4 = 10.1
    mark = marked("chunked-prefill-tpot", {"decode-step": "10.3 ms"})["decode-step"]
    assert mark.misconceptions == ()
    assert mark.diagnosis is not None and mark.diagnosis.slip.input == "bandwidth_tbs"
    assert "left the model weights out" not in mark.feedback


def test_a_mistake_that_gives_the_number_as_typed_is_still_named() -> None:
    # the weights left out, typed to the figures they give: 34.36 GB ÷ 3.4 TB/s = 10.1 ms
    mark = marked("chunked-prefill-tpot", {"decode-step": "10.1 ms"})["decode-step"]
    assert "forgot-weights" in mark.misconceptions


def test_the_measured_bandwidth_at_batch_1_quantifies_the_plan() -> None:
    said = ("At batch 1 the kernels are GEMVs and many small kernels that can't keep HBM "
            "busy; plan with a measured bandwidth per batch size (~2 TB/s at b1, ~3.5 at "
            "large batch), not 4.8.")
    drill = find_drill("decode-roofline-vs-measured")[0]
    score = score_attempt(drill, load_rubric(drill.rubric),
                          marked("decode-roofline-vs-measured", {"batch1-why": said}))
    evidence = " ".join(e for d in score.dimensions for e in d.evidence)
    assert "with figures the rubric does not list" not in evidence


def test_an_answer_inside_a_wide_tolerance_by_an_earlier_slip_is_right_and_says_so() -> None:
    # 32 query heads: 18.2 GB read ÷ 2.05 TB/s = 8.88 ms, 9.6% over 8.1 ms (inside ±10%): the
    # tolerance the prompt promises holds (review 15), and the note names the slip carried
    marks = marked("prefill-vs-decode", {"decode-bytes": "18.2 GB",
                                         "decode-step-measured-bw": "8.88 ms"})
    mark = marks["decode-step-measured-bw"]
    assert mark.verdict == "correct"
    assert "it follows from your earlier answers" in mark.feedback

def test_fragmentation_said_to_waste_a_tenth_is_a_wrong_claim() -> None:
    # 6,826 tokens take 427 blocks of 16: 6 empty slots of 6,832, 0.09%, not 10-15%
    step = find_drill("observed-concurrency-lower")[0].step("hypotheses")
    said = "2) Block fragmentation with 16-token blocks wastes about 10-15% and adds to it."
    assert "fragmentation-explains-the-gap" in [m.claim.id for m in claims_made(step, said)]


def test_a_share_over_the_whole_carried_from_a_named_slip_says_it_is_impossible() -> None:
    # 32 query heads: 221 GB at batch 96 is 244% of the datasheet's bandwidth
    marks = marked("decode-roofline-vs-measured", {"b1-bytes": "17.16 GB",
                                                    "b96-bytes": "221.2 GB",
                                                    "b96-fraction": "244%"})
    assert "A share of a whole is at most 100%" in marks["b96-fraction"].feedback


def test_rounding_up_a_count_of_shared_tokens_is_told_of_blocks_too() -> None:
    mark = marked("prefix-caching", {"shared-tokens-256": "2048"})["shared-tokens-256"]
    assert "blocks of a prompt shared" in mark.feedback


def test_another_models_slip_is_not_carried_past_a_right_answer_of_this_ones() -> None:
    # review 15: Mistral's 512 MB a session (MB for MiB) carried to Gemma's sessions, though
    # the Gemma step it depends on was answered right (6.34 GB): 8 is 7.81 rounded up, no more
    marks = marked("sliding-window-kv", {"mistral-per-sequence": "512 MB",
                                         "gemma-per-sequence": "6.34 GB",
                                         "gemma-sessions": "8"})
    assert "earlier answers" not in marks["gemma-sessions"].feedback


def test_speculation_said_to_help_more_the_bigger_the_batch_is_a_wrong_claim() -> None:
    # review 15: verification turns compute-bound near 49 sequences and loses near 166
    step = find_drill("speculative-decoding")[0].step("when-it-pays")
    said = ("Speculation helps more the bigger the batch, since more drafted tokens are "
            "verified per weight read.")
    assert "gain-grows-with-batch" in [m.claim.id for m in claims_made(step, said)]
