"""Text scoring on answers written blind (issue 22): an examiner who saw only `kvdrill show`,
`kvdrill solution`, the seeds and the reference notes (never a rubric, a drill file, the anchors
or the scorer) wrote a junior, a mid and a senior answer and a bare buzzword list for every text
step of all 20 drills (tests/corpus/blind_text_answers_all.yaml). The scorer must order them as
the levels read on nine steps in ten, and rank the buzzword list below the mid answer as often.
`pytest -s` prints every step where it does not."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import yaml

from trainer.drills.loader import drill_paths, find_drill, load_rubric
from trainer.marking.lint import anchor_score
from trainer.reading.exact import Fraction

CORPUS = yaml.safe_load((Path(__file__).parent / "corpus" / "blind_text_answers_all.yaml")
                        .read_text(encoding="utf-8"))
STEPS = [(drill, step) for drill, steps in CORPUS.items() for step in steps]


@cache
def score(drill_id: str, step_id: str, level: str) -> Fraction:
    drill, _ = find_drill(drill_id)
    return anchor_score(drill, load_rubric(drill.rubric), step_id, CORPUS[drill_id][step_id][level])


def test_the_blind_corpus_covers_every_text_step_of_all_twenty_drills() -> None:
    expected = set()
    for path in drill_paths():
        drill, _ = find_drill(path.stem)
        expected |= {(drill.id, s.id) for s in drill.steps if s.kind == "text"}
    assert set(STEPS) == expected and len({d for d, _ in STEPS}) == 20


def test_junior_mid_senior_are_ordered_on_nine_steps_in_ten() -> None:
    misses = [(d, s) for d, s in STEPS
              if not score(d, s, "junior") < score(d, s, "mid") < score(d, s, "senior")]
    print(f"blind, all drills: junior < mid < senior on {len(STEPS) - len(misses)}/{len(STEPS)}",
          misses)
    assert 1 - len(misses) / len(STEPS) >= 0.9, misses


def test_a_buzzword_list_scores_below_the_mid_answer_on_nine_steps_in_ten() -> None:
    misses = [(d, s) for d, s in STEPS if not score(d, s, "buzzwords") < score(d, s, "mid")]
    print(f"blind, all drills: buzzwords < mid on {len(STEPS) - len(misses)}/{len(STEPS)}",
          misses)
    assert 1 - len(misses) / len(STEPS) >= 0.9, misses
