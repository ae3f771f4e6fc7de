"""Interviewer material for one variant: the candidate's sheet (no answer anywhere), the answer
key (every reference with its unit, the wrong values that betray each mistake, the worked
solution), the key as a gradable answer sheet, and the JSON of `kvdrill variants`."""

from __future__ import annotations

import functools
import json
import random
from typing import Any

import yaml

from trainer.capacity.presets import find_gpu, model_label
from trainer.capacity.solver import value_of
from trainer.capacity.wrong_paths import WRONG_PATHS
from trainer.drills.model import Drill, Step
from trainer.drills.placeholders import fill
from trainer.drills.reference import AnswerKey, show
from trainer.drills.solutions import kept_for_key, worked_solution
from trainer.drills.variants import (
    draw,
    replaced_givens,
    space_size,
    target_label,
    target_parts,
)
from trainer.errors import KvdrillError, UsageError
from trainer.marking.checker import close, tolerance_of
from trainer.marking.diagnosis import slip_values
from trainer.marking.grading import in_step_unit
from trainer.reading.exact import Fraction
from trainer.views.sheets import givens_lines, situation_of

VARIANT_SEED_RANGE = 10**6
MAX_DRAWS_PER_VARIANT = 50

PARAM_NAMES = ("layers", "heads", "kv_heads", "head_dim", "params", "weights_gb", "hbm_gb",
               "bandwidth_tbs", "gpus", "utilization", "reserve_gb", "context", "kv_dtype",
               "weights_dtype")


def pick_variants(drill: Drill, count: int, seed: int, target: Any = None,
                  built: dict[int, AnswerKey] | None = None) -> list[tuple[int, dict[str, Any]]]:
    """`count` variants with distinct parameters, reproducible from `seed`; re-targeted,
    distinct once the target has replaced the model and card (two draws that differ only in
    the card a target replaces are one variant). `built`: filled with each chosen variant's
    key, as the comparison of answers made it, for a caller that renders them."""
    size = space_size(drill, target)
    wanted = min(count, size)  # past the space, how many there are is what is said
    model, gpu = target_parts(target) if target is not None else (None, None)
    rng = random.Random(f"variants:{drill.id}:{seed}")
    chosen: list[tuple[int, dict[str, Any]]] = []
    seen: set[str] = set()
    answered: dict[str, tuple[str, AnswerKey] | None] = {}  # givens' fingerprint → answers'
    known: dict[str, bool] = {}
    for _ in range(wanted * MAX_DRAWS_PER_VARIANT):
        if len(chosen) == wanted:
            break
        variant = rng.randrange(1, VARIANT_SEED_RANGE)
        givens = draw(drill, variant, known)
        drawn = givens if target is None else replaced_givens(givens, model, gpu)
        fingerprint = repr(sorted(drawn.items(), key=lambda item: item[0]))
        if fingerprint not in answered:
            answered[fingerprint] = _answers_of(drill, givens, target)
        # two variants whose every answer is the same (a context a window on every layer
        # ignores, two cards of the same memory) are one variant to a candidate
        found = answered[fingerprint]
        if found is not None and found[0] not in seen:
            seen.add(found[0])
            chosen.append((variant, givens))
            if built is not None:
                built[variant] = found[1]
    if len(chosen) < count:
        where = "" if target is None else f" re-targeted at {target_label(target)}"
        raise UsageError(
            f"drill {drill.id}{where} has {len(chosen)} variants with answers of their own "
            f"({size} combinations of its givens): ask for --count {len(chosen)} or fewer"
            + (", or widen its 'vary'" if target is None and len(chosen) == size else "")
        )
    return chosen


def _answers_of(drill: Drill, givens: dict[str, Any], target: Any
                ) -> tuple[str, AnswerKey] | None:
    """Every numeric step's reference for these givens (re-targeted when `target`), as one
    text, and the key that holds them; None when the target cannot carry them."""
    from trainer.drills.variants import retarget

    try:
        key = AnswerKey(drill, givens if target is None else retarget(drill, givens, target))
        return repr([key.reference(step.id).value for step in drill.steps
                     if step.kind == "numeric"]), key
    except (UsageError, KvdrillError, ZeroDivisionError):
        return None


