"""Grade an answer sheet (a YAML mapping of step id → answer as typed) against a drill, and
present the result as JSON or text."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

from trainer.drills.loader import load_rubric, parse_yaml, screening_loader, yaml_text
from trainer.drills.model import Drill
from trainer.drills.reference import AnswerKey, dim_of_unit, show
from trainer.errors import UsageError
from trainer.files.paths import DRILL_ID
from trainer.files.plain_mapping import plain_mapping
from trainer.marking.checker import Mark, mark_sheet
from trainer.marking.scoring import RubricScore, score_attempt
from trainer.reading.exact import Fraction
from trainer.reading.expression import unit_factor
from trainer.reading.numbers import format_number
from trainer.records import record

MAX_ANSWER_CHARS = 8000


@record
class Graded:
    drill: Drill
    variant: int | None
    marks: dict[str, Mark]
    score: RubricScore
    title: str = ""  # the drill's title for the graded givens (a variant names its own GPU)
    target: str | None = None  # the re-target graded at ("Qwen3-32B on NVIDIA H200 …"), if any

    @property
    def all_numeric_correct(self) -> bool:
        return all(m.verdict == "correct" for m in self.marks.values() if m.is_numeric)


# Keys of a sheet that say what it is for, not a step's answer (no step may take these ids).
SHEET_FIELDS = ("drill", "variant", "target", "target_digest")


def sheet_variant(path: Path, drill: Drill, asked: int | None,
                  target: str | None = None, digest: str | None = None) -> int | None:
    """The variant a sheet is graded against: the one it names (a sheet `variants --out`
    wrote), else --variant. A sheet for another drill, naming another variant than
    --variant, or written for another re-target than `target` (the label grading uses) is
    refused (exit 2) rather than marked against the wrong numbers."""
    data = _sheet_data(path)
    if not isinstance(data, dict):
        return asked
    named_drill = data.get("drill")
    if named_drill is not None and str(named_drill) != drill.id:
        other = str(named_drill)
        shown = other if DRILL_ID.fullmatch(other) else _brief(other)
        raise UsageError(f"{path}: the sheet is for drill {shown}, not {drill.id}"
                         + (f": grade it with `kvdrill grade {other}`"
                            if DRILL_ID.fullmatch(other) else ""))
    variant = _named_variant(path, data, asked)
    _check_target(path, data, target, digest)
    return variant


# The data of the sheets read in this process, by path, size and modification time: grading
# reads a sheet for what it is for (sheet_variant) and then for its answers (read_sheet), and
# parsing YAML is most of what either costs.
_SHEETS: dict[tuple[str, int, int], Any] = {}


def _sheet_data(path: Path) -> Any:
    """The data of an answer sheet (a copy), read once while the file is unchanged."""
    try:
        stat = path.stat()
    except OSError:
        stat = None
    kept = None if stat is None else (str(path), stat.st_size, stat.st_mtime_ns)
    if kept is None or kept not in _SHEETS:
        text = yaml_text(path, "answer sheet", UsageError)
        # a sheet of one-line `step: answer` entries needs no YAML library (the fields that
        # say what it is for are strings, and `variant:` a whole number)
        # safe: plain_mapping makes only str, int and None values in one flat dict, equal to
        # yaml.safe_load's; every other text goes to yaml.safe_load (parse_yaml) and its screens
        data = plain_mapping(text, numeric_fields=("variant",), fields=SHEET_FIELDS)
        if data is None:
            data = _numbers_as_typed(parse_yaml(path, text, "answer sheet", UsageError), text)
        if kept is None:
            return data
        _SHEETS.clear()
        _SHEETS[kept] = data
    return copy.deepcopy(_SHEETS[kept])


_YAML_NUMBERS = ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float")


def _numbers_as_typed(data: Any, text: str) -> Any:
    """An answer YAML would read as a number is kept as it was typed: YAML 1.1 reads `040` as
    32 (octal), `0x60` as 96 and `1:0:8` as 3608, and a sheet is marked on what the candidate
    wrote, never on what YAML made of it."""
    if not isinstance(data, dict):
        return data
    import yaml

    root = yaml.compose(text, Loader=screening_loader())  # parse_yaml refused hostile text
    if not isinstance(root, yaml.MappingNode):
        return data
    typed = {key.value: value.value for key, value in root.value
             if isinstance(key, yaml.ScalarNode) and isinstance(value, yaml.ScalarNode)
             and value.tag in _YAML_NUMBERS and not value.style}
    return {key: typed.get(str(key), value) if key not in SHEET_FIELDS
            and isinstance(value, int | float) and not isinstance(value, bool) else value
            for key, value in data.items()}


def _named_variant(path: Path, data: dict[Any, Any], asked: int | None) -> int | None:
    if "variant" not in data:
        return asked
    named = data["variant"]
    if named is not None and (isinstance(named, bool) or not isinstance(named, int)
                              or not 0 <= named < 2**63):
        shown = str(named).lower() if isinstance(named, bool) else _brief(named)
        raise UsageError(f"{path}: variant: {shown} is not a variant number: write the "
                         "number `kvdrill variants` printed, or remove the line")
    if asked is not None and named != asked:
        which = "the drill's own givens" if named is None else f"variant {named}"
        raise UsageError(f"{path}: the sheet is for {which}, and --variant says {asked}: "
                         "drop --variant (the sheet says which), or grade the sheet of "
                         f"variant {asked}")
    return named


def _check_target(path: Path, data: dict[Any, Any], target: str | None,
                  digest: str | None = None) -> None:
    """A sheet `variants --model/--gpu` wrote names the model and card its numbers are for
    (`target:`, and `target_digest:` of every figure the model was read with): graded
    against another (or the drill's own), or a config of the same name that reads otherwise,
    it is refused."""
    if "target" not in data:
        if target is not None and isinstance(data.get("variant"), int) and \
                not isinstance(data.get("variant"), bool):
            # `variants` without --model wrote it: its variant line fixes the drill's own
            # model and card as firmly as a target line would
            raise UsageError(f"{path}: the sheet is for variant {data['variant']} as drawn, on "
                             f"the drill's own model and card, and it is graded at {target}: "
                             "grade it without --model and --gpu")
        return
    named = data["target"]
    if named is not None and not isinstance(named, str):
        raise UsageError(f"{path}: target: {_brief(named)} is not a re-target: keep the line "
                         "`kvdrill variants` wrote, or remove it")
    if named != target:
        # (a target's label, "Mistral-7B-v0.1 on NVIDIA H100 SXM 80GB", whole where it fits)
        which = "the drill's own model and card" if named is None else f"{_brief(named, 100)}"
        now = "without --model or --gpu" if target is None else f"at {target}"
        raise UsageError(f"{path}: the sheet is for {which}, and it is graded {now}: grade it "
                         "at the same model and card (--model, --gpu; a blank sheet's first "
                         "lines give the command)")
    written = data.get("target_digest")
    if written is not None and not (isinstance(written, str)
                                    and re.fullmatch(r"[0-9a-f]{16}", written)):
        raise UsageError(f"{path}: target_digest: {_brief(written)} is not one kvdrill wrote: "
                         "keep the line `kvdrill variants` wrote, or remove it")
    if written is not None and digest is not None and written != digest:
        # the same label, another model: a config that changed, another folder of its name,
        # or a preset where the sheet was made from a config.json (or the other way round)
        raise UsageError(f"{path}: the sheet is for {_brief(named)} as it was read when the "
                         "sheet was written, and --model now reads another model of that name "
                         "(another config.json, or a preset for a config): grade it with the "
                         "--model the sheet was made with")


def read_sheet(path: Path, drill: Drill) -> dict[str, str | None]:
    """A sheet file: step id → answer. Numbers are taken as typed; unknown step ids, a step
    given twice and anything that is not a regular YAML file of sensible size are refused as
    misuse (exit 2), each naming the answer sheet and the fix. `drill:` and `variant:` say
    what the sheet is for (sheet_variant)."""
    data = _sheet_data(path)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise UsageError(f"{path}: an answer sheet maps step ids to answers (1a: 44 GB)")
    known = {step.id for step in drill.steps}
    sheet: dict[str, str | None] = {}
    for key, value in data.items():
        if key in SHEET_FIELDS:
            continue
        if not isinstance(key, str | int | float) or isinstance(key, bool):
            raise UsageError(f"{path}: answer sheet key {_brief(key)} is not a step id: "
                             "see `kvdrill show` for its step ids")
        step_id = str(key)
        if step_id not in known:
            import difflib

            near = difflib.get_close_matches(step_id[:100], sorted(known), n=2, cutoff=0.6)
            hint = f"did you mean {' or '.join(near)}? " if near else ""
            raise UsageError(
                f"{path}: no step {_brief(step_id)} in drill {drill.id}: {hint}an answer sheet "
                f"uses the step ids `kvdrill show {drill.id}` lists"
            )
        if step_id in sheet:
            raise UsageError(f"{path}: step {step_id!r} is given twice in the answer sheet: "
                             "keep one answer")
        if isinstance(value, int) and not isinstance(value, bool) \
                and value.bit_length() > 13_000:  # about 4,000 digits: str() refuses more
            raise UsageError(f"{path}: the answer to {step_id} in the answer sheet is a "
                             "number of thousands of digits: write a sensible figure")
        if value is not None and not isinstance(value, str | int | float):
            raise UsageError(f"{path}: the answer to {step_id} in the answer sheet must be "
                             "text or a number")
        text = None if value is None else str(value)
        if text is not None and len(text) > MAX_ANSWER_CHARS:
            raise UsageError(f"{path}: the answer to {step_id} in the answer sheet is longer "
                             f"than {MAX_ANSWER_CHARS} characters")
        sheet[step_id] = text
    return sheet


def _brief(value: object, width: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= width else text[:width - 1] + "…"


def grade(drill: Drill, key: AnswerKey, sheet: dict[str, str | None],
          variant: int | None, revealed: frozenset[str] = frozenset()) -> Graded:
    marks = mark_sheet(key, sheet, revealed)
    score = score_attempt(drill, load_rubric(drill.rubric), marks,
                          retargeted=key.retargeted is not None,
                          moe=key.base.experts is not None)
    return Graded(drill, variant, marks, score, key.title(), key.retargeted)


def in_step_unit(value: Fraction | None, unit: str) -> int | float | None:
    if value is None:
        return None
    shown = value / unit_factor(unit).value if unit else value
    return shown.numerator if shown.denominator == 1 else float(shown)


def parsed_json(mark: Mark) -> dict[str, Any] | None:
    """The value as read, in the unit it was read in and with its dimension ("8 GB" where a
    head count is asked: 8, GB, B); a range gives its two ends."""
    if mark.parsed is None:
        return None
    unit = mark.read_unit or ""
    read: dict[str, Any] = {"unit": unit or None, "dimension": str(dim_of_unit(unit))}
    # The same value in the step's own unit, to set beside `expected` (None across dimensions).
    same_dim = dim_of_unit(unit) == dim_of_unit(mark.unit)
    read["in_step_unit"] = in_step_unit(mark.parsed, mark.unit) if same_dim else None
    if mark.span is not None:
        low, high = mark.span
        return {"low": in_step_unit(low, unit), "high": in_step_unit(high, unit), **read}
    return {"value": in_step_unit(mark.parsed, unit), **read}


def score_json(score: RubricScore) -> dict[str, Any]:
    return {
        "dimensions": {
            d.id: {"score": float(d.score), "max": d.max, "evidence": list(d.evidence)}
            for d in score.dimensions
        },
        "level": score.level,
        "short_of": score.short_of,
        "next_level": score.next_level,
        "red_flags": [{"id": flag, "says": says} for flag, says in score.red_flags],
        "wrong_claims": [{"id": c.claim.id, "step": c.step_id, "says": says}
                         for c, says in zip(score.wrong_claims, score.claim_says, strict=True)],
    }


def mark_json(mark: Mark) -> dict[str, Any]:
    return {
        "id": mark.step_id,
        "kind": mark.kind,
        "answer": mark.answer,
        "verdict": mark.verdict,
        "expected": None if mark.expected is None
        else {"value": in_step_unit(mark.expected, mark.unit), "unit": mark.unit},
        "parsed": parsed_json(mark),
        "misconception": mark.misconception,
        "misconceptions": list(mark.misconceptions),
        "carried_forward": mark.carried_forward,
        "diagnosis": diagnosis_json(mark),
        "feedback": mark.feedback,
    }


def diagnosis_json(mark: Mark) -> dict[str, Any] | None:
    """The likely slip behind a wrong value no known mistake explains: the input, the value
    the answer implies for it, its true value, and the sentence shown (a guess, said so)."""
    return None if mark.diagnosis is None else mark.diagnosis.json()


def graded_json(graded: Graded) -> dict[str, Any]:
    return {
        "drill": graded.drill.id,
        "variant": graded.variant,
        **({"target": graded.target} if graded.target is not None else {}),
        "steps": [mark_json(m) for m in graded.marks.values()],
        "rubric": score_json(graded.score),
    }


VERDICT_MARKS = {"correct": "✓", "wrong": "✗", "invalid": "?", "unanswered": "·",
                 "answered": "✎", "revealed": "⊘"}


def graded_text(graded: Graded, width: int | None = None) -> str:
    """Each step's verdict as a row (step, answer as typed, verdict and the mistakes named),
    the feedback of a wrong one under it; laid out for a terminal of `width` columns (None:
    one row per line, for a pipe)."""
    from trainer.text_layout import Column, Table, wrap_words

    lines = [f"{graded.title or graded.drill.title}" + (f" — variant {graded.variant}"
                                          if graded.variant is not None else ""), ""]
    rows = []
    for mark in graded.marks.values():
        answer = (mark.answer or "").strip().replace("\n", " ")
        if len(answer) > 40:
            answer = answer[:39] + "…"
        verdict: str = mark.verdict if mark.is_numeric else ""
        if mark.is_numeric:
            if mark.carried_forward:
                verdict += " (carried forward)"
            if mark.misconceptions:
                verdict += f" [{', '.join(mark.misconceptions)}]"
            elif mark.diagnosis is not None:
                verdict += f" [likely: {mark.diagnosis.slip.input}?]"
        if mark.verdict == "unanswered" and mark.expected is not None:
            verdict += f" (expected {show(mark.expected, mark.unit)})"
        rows.append([VERDICT_MARKS[mark.verdict], mark.step_id, answer, verdict.strip()])
    table = Table([Column("", wrap=False), Column("step", wrap=False), Column("answer"),
                   Column("verdict", least=12)], None if width is None else width - 1
                  ).fit(rows)  # each row is printed one column in
    lines += [" " + line for line in table.header_lines()]
    for mark, row in zip(graded.marks.values(), rows, strict=True):
        lines += [" " + line for line in table.row_lines(row)]
        if mark.is_numeric and (mark.verdict in ("wrong", "invalid") or (
                mark.verdict == "correct" and mark.note)):
            lines += (wrap_words(mark.feedback, width, "     ", "     ") if width
                      else [f"     {mark.feedback}"])
    lines += ["", score_text(graded.score, width)]
    if graded.target is not None and any(
            not m.is_numeric and (m.answer or "").strip() for m in graded.marks.values()):
        # (expert pass 52, M5: a claim wrong only of the target went unflagged, unsaid)
        lines += wrap_words(RETARGETED_TEXT, width, "", "") if width else [RETARGETED_TEXT]
    return "\n".join(lines)


RETARGETED_TEXT = ("Re-targeted: text answers are read for the drill's own ideas and wrong "
                   "claims, with those true only of its own model or card left out; a claim "
                   "wrong only of this target may go unflagged.")


# How a text dimension is scored, said once under the rubric
TEXT_SCORES = ("(A text dimension is half the ideas named and half how fully an answer explains "
               "them: its reasoned clauses and the figures in them. The level reads the ideas.)")


def score_text(score: RubricScore, width: int | None = None) -> str:
    """The rubric's scores and their evidence; on a terminal the evidence goes under its
    dimension, wrapped."""
    from trainer.text_layout import wrap_words

    lines = ["Rubric:"]
    for d in score.dimensions:
        if width is None:
            lines.append(f"  {d.title:<20} {format_number(d.score)}/{d.max}  "
                         f"{'; '.join(d.evidence)}")
            continue
        lines.append(f"  {d.title:<20} {format_number(d.score)}/{d.max}")
        if d.evidence:
            lines += wrap_words("; ".join(d.evidence), width, "      ", "      ")
    if any(d.concepts_score is not None for d in score.dimensions):
        said = TEXT_SCORES
        lines += wrap_words(said, width, "  ", "  ") if width else [f"  {said}"]
    lines.append(f"Sounds like: {score.sounds_like}")
    for _, says in score.red_flags:
        lines.append(f"Red flag: {says}")
    return "\n".join(lines)

