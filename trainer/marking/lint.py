"""`kvdrill lint`: every check a drill, rubric or solution template must pass before a
candidate sees it — the schema, then every cross-reference, then every reference value and
the worked solution, for the drill's givens and a few variants."""

from __future__ import annotations

import re
from pathlib import Path

from trainer.capacity.presets import ALL_INPUTS, find_gpu, find_model
from trainer.capacity.solver import FORMULAS, solve
from trainer.capacity.wrong_paths import WRONG_PATHS
from trainer.drills.loader import load_drill_file, load_rubric, validate
from trainer.drills.model import Derived, Drill, Rubric, Step, linked_names
from trainer.drills.placeholders import malformed_placeholders, placeholders
from trainer.drills.reference import INPUT_ANSWERS, AnswerKey, dim_of_unit, quantity_unit, show
from trainer.drills.render import render_solution
from trainer.drills.skills import SKILLS, suggested_skill
from trainer.errors import AnswerParseError, KvdrillError
from trainer.files.paths import data_dir, drill_paths
from trainer.marking.checker import close, mark_sheet, tolerance_of
from trainer.marking.claims import claims_made
from trainer.marking.scoring import phrase_words, score_attempt
from trainer.reading.exact import Fraction
from trainer.reading.units import Dim
from trainer.records import field, record

# Variants whose every listed mistake must stay namable; the first few also render a solution.
VARIANT_SEEDS_CHECKED = tuple(range(1, 13))
SOLUTIONS_RENDERED = 4  # for the givens and three variants


@record(frozen=False)
class Report:
    path: Path
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors


def lint_paths(paths: list[Path]) -> list[Report]:
    """One report per file, in order; a file's errors never stop the next file being checked
    (even an error no check foresaw is reported against its file)."""
    if not paths:
        return _lint([*drill_paths(), *sorted(data_dir("rubrics").glob("*.yaml"))],
                     into_folders=False)
    return _lint(paths, into_folders=True)


def _lint(paths: list[Path], *, into_folders: bool) -> list[Report]:
    """A folder named on the command line is linted file by file (one level); a folder met
    in the data folders (drills/x.yaml/) is reported, never walked, so nothing loops."""
    reports = []
    for path in paths:
        report = Report(path)
        try:
            if path.is_dir():
                if into_folders:
                    reports += _lint(sorted(path.glob("*.yaml")), into_folders=False)
                    continue
                raise KvdrillError(f"{path}: is a folder, not a drill file: move it away")
            if path.parent.name == "rubrics":
                lint_rubric(validate(path, Rubric), path, report)
            else:
                lint_drill(load_drill_file(path), path, report)
        except KvdrillError as error:
            report.errors.append(str(error))
        except (OSError, ValueError, ArithmeticError, RecursionError) as error:
            report.errors.append(f"{path}: cannot be checked: {type(error).__name__}: "
                                 f"{str(error)[:200]}")
        reports.append(report)
    return reports