def params_of(key: AnswerKey) -> dict[str, Any]:
    """The variant's parameters under calc's option names (snake case)."""
    d = key.base
    params: dict[str, Any] = {"model": model_label(key.givens.get("model")),
                              "gpu": key.givens.get("gpu")}
    for name in PARAM_NAMES:
        value = getattr(d, name)
        if name == "weights_gb":
            value = value_of(d, "weights_bytes") / 10**9
        if value is None:
            continue
        params[name] = in_step_unit(value, "") if not isinstance(value, str) else value
    card = find_gpu(str(key.givens["gpu"])) if key.givens.get("gpu") else None
    if card is not None and card.reported_mib is not None:
        reported = Fraction(card.reported_mib)  # for the real-card steps, exact
        params["hbm_reported_mib"] = int(reported) if reported.denominator == 1 else \
            float(reported)
    # Every other given, varied or not (block_size, batch, memory, ...), so that the drill
    # file and these params alone re-derive every answer.
    for name, value in sorted(key.givens.items()):
        if name in params or value is None:
            continue
        given = getattr(d, name, value)
        params[name] = given if isinstance(given, str) else in_step_unit(Fraction(given), "")
    return params


def answers_of(key: AnswerKey) -> dict[str, dict[str, Any]]:
    return {
        step.id: {"value": in_step_unit(key.reference(step.id).value, step.unit or ""),
                  "unit": step.unit or ""}
        for step in key.drill.steps if step.kind == "numeric"
    }


def variant_json(key: AnswerKey, variant: int) -> dict[str, Any]:
    return {"variant": variant, "params": params_of(key), "answers": answers_of(key)}


def sheet_markdown(key: AnswerKey, variant: int | None) -> str:
    drill = key.drill
    title = key.title(variant)
    lines = [f"# {title}", "", f"Target time: {drill.target_minutes} minutes.", "",
             situation_of(key), "", "## Given", ""]
    lines += [f"- {line}" for line in givens_lines(key)]
    # Questions are labelled by their step id only, as the drill's own text and the key refer
    # to them: a second numbering would contradict "step 1a" in the prompts.
    lines += ["", "## Questions", ""]
    givens = key.display_givens()
    for step in drill.steps:
        unit = f" *(answer in {step.unit})*" if step.unit else ""
        kind = " *(written answer)*" if step.kind == "text" else ""
        lines.append(f"- **{step.id}** — {_prompt(step, givens)}{unit}{kind}")
    return "\n".join(lines) + "\n"


# reference.show, kept: a key shows the same values (a wrong path's, a slip's) in many rows and
# many variants, and formatting one costs more than the rest of its row.
_show = functools.lru_cache(maxsize=16384, typed=True)(show)


def _prompt(step: Step, givens: dict[str, str]) -> str:
    """What sheets.prompt_of gives for the step, with the givens' display values worked out
    once per key rather than once per step (they are most of the time a sheet takes)."""
    return fill(step.prompt, givens).strip()


def key_rows(key: AnswerKey) -> list[dict[str, Any]]:
    """One row per numeric step: the reference, each wrong value with its mistake, and the
    values that betray a slip of one input (generated by the diagnosis, not listed). Kept once
    made: working out the slips is most of what drawing a variant costs, and the same seed
    draws the same variants (a key written again as HTML or JSON, a second draw)."""
    rows: list[dict[str, Any]] = kept_for_key(key, "key rows", lambda: _key_rows(key), list)
    if not _rows_shaped(rows):  # a kept entry of another shape: made again, not trusted
        rows = _key_rows(key)
    return rows


def _rows_shaped(rows: list[Any]) -> bool:
    def strings(item: Any, names: tuple[str, ...]) -> bool:
        return isinstance(item, dict) and set(item) == set(names) and \
            all(isinstance(item[name], str) for name in names)

    return all(isinstance(row, dict) and set(row) == {"id", "prompt", "reference", "wrong", "slips"}
               and strings({k: row[k] for k in ("id", "prompt", "reference")},
                           ("id", "prompt", "reference"))
               and isinstance(row["wrong"], list) and isinstance(row["slips"], list)
               and all(strings(w, ("misconception", "value", "mistake")) for w in row["wrong"])
               and all(strings(s, ("value", "means")) for s in row["slips"])
               for row in rows)


