"""Jinja rendering: worked solutions filled from solver values, and the {{ given }}
placeholders of prompts. Templates run sandboxed with StrictUndefined (a misspelt name is an
error, not an empty string), and anything rendered as HTML is autoescaped."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment

from trainer.datadirs import data_dir
from trainer.errors import DrillFileError
from trainer.reference import AnswerKey, show
from trainer.solver import FORMULAS, derivation

_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


def fill(text: str, givens: dict[str, str]) -> str:
    """Replace each {{ name }} in a prompt by the given's display value; only plain names are
    allowed (no expressions), so a drill file cannot run template code."""

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in givens:
            raise DrillFileError(
                f"unknown placeholder {{{{ {name} }}}}: use one of {', '.join(sorted(givens))}"
            )
        return givens[name]

    return _PLACEHOLDER.sub(replace, text)


_TEMPLATE_SYNTAX = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", re.DOTALL)


def placeholders(text: str) -> set[str]:
    return set(_PLACEHOLDER.findall(text))


def malformed_placeholders(text: str) -> list[str]:
    """Template syntax that is not a plain {{ name }}: expressions, tags, comments."""
    return [m for m in _TEMPLATE_SYNTAX.findall(text) if not _PLACEHOLDER.fullmatch(m)]


@cache
def environment(folder: Path) -> ImmutableSandboxedEnvironment:
    return ImmutableSandboxedEnvironment(
        loader=jinja2.FileSystemLoader(str(folder)),
        undefined=jinja2.StrictUndefined,
        autoescape=jinja2.select_autoescape(enabled_extensions=("html", "html.j2"),
                                            default_for_string=False),
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def solution_context(key: AnswerKey) -> dict[str, Any]:
    givens = key.display_givens()

    def deployment_of(step_id: str | None) -> Any:
        return key.base if step_id is None else key.deployment(step_id)

    def given(name: str) -> str:
        if name not in givens:
            raise DrillFileError(f"unknown given {name!r} in a solution template")
        return givens[name]

    def answer(step_id: str) -> str:
        return key.reference(step_id).display

    def quantity(name: str, step_id: str | None = None) -> str:
        if name not in FORMULAS:
            raise DrillFileError(f"unknown quantity {name!r} in a solution template")
        return show(key.value(name, deployment_of(step_id)), FORMULAS[name].unit)

    derivations: dict[str | None, dict[str, str]] = {}

    def working(name: str, step_id: str | None = None) -> str:
        if step_id not in derivations:
            derivations[step_id] = {s.name: s.working
                                    for s in derivation(deployment_of(step_id))}
        if name not in derivations[step_id]:
            raise DrillFileError(f"no working for {name!r} in a solution template")
        return derivations[step_id][name]

    def wrong(step_id: str, misconception: str) -> str:
        reference = key.reference(step_id)
        for path, value in reference.wrong:
            if path == misconception:
                return show(value, reference.unit)
        return ""

    return {"drill": key.drill, "given": given, "answer": answer, "quantity": quantity,
            "working": working, "wrong": wrong}


def render_solution(key: AnswerKey) -> str:
    folder = data_dir("solutions")
    name = key.drill.solution
    try:
        template = environment(folder).get_template(name)
        return template.render(solution_context(key))
    except jinja2.TemplateNotFound:
        raise DrillFileError(
            f"drill {key.drill.id}: solution template {name!r} not found in {folder}"
        ) from None
    except jinja2.TemplateSyntaxError as error:
        raise DrillFileError(f"{folder / name}:{error.lineno}: {error.message}") from None
    except (jinja2.UndefinedError, jinja2.exceptions.SecurityError) as error:
        raise DrillFileError(f"{folder / name}: {error}") from None
