"""Issue 35, in part: every drill re-targeted at every catalogue model on several cards either
renders its worked solution with no negative memory or refuses in one sentence that says why
and what to choose, and names its own default model only as where a measurement came from; a
drill's `requires:` refuses what its lesson cannot carry (measured rates on another card or
shape, a draft with another tokenizer, windows where a prefix is shared)."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from typing import Any

import pytest
from click.testing import Result

from trainer.capacity.presets import find_model, model_of, models
from trainer.drills.loader import find_drill
from trainer.drills.solutions import worked_solution
from trainer.drills.variants import answer_key, make_target
from trainer.errors import KvdrillError
from trainer.files.paths import drill_paths

Run = Callable[..., Result]
# its own card, the common NVIDIA ones, AMD, a small one
CARDS = (None, "h100", "h200", "mi300x", "b200", "l40s")
# A negative figure as a result: "= −52.8 GB", "budget of -3 sequences".
NEGATIVE = re.compile(r"(?:=|≈|:|\bis|\bof|budget)[ \t]*[−-][ \t]?\d")
MEASURED = ("decode-roofline-vs-measured", "prefill-vs-decode", "chunked-prefill-tpot",
            "disaggregated-prefill", "swap-or-recompute")


@cache
def outcome(drill_id: str, model_id: str, card: str | None) -> tuple[str, str]:
    drill = find_drill(drill_id)[0]
    try:
        key = answer_key(drill, None, make_target(find_model(model_id), card))
    except KvdrillError as refusal:
        return "refused", str(refusal)
    return "rendered", worked_solution(key)


@cache
def _own_model(drill_id: str) -> Any:
    return model_of(str(find_drill(drill_id)[0].givens["model"]))


# A drill's two matrix tests run on one worker (pytest-xdist's loadgroup), which works its
# outcomes out once.
_ONE_WORKER_EACH = [pytest.param(p.stem, marks=pytest.mark.xdist_group(f"matrix-{p.stem}"))
                    for p in drill_paths()]


@pytest.mark.parametrize("drill_id", _ONE_WORKER_EACH)
def test_every_model_and_card_renders_or_refuses_in_one_line(drill_id: str) -> None:
    for model_id in models():
        for card in CARDS:
            kind, text = outcome(drill_id, model_id, card)
            where = (drill_id, model_id, card)
            if kind == "refused":
                assert "\n" not in text and "divide" not in text, where
                fix = text.rsplit(": ", 1)[-1]  # the why, then what to do instead
                assert ": " in text, (where, text)
                assert re.search(r"choose|give|size|--gpu|--model|practice", fix), (where, text)
            else:
                assert NEGATIVE.search(text) is None, (where, NEGATIVE.search(text))
                own = _own_model(drill_id)
                if model_id != own.id:
                    # the drill's own model named only as where a measurement came from,
                    # or in a section whose heading says it keeps that model as its case
                    left = [line for heading, line in _sectioned(text)
                            if own.name in line and "shape" not in line
                            and own.name not in heading]
                    assert not left, (where, left)


def _sectioned(text: str) -> list[tuple[str, str]]:
    """Each line of a worked solution with the heading of the section it is in."""
    heading, lines = "", []
    for line in text.splitlines():
        heading = line if line.startswith("#") else heading
        lines.append((heading, line))
    return lines


SUGGESTED = re.compile(r"kvdrill practice (\S+)(?: --model (\S+))?(?: --gpu (\S+))?$")


@pytest.mark.parametrize("drill_id", _ONE_WORKER_EACH)
def test_every_drill_a_refusal_suggests_runs_as_suggested(drill_id: str) -> None:
    for model_id in models():
        for card in CARDS:
            kind, text = outcome(drill_id, model_id, card)
            suggested = SUGGESTED.search(text) if kind == "refused" else None
            if suggested is None:
                continue
            other, model, gpu = suggested.groups()
            own = str(find_drill(other)[0].givens["model"])
            assert outcome(other, model or own, gpu)[0] == "rendered", \
                (drill_id, model_id, card, text)


@pytest.mark.parametrize("drill_id", MEASURED)
def test_measured_rates_are_not_moved_to_another_card(run: Run, drill_id: str) -> None:
    result = run("show", drill_id, "--gpu", "b200", ok=False)
    assert result.exit_code == 2
    assert "measured on an NVIDIA H200" in result.stderr and "B200" in result.stderr


@pytest.mark.parametrize("drill_id", MEASURED)
def test_measured_rates_are_not_moved_to_another_shape(run: Run, drill_id: str) -> None:
    for model_id in ("qwen3-8b", "mixtral-8x7b"):  # Mixtral: Llama-3.1-8B's attention, 6× weights
        result = run("show", drill_id, "--model", model_id, ok=False)
        assert result.exit_code == 2, model_id
        said = " ".join(result.stderr.split())
        assert "measured on an H200 with this model" in said \
            or "at the rates measured on an NVIDIA H200" in said, model_id


def test_a_draft_is_never_paired_with_a_target_of_another_tokenizer(run: Run) -> None:
    # Each target drafts with its own family's model (serving_formulas.DRAFT_FAMILIES); a
    # family with no small sibling sharing its tokenizer (GPT-OSS) is refused by name.
    for model_id, draft in (("qwen3-32b", "Qwen3-0.6B"), ("gemma-2-9b", "Gemma-2-2B"),
                            ("llama-3.3-70b", "Llama-3.2-1B")):
        text = run("show", "speculative-decoding", "--model", model_id).output
        assert f"with {draft} as the draft" in text, model_id
        assert "Llama-3.2-1B" not in text or draft == "Llama-3.2-1B", model_id
    result = run("show", "speculative-decoding", "--model", "gpt-oss-120b", ok=False)
    assert result.exit_code == 2 and "GPT-OSS's o200k_harmony tokenizer" in result.stderr


DRAFT_CARDS = ("h100", "h200", "a100-80gb", "mi300x", "b200")


def test_every_speculative_target_drafts_with_its_own_family_or_refuses() -> None:
    from trainer.capacity.serving_formulas import DRAFT_FAMILIES

    drafts = {f.draft: f for f in DRAFT_FAMILIES if f.draft is not None}
    names = {find_model(d).name: d for d in drafts}
    for model_id in models():
        family = next((f for f in DRAFT_FAMILIES if model_id.startswith(f.members)), None)
        for card in DRAFT_CARDS:
            kind, text = outcome("speculative-decoding", model_id, card)
            where = (model_id, card)
            if kind == "refused":
                assert "\n" not in text and re.search(r": (choose|size|drill it)", text), \
                    (where, text)
                if family is not None and family.draft is None:
                    assert "tokenizer" in text, (where, text)
                continue
            assert family is not None and family.draft is not None, (where, "drafted")
            named = {name for name in names if f"draft {name} (" in text}
            assert named == {find_model(family.draft).name}, (where, named)
            sessions = re.search(r"= \*\*([\d,]+) sequences?\*\*\n\n## 2", text)
            assert sessions is not None and int(sessions.group(1).replace(",", "")) >= 1, where
            assert NEGATIVE.search(text) is None, where
            # nothing of the drill's own Llama-3.1-70B on an MI300X is left in the text
            if model_id != "llama-3.1-70b":
                assert "Llama-3.1-70B" not in text, where
            if card != "mi300x":
                assert "MI300X" not in text, where


@pytest.mark.parametrize("drill_id", ["prefix-caching", "multi-turn-growth"])
def test_a_shared_prefix_is_not_sized_on_windowed_or_recurrent_layers(run: Run,
                                                                       drill_id: str) -> None:
    for model_id, other in (("gemma-3-27b", "52 windowed layers"),
                            ("jamba-1.5-mini", "hybrid-state-kv")):
        result = run("show", drill_id, "--model", model_id, ok=False)
        assert result.exit_code == 2 and other in result.stderr, model_id


def test_weights_with_no_room_are_refused_not_printed_as_a_negative_budget(run: Run) -> None:
    result = run("solution", "long-context-tier", "--model", "llama-3.3-70b", ok=False)
    assert result.exit_code == 2
    assert "do not fit on 1 × NVIDIA H100 SXM 80GB (141 GB against 80 GB)" in result.stderr
    assert "−" not in result.stdout


def test_a_tpot_no_batch_can_meet_is_said_as_such(run: Run) -> None:
    result = run("show", "littles-law-capacity", "--model", "llama-3.1-70b", "--gpu",
                 "mi300x", ok=False)
    assert result.exit_code == 2 and "TPOT target" in result.stderr


def test_a_retargeted_sheet_is_graded_only_at_its_target(run: Run, tmp_path) -> None:
    run("variants", "llama31-8b-h100", "--model", "qwen3-8b", "--gpu", "h200", "--count", "1",
        "--out", str(tmp_path))
    key = next(tmp_path.glob("*-answers.yaml"))
    refused = run("grade", "llama31-8b-h100", "--answers", str(key), ok=False)
    assert refused.exit_code == 2 and "the sheet is for 'Qwen3-8B on NVIDIA H200" in \
        refused.stderr
    run("grade", "llama31-8b-h100", "--model", "qwen3-8b", "--gpu", "h200", "--answers",
        str(key))