def _key_rows(key: AnswerKey) -> list[dict[str, Any]]:
    rows = []
    givens = key.display_givens()
    for step in key.drill.steps:
        if step.kind != "numeric":
            continue
        reference = key.reference(step.id)
        tolerance = tolerance_of(step)
        # one row per value shown; none that would be marked right (an estimate's 215 for 214
        # is no mistake) or that shows as the reference does
        # (nor the count on a knife edge the reference says is as right: 55 beside 54)
        shown = dict.fromkeys(
            (path, text) for path, value in reference.wrong
            if not close(value, reference.value, tolerance)
            and (text := _show(value, reference.unit)) != reference.display
            and (reference.edge is None or text != _show(reference.edge, reference.unit)))
        deployment = key.deployment(step.id)
        wrong = [{"misconception": path, "value": value,
                  "mistake": WRONG_PATHS[path].mistake_in(deployment)}
                 for path, value in shown]
        slips = [{"value": text, "means": means}
                 for value, means in slip_values(key, step.id, tolerance=tolerance)
                 if (text := _show(value, reference.unit)) != reference.display]
        shown_reference = reference.display + (
            f" ({reference.edge_note})" if reference.edge_note else "")
        rows.append({"id": step.id, "prompt": _prompt(step, givens),
                     "reference": shown_reference, "wrong": wrong, "slips": slips})
    return rows


def key_markdown(key: AnswerKey, variant: int | None) -> str:
    title = key.title(variant)
    lines = [f"# Answer key: {title}", "", "## Given", ""]
    lines += [f"- {line}" for line in givens_lines(key)]
    lines += ["", "## Reference answers", "",
              "| step | reference | a wrong value means | a slip's value means (likely) |",
              "|---|---|---|---|"]
    for row in key_rows(key):
        # one value that two mistakes give is said once, with both: "or", not two entries
        by_value: dict[str, list[str]] = {}
        for w in row["wrong"]:
            by_value.setdefault(w["value"], []).append(f"{w['mistake']} ({w['misconception']})")
        wrong = "; ".join(f"{value}: {', or '.join(meanings)}"
                          for value, meanings in by_value.items()) or "—"
        slips = "; ".join(f"{s['value']}: {s['means']}" for s in row["slips"]) or "—"
        lines.append(f"| {row['id']} | {row['reference']} | {wrong} | {slips} |")
    lines += ["", "## Worked solution", "", worked_solution(key)]
    return "\n".join(lines)


def key_as_sheet(key: AnswerKey, variant: int | None = None) -> str:
    """The key's references as an answer sheet that names its drill and variant, so `kvdrill
    grade` marks it against that variant's numbers."""
    answers: dict[str, Any] = {"drill": key.drill.id, "variant": variant}
    if key.retargeted:
        answers["target"] = key.retargeted
        answers["target_digest"] = key.target_digest
    answers |= {step.id: key.reference(step.id).display.split(" (")[0]
                for step in key.drill.steps if step.kind == "numeric"}
    text: str = yaml.safe_dump(answers, allow_unicode=True, sort_keys=False)
    return text


def blank_sheet(key: AnswerKey, variant: int | None = None, again: str = "") -> str:
    """An answer sheet for the candidate to fill in: the drill and variant it is for, then
    every step id with nothing after it; `kvdrill grade` reads it back. `again`: the options
    that re-target the drill (--model, --gpu), for the grading command."""
    comments = [key.title(variant),
                "Answer after each step id: numbers with their unit (52 GB), text in quotes.",
                f"Graded with: kvdrill grade {key.drill.id}{again} --answers THIS-FILE"]
    # A path may hold a newline: every line of a comment stays a comment
    lines = ["# " + line for comment in comments for line in comment.splitlines() or [""]]
    lines += [f"drill: {key.drill.id}", f"variant: {'null' if variant is None else variant}"]
    if key.retargeted:
        lines.append(f"target: {json.dumps(key.retargeted, ensure_ascii=False)}")
        lines.append(f"target_digest: {json.dumps(key.target_digest)}")
    lines += [f"{step.id}:" for step in key.drill.steps]
    return "\n".join(lines) + "\n"
