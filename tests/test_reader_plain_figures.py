"""A plain figure ("36.9 GB", "8,192", "13 sequences") is read by the reader's final stage alone
(issue 39: a sheet of plain figures then compiles none of the patterns for working, remarks and
ranges). That shortcut must never read a figure otherwise than the whole reader does: for every
unit it takes, written with and without its space, at every unit a drill's step asks in, the
two readings are equal (or refused with the same message)."""

from __future__ import annotations

import pytest

from trainer.drills import loader
from trainer.drills.variants import answer_key
from trainer.errors import AnswerParseError
from trainer.files.paths import drill_paths
from trainer.reading.reader import PLAIN_UNITS, read_answer, read_fully, read_plain_figure

FIGURES = ["0", "1", "8", "13", "36.9", "0.5", "1,024", "2,621,440", "8,192.5", "100"]


def step_units() -> list[str]:
    units = set()
    for path in drill_paths():
        drill = loader.load_drill_file(path)
        key = answer_key(drill, None, None)
        units |= {key.reference(step.id).unit for step in drill.steps
                  if step.kind == "numeric"}
    return sorted(units)


STEP_UNITS = step_units()


def outcome(read: object, text: str, unit: str) -> object:
    try:
        return read(text, unit)  # type: ignore[operator]
    except AnswerParseError as refusal:
        return ("refused", str(refusal))


def test_the_steps_ask_in_many_units() -> None:
    assert {"", "%", "B", "GB", "GiB", "ms", "sequences", "tokens/s"} <= set(STEP_UNITS)


@pytest.mark.parametrize("written", sorted(PLAIN_UNITS))
def test_a_plain_figure_reads_as_the_whole_reader_reads_it(written: str) -> None:
    for figure in FIGURES:
        for text in {f"{figure} {written}".strip(), f"{figure}{written}"}:
            for unit in STEP_UNITS:
                assert outcome(read_plain_figure, text, unit) == \
                    outcome(read_fully, text, unit), (text, unit)


@pytest.mark.parametrize("text", ["36.9 GB", "8,192", "13 sequences", "32.7ms", "183 tokens/s"])
def test_a_plain_figure_takes_the_shortcut(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    def whole_reader(text: str, unit: str) -> None:
        raise AssertionError(f"{text!r} was read by the whole reader")

    monkeypatch.setattr("trainer.reading.reader.read_fully", whole_reader)
    read_answer.cache_clear()
    assert read_answer(text, "GB").readings
    read_answer.cache_clear()


@pytest.mark.parametrize("text", ["36.9 GB.", " 36.9 GB", "36.9 gigs", "36.9 GB total", "12,34",
                                  "~36.9 GB", "36.9 GB (weights)", "8 sequences max",
                                  "３６.９ GB", "١٣ GB", "36.9 ＧＢ"])
def test_anything_else_is_read_by_the_whole_reader(text: str) -> None:
    assert outcome(read_answer, text, "GB") == outcome(read_fully, text, "GB")
