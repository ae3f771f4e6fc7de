"""Expert pass 89 (172 text answers, written before grading, graded unread on stop 75's
83f453b): 5 of 86 right or hedged answers red-flagged, each for a misconception it named to
reject ("On a first read you'd conclude …", "My manager's first guess was '…'", "It would be
natural to think …", "halving to 48 double-counts", "… why the window helps Gemma less; it's
which layers are windowed"); 34 of 43 partly right answers missed and 3 of 43 wrong ones; 27
of 660 credits false; one printed quote not in the answer ('leave' with 'max(', a rubric figure
that any "max_num_batched_tokens" matched). Fixed here: the five flags, the quote, and two of
the three wrong answers ("The usual reason is that vLLM reserves max_model_len … There's
nothing to check" no longer reads "There's" as carrying the sentence before it on; "sees the
whole 32k document just like full attention" is no excuse of its own)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result
from feedback_probes import claimed

from tests.expert_claims import answer_keys, expert_answer, flags_of_answer

CORPUS = "expert_pass89_answers.yaml"


@pytest.mark.parametrize("key", [key for key in answer_keys(CORPUS, "H")
                                 if not key.endswith((":A004", ":A036"))])  # (below)
def test_a_misconception_named_to_reject_it_raises_no_red_flag(key: str) -> None:
    assert flags_of_answer(CORPUS, key) == []


@pytest.mark.parametrize(("key", "flag"), [
    ("llama31-8b-h100/followup-observed-lower/W:A091", "max-model-len-reserved"),
    ("sliding-window-kv/what-windows-cost/W:A163", "stacked-layers-see-everything"),
])
def test_a_wrong_answer_the_pass_found_unflagged_is_named(key: str, flag: str) -> None:
    assert flag in flags_of_answer(CORPUS, key)


def test_a_credit_quotes_no_figure_the_answer_did_not_type(run: Callable[..., Result],
                                                           tmp_path: Path) -> None:
    key = "chunked-prefill-tpot/trade-off/H:A004"
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text(json.dumps({"trade-off": expert_answer(CORPUS, key)}), encoding="utf-8")
    # (a sheet of one text step fails the drill: exit 1, its grade still printed)
    result = run("grade", "chunked-prefill-tpot", "--answers", str(sheet), "--json", ok=False)
    evidence = [line for dimension in json.loads(result.output)["rubric"]["dimensions"].values()
                for line in dimension["evidence"]]
    assert not any("'max('" in line for line in evidence)


def test_there_pointing_back_still_carries_the_sentence_before_on() -> None:
    text = ("At batch 1 a token reads only 2 of 8 experts per layer, about 25.8 GB. There the "
            "pitch holds. At batch 64 every expert is read.")
    assert "pitch-is-right" not in claimed("mixtral-moe-decode", "what-moe-saves", text)


def test_what_it_would_be_fair_to_say_is_still_claimed() -> None:
    text = "It would be fair to say only the ~37B active parameters need HBM, so subtract 37 GB."
    assert "only-active-need-residence" in claimed("deepseek-v3-mla-h200", "experts-and-levers",
                                                   text)


def test_a_question_and_its_answer_on_one_line_keep_the_answer() -> None:
    # ("Q: does 2,000 users online mean 2,000 concurrent slots? A: no, …" scored 0 of 4: the
    # whole line was read as the interviewer's)
    from trainer.drills.loader import find_drill, load_rubric
    from trainer.drills.reference import AnswerKey
    from trainer.marking.checker import mark_sheet
    from trainer.marking.scoring import score_attempt

    drill = find_drill("littles-law-capacity")[0]
    text = expert_answer(CORPUS, "littles-law-capacity/plan/H:A036")
    score = score_attempt(drill, load_rubric(drill.rubric),
                          mark_sheet(AnswerKey(drill), {"plan": text}))
    assert all(dimension.score > 2 for dimension in score.dimensions
               if dimension.id != "arithmetic")


def test_an_interviewers_line_alone_is_still_not_the_candidates() -> None:
    text = "Q: so TP=16 halves the KV per GPU again?\nA: no: past 8 GPUs each KV head is copied."
    assert "tp16-halves-kv-per-gpu" not in claimed("llama31-405b-h200-tp", "why-less", text)