def lint_drill(drill: Drill, path: Path, report: Report) -> None:
    where = f"{path}: drill {drill.id}"
    if path.stem != drill.id:
        report.errors.append(f"{where}: id must match the file name {path.stem!r}")
    try:
        rubric = load_rubric(drill.rubric)
    except KvdrillError as error:
        report.errors.append(f"{where}: {error}")
        return
    for flag in drill.red_flags:
        if flag not in {f.id for f in rubric.red_flags}:
            report.errors.append(f"{where}: red flag {flag!r} is not in rubric {rubric.id}")
    for name in (*drill.givens, *(n for key in drill.vary for n in linked_names(key))):
        if name not in ("model", "gpu", *ALL_INPUTS):
            report.errors.append(f"{where}: given {name!r} is not a solver input")
    _lint_requires(drill, where, report)
    _lint_steps(drill, rubric, where, report)
    minutes = -(-drill.budget_seconds // 60)
    if drill.target_minutes != minutes:
        report.errors.append(
            f"{where}: target_minutes {drill.target_minutes} disagrees with the steps' "
            f"budgets, which sum to {drill.budget_seconds} s: write target_minutes: {minutes}")
    stated = stated_minutes(drill.situation)
    if stated is not None and stated != drill.target_minutes:
        report.errors.append(
            f"{where}: the situation's time budget sums to {stated} minutes, but "
            f"target_minutes is {drill.target_minutes} (the steps' budgets): make them agree, "
            "or leave the budget out (practice shows the target)")
    if report.errors:
        return
    _lint_values(drill, where, report)
    if not report.errors:
        _lint_anchors(drill, rubric, where, report)


_TIME_BUDGET = re.compile(r"time budget:(.*?)(?:\n\s*\n|$)", re.IGNORECASE | re.DOTALL)
_MINUTES = re.compile(r"\b(\d+)\s+(?:minutes?|for|to)\b")  # "4 minutes for …, 3 for …"


def stated_minutes(situation: str) -> int | None:
    """The minutes a situation's "Time budget:" paragraph gives, summed (None: it has none)."""
    found = _TIME_BUDGET.search(situation)
    if found is None:
        return None
    return sum(int(number) for number in _MINUTES.findall(found.group(1)))


def lint_rubric(rubric: Rubric, path: Path, report: Report) -> None:
    """A generic phrase is one that means the concept only in context; a single such word
    ("own", "same") says nothing on its own, and the scorer never counts one."""
    for dimension in rubric.dimensions:
        for concept in dimension.concepts:
            for phrase in concept.generic:
                if len(phrase_words(phrase)) < 2:
                    report.errors.append(
                        f"{path}: concept {concept.id}: generic phrase {phrase!r} is one word, "
                        "which never carries a concept: write the words that do (\"owns the "
                        "caps\", \"same step time\") or move it to `phrases` if it is specific")
    for level in rubric.levels:
        for quantity in level.right:
            if quantity not in FORMULAS:
                report.errors.append(f"{path}: level {level.id}: right names {quantity!r}, "
                                     "which is not a solver quantity")


def _lint_requires(drill: Drill, where: str, report: Report) -> None:
    """What `requires:` names must exist: a re-target is checked against it."""
    needs = drill.requires
    named = [(f"requires.measured_on.{k}", v, k) for k, v in (needs.measured_on or {}).items()
             if k in ("gpu", "model")]
    if needs.tokenizer_of:
        named.append(("requires.tokenizer_of", needs.tokenizer_of, "model"))
    for field_name, preset, kind in named:
        try:
            (find_gpu if kind == "gpu" else find_model)(preset)
        except KvdrillError:
            report.errors.append(f"{where}: {field_name} names {preset!r}, which is no "
                                 f"{kind} preset: see kvdrill calc --list-presets")
    if needs.ratio_below is not None:
        ids = {step.id: step for step in drill.steps}
        named_step = ids.get(needs.ratio_below.step)
        if named_step is None or named_step.ratio_of is None:
            report.errors.append(f"{where}: requires.ratio_below names "
                                 f"{needs.ratio_below.step!r}, which is no ratio step of the "
                                 "drill (one with ratio_of)")
        still = needs.ratio_below.still
        if still is not None and (still not in ids or ids[still].kind != "numeric"):
            report.errors.append(f"{where}: requires.ratio_below.still names {still!r}, "
                                 "which is no numeric step of the drill")
        if (still is None) != (needs.ratio_below.still_words is None):
            report.errors.append(f"{where}: requires.ratio_below gives still and still_words "
                                 "together, or neither")
    if needs.tokenizer_of and not any(name.startswith("draft_") for name in drill.givens):
        report.errors.append(f"{where}: requires.tokenizer_of is for a drill with a draft "
                             "model (draft_params in its givens)")


ANCHOR_LEVELS = ("junior", "mid", "senior", "buzzwords")


def anchor_score(drill: Drill, rubric: Rubric, step_id: str, text: str) -> Fraction:
    """What a text answer scores on its own: the rubric's concept dimensions, summed, for a
    sheet that holds only this answer (as `kvdrill grade --json` reports it)."""
    key = AnswerKey(drill)
    marks = mark_sheet(key, {step_id: text})
    score = score_attempt(drill, rubric, marks, moe=key.base.experts is not None)
    return sum((d.score for d in score.dimensions if d.id != "arithmetic"), Fraction(0))


def _lint_anchors(drill: Drill, rubric: Rubric, where: str, report: Report) -> None:
    """Every text step carries anchor answers, and the scorer ranks them junior < mid <
    senior with the bare list of terms below mid and the fluent wrong answer at or below the
    junior one: a rubric whose phrases miss what a plain mid answer says, that pays for a word
    list or for confident wrong reasoning, fails here, not in front of a candidate."""
    for step in drill.steps:
        if step.kind != "text":
            continue
        at = f"{where}: step {step.id}"
        if step.anchors is None:
            report.errors.append(f"{at}: no anchor answers: add `anchors:` with a junior, a "
                                 "mid and a senior answer, a bare list of buzzwords and a "
                                 "fluent wrong answer")
            continue
        scores = {level: anchor_score(drill, rubric, step.id, step.anchors[level])
                  for level in ANCHOR_LEVELS}
        shown = ", ".join(f"{level} {float(scores[level]):g}" for level in ANCHOR_LEVELS)
        if not scores["junior"] < scores["mid"] < scores["senior"]:
            report.errors.append(f"{at}: the rubric does not rank its anchors junior < mid < "
                                 f"senior ({shown}): widen the concepts' phrases to what the "
                                 "mid answer says, or the anchors to what each level says")
        elif not scores["buzzwords"] < scores["mid"]:
            report.errors.append(f"{at}: a bare list of terms scores as high as the mid "
                                 f"answer ({shown}): make the concepts need their reasoning")
        _lint_wrong_claims(drill, rubric, step, at, scores["junior"], report)


def _lint_wrong_claims(drill: Drill, rubric: Rubric, step: Step, at: str, junior: Fraction,
                       report: Report) -> None:
    """A text step lists the wrong claims an interviewer would flag and a fluent wrong answer
    that makes one: the claims are found in it, in none of the right anchors or the model
    answer, and it scores at most the junior answer."""
    anchors = step.anchors or {}
    wrong = anchors.get("wrong")
    if not step.wrong_claims:
        report.errors.append(f"{at}: no wrong claims: list under `wrong_claims:` what an "
                             "interviewer would flag here (the seeds' red flags, the drill's "
                             "wrong paths), each as parts said together")
    if not wrong:
        report.errors.append(f"{at}: no wrong anchor: add `anchors: wrong:` with a fluent "
                             "answer that makes one of the step's wrong claims")
    seen: set[str] = set()
    for claim in step.wrong_claims:
        if claim.id in seen:
            report.errors.append(f"{at}: wrong claim {claim.id!r} is listed twice")
        seen.add(claim.id)
        for concept_id in claim.contradicts:
            if concept_id not in step.concepts:
                report.errors.append(f"{at}: wrong claim {claim.id!r} contradicts "
                                     f"{concept_id!r}, which is not one of the step's concepts")
        for part in claim.parts:
            for phrase in part:
                if not phrase_words(phrase):
                    report.errors.append(f"{at}: wrong claim {claim.id!r}: phrase {phrase!r} "
                                         "has no words to match")
    right = {level: anchors.get(level) for level in ("junior", "mid", "senior")}
    right["model answer"] = step.model_answer
    moe = AnswerKey(drill).base.experts is not None
    for name, text in right.items():
        for made in claims_made(step, text or ""):
            if (made.claim.dense_target_only if moe else made.claim.moe_target_only):
                continue  # a claim of the other kind of model: not wrong of this drill's
            report.errors.append(f"{at}: the {name} makes the wrong claim {made.claim.id!r}: "
                                 "narrow its parts to what only a wrong answer says")
    if wrong and step.wrong_claims:
        if not claims_made(step, wrong):
            report.errors.append(f"{at}: the wrong anchor makes none of the step's wrong "
                                 "claims: widen a claim's phrases to how it is said")
        score = anchor_score(drill, rubric, step.id, wrong)
        if score > junior:
            report.errors.append(f"{at}: the wrong anchor scores {float(score):g}, above the "
                                 f"junior answer's {float(junior):g}: a wrong claim must cost")


def _lint_steps(drill: Drill, rubric: Rubric, where: str, report: Report) -> None:
    seen: dict[str, dict[str, object]] = {}
    allowed = set(AnswerKey.PLACEHOLDERS)
    texts = [drill.title, drill.situation]
    for step in drill.steps:
        texts += [step.prompt, *step.hints, step.formula or ""]
    for text in texts:
        for name in placeholders(text) - allowed:
            report.errors.append(f"{where}: unknown placeholder {{{{ {name} }}}}")
        for bad in malformed_placeholders(text):
            shown = bad if len(bad) <= 40 else bad[:39] + "…"
            report.errors.append(f"{where}: {shown!r} is not a placeholder: prompts take only "
                                 "{{ name }}, no expressions or tags")
    for step in drill.steps:
        at = f"{where}: step {step.id}"
        for path_id in step.misconceptions:
            if path_id not in WRONG_PATHS:
                report.errors.append(f"{at}: unknown misconception {path_id!r}")
        for concept in step.concepts:
            if rubric.concept(concept) is None:
                report.errors.append(f"{at}: concept {concept!r} is not in rubric {rubric.id}")
        for key in step.with_:
            if key not in ("model", "gpu", *ALL_INPUTS):
                report.errors.append(f"{at}: 'with' changes {key!r}, which is not an input")
        for earlier in (*step.depends_on, *(step.ratio_of or ())):
            if earlier not in seen:
                report.errors.append(f"{at}: depends on {earlier!r}, which is not an earlier "
                                     "step")
            elif step.depends_on and earlier in step.depends_on \
                    and seen[earlier] != dict(step.with_) \
                    and not _derives_from(step, drill.step(earlier), seen[earlier]):
                report.errors.append(f"{at}: depends on {earlier!r}, whose 'with' differs")
        if step.kind == "numeric":
            _lint_unit(step.answer, step.unit, step.ratio_of is not None, at, report)
            _lint_skill(step.skill, step.answer, at, report)
        seen[step.id] = dict(step.with_)


def _derives_from(step: Step, earlier: Step, earlier_with: dict[str, object]) -> bool:
    """Whether the step works a given out of the earlier step's quantity in the drill's own
    setting ("twice your step 3a batch": batch of max_concurrency × 2)."""
    return not earlier_with and any(isinstance(value, Derived) and value.of == earlier.answer
                                    for value in step.with_.values())


def _lint_skill(skill: str | None, answer: str | None, at: str, report: Report) -> None:
    """Every numeric step names the one skill it exercises, from trainer/drills/skills.py."""
    under = "`answer:`" if answer is not None else "`ratio_of:`"
    if skill is None:
        report.errors.append(
            f"{at}: no skill: add the line `skill: {suggested_skill(answer)}` "
            f"under its {under} (the skills are listed in trainer/drills/skills.py)")
    elif skill not in SKILLS:
        report.errors.append(f"{at}: unknown skill {skill!r}: use one of {', '.join(SKILLS)} "
                             f"(e.g. `skill: {suggested_skill(answer)}`)")


def _lint_unit(answer: str | None, unit: str | None, is_ratio: bool, at: str,
               report: Report) -> None:
    if answer is not None and answer not in FORMULAS and answer not in INPUT_ANSWERS:
        report.errors.append(f"{at}: unknown quantity {answer!r}")
        return
    try:
        step_dim = dim_of_unit(unit)
        wanted = Dim() if is_ratio else dim_of_unit(quantity_unit(answer or ""))
    except (AnswerParseError, KeyError) as error:
        report.errors.append(f"{at}: unit {unit!r}: {error}")
        return
    if step_dim != wanted:
        report.errors.append(f"{at}: unit {unit!r} does not measure {answer or 'a ratio'}")


def path_of(where: str) -> str:
    return where.split(": drill", 1)[0]


MOE_CHECKED = "qwen3-30b-a3b"  # the MoE a drill is re-targeted at to find MoE-only mistakes


def _named_on_an_moe(drill: Drill, named: dict[str, set[str]]) -> None:
    from trainer.drills.variants import answer_key, make_target

    try:
        key = answer_key(drill, None, make_target(find_model(MOE_CHECKED), None))
        for step in drill.steps:
            if step.kind == "numeric" and step.id in named:
                named[step.id].update(path for path, _ in key.reference(step.id).wrong)
    except (KvdrillError, ZeroDivisionError):
        return  # (a drill that refuses the MoE has no MoE-only mistake to show)


def _lint_values(drill: Drill, where: str, report: Report) -> None:
    from trainer.drills.variants import draw

    keys = [("givens", AnswerKey(drill))]
    named: dict[str, set[str]] = {}  # step id -> mistakes that show at the givens or a variant
    if drill.vary:
        for seed in VARIANT_SEEDS_CHECKED:
            try:
                keys.append((f"variant {seed}", AnswerKey(drill, draw(drill, seed))))
            except KvdrillError as error:
                report.errors.append(f"{where}: variant {seed}: {error}")
    for index, (label, key) in enumerate(keys):
        try:
            solve(key.base)
        except KvdrillError as error:
            report.errors.append(f"{path_of(where)}: {label}: {error}")
            continue
        for step in drill.steps:
            if step.kind != "numeric":
                continue
            try:
                reference = key.reference(step.id)
            except (KvdrillError, ZeroDivisionError) as error:
                report.errors.append(f"{where}: {label}: step {step.id}: {error}")
                continue
            tolerance = tolerance_of(step)
            for listed in step.misconceptions:
                inside = [v for path, v in reference.wrong if path == listed
                          and v != reference.value and close(v, reference.value, tolerance)]
                if inside:
                    shown = show(inside[0], reference.unit)
                    report.errors.append(
                        f"{where}: {label}: step {step.id}: its listed mistake {listed!r} gives "
                        f"{shown}, inside the step's ±{float(tolerance) * 100:g}% of "
                        f"{reference.display}, so it can never be named: tighten the "
                        "tolerance, change the question or drop the mistake")
            named.setdefault(step.id, set()).update(path for path, _ in reference.wrong)
        if index >= SOLUTIONS_RENDERED:
            continue
        try:
            text = render_solution(key)
        except KvdrillError as error:
            report.errors.append(f"{path_of(where)}: {label}: {error}")
            continue
        if not any(ch.isdigit() for ch in text):
            report.errors.append(f"{where}: {label}: the solution renders without a number")
    # A mistake may apply only to some variants (a sliding window only on a windowed model),
    # or only to a model the drill is re-targeted at (an MoE target's verification): it is
    # dead only where no key checked shows it, nor the drill re-targeted at an MoE.
    if any(set(step.misconceptions) - named.get(step.id, set()) for step in drill.steps
           if step.kind == "numeric" and step.id in named):
        _named_on_an_moe(drill, named)
    for step in drill.steps:
        if step.kind != "numeric" or step.id not in named:
            continue
        for missing in sorted(set(step.misconceptions) - named[step.id]):
            report.warnings.append(
                f"{where}: step {step.id}: misconception {missing!r} gives the right value "
                "at the givens and every variant checked, so it can never be named")
