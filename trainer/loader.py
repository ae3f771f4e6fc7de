"""Drill and rubric files → model objects. YAML is read with yaml.safe_load only, after a
token scan that refuses anchors and aliases (alias bombs), deep nesting, binary and huge files;
every error names the file, the line and the field."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from trainer.datadirs import data_dir, drill_paths
from trainer.errors import DrillFileError, UnknownName
from trainer.model import Drill, Rubric

MAX_FILE_BYTES = 256 * 1024
MAX_DEPTH = 12

Model = TypeVar("Model", bound=BaseModel)


def read_yaml(path: Path) -> tuple[Any, str]:
    """The data of a YAML file and its text, refusing hostile files before anything is
    constructed."""
    try:
        size = path.stat().st_size
    except OSError as error:
        raise DrillFileError(f"{path}: cannot read: {error.strerror}") from None
    if size > MAX_FILE_BYTES:
        raise DrillFileError(
            f"{path}: {size:,} bytes is too large for a drill file (at most {MAX_FILE_BYTES:,})"
        )
    raw = path.read_bytes()
    if b"\0" in raw:
        raise DrillFileError(f"{path}: binary data (NUL bytes): a drill file is UTF-8 YAML text")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise DrillFileError(
            f"{path}: not UTF-8 text (byte {error.start}): save the file as UTF-8"
        ) from None
    _screen_tokens(path, text)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise DrillFileError(f"{path}{where}: invalid YAML: {problem}") from None
    return data, text


def _screen_tokens(path: Path, text: str) -> None:
    depth = 0
    try:
        for token in yaml.scan(text, Loader=yaml.SafeLoader):
            if isinstance(token, yaml.AliasToken | yaml.AnchorToken):
                line = token.start_mark.line + 1
                raise DrillFileError(
                    f"{path}:{line}: YAML anchors and aliases (&, *) are not allowed in "
                    "drill files: write the value out"
                )
            if isinstance(token, yaml.TagToken):
                line = token.start_mark.line + 1
                raise DrillFileError(
                    f"{path}:{line}: YAML tags (!!python/..., !tag) are not allowed: "
                    "drill files hold plain data"
                )
            if isinstance(token, yaml.BlockMappingStartToken | yaml.BlockSequenceStartToken
                          | yaml.FlowMappingStartToken | yaml.FlowSequenceStartToken):
                depth += 1
                if depth > MAX_DEPTH:
                    line = token.start_mark.line + 1
                    raise DrillFileError(
                        f"{path}:{line}: nested more than {MAX_DEPTH} levels deep: "
                        "a drill file is shallow"
                    )
            elif isinstance(token, yaml.BlockEndToken | yaml.FlowMappingEndToken
                            | yaml.FlowSequenceEndToken):
                depth -= 1
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(error, "problem", None) or "cannot be parsed"
        raise DrillFileError(f"{path}{where}: invalid YAML: {problem}") from None


def _line_of(node: yaml.Node | None, loc: tuple[int | str, ...]) -> int | None:
    """The line of the deepest node on the path `loc` (pydantic's error location)."""
    line = None if node is None else node.start_mark.line + 1
    for key in loc:
        if isinstance(node, yaml.MappingNode):
            match = next((v for k, v in node.value if getattr(k, "value", None) == key), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) \
                and key < len(node.value):
            match = node.value[key]
        else:
            match = None
        if match is None:
            break
        node = match
        line = node.start_mark.line + 1
    return line


def _field_name(loc: tuple[int | str, ...], data: Any) -> str:
    parts: list[str] = []
    cursor = data
    for key in loc:
        if isinstance(key, int):
            step_id = cursor[key].get("id") if isinstance(cursor, list) and key < len(cursor) \
                and isinstance(cursor[key], dict) else None
            parts.append(f"[{key}]" if step_id is None else f"[{key}: {step_id}]")
        elif isinstance(cursor, dict) and key in cursor:
            parts.append(f".{key}" if parts else str(key))
        else:
            if key in ("function-after", "function-before", "function-plain"):
                continue
            parts.append(f".{key}" if parts else str(key))
        if isinstance(cursor, dict | list):
            try:
                cursor = cursor[key]  # type: ignore[index]
            except (KeyError, IndexError, TypeError):
                cursor = None
    return "".join(parts) or "(top level)"


def validate(path: Path, model: type[Model]) -> Model:
    data, text = read_yaml(path)
    if not isinstance(data, dict):
        raise DrillFileError(f"{path}:1: expected a mapping of fields (id: ..., title: ...)")
    _refuse_duplicate_steps(path, data, text)
    try:
        return model.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        loc = tuple(first["loc"])
        line = _line_of(yaml.compose(text, Loader=yaml.SafeLoader), loc)
        where = f"{path}:{line}" if line else str(path)
        message = first["msg"].removeprefix("Value error, ")
        if first["type"] == "extra_forbidden":
            message = "unknown field: remove it or check its spelling (kvdrill schema)"
        elif first["type"] == "missing":
            message = "required field is missing"
        more = f" (+{error.error_count() - 1} more)" if error.error_count() > 1 else ""
        raise DrillFileError(f"{where}: {_field_name(loc, data)}: {message}{more}") from None


def _refuse_duplicate_steps(path: Path, data: dict[str, Any], text: str) -> None:
    steps = data.get("steps")
    if not isinstance(steps, list):
        return
    seen: set[str] = set()
    for index, step in enumerate(steps):
        step_id = step.get("id") if isinstance(step, dict) else None
        if not isinstance(step_id, str):
            continue
        if step_id in seen:
            line = _line_of(yaml.compose(text, Loader=yaml.SafeLoader), ("steps", index, "id"))
            raise DrillFileError(
                f"{path}:{line}: steps[{index}: {step_id}].id: step id {step_id!r} is used "
                "twice: give each step its own id"
            )
        seen.add(step_id)


def load_rubric(rubric_id: str) -> Rubric:
    return _load_rubric_cached(str(data_dir("rubrics") / f"{rubric_id}.yaml"), rubric_id)


@cache
def _load_rubric_cached(path_text: str, rubric_id: str) -> Rubric:
    path = Path(path_text)
    if not path.is_file():
        known = ", ".join(p.stem for p in sorted(path.parent.glob("*.yaml")))
        raise UnknownName(f"unknown rubric {rubric_id!r}: known rubrics are {known}")
    rubric = validate(path, Rubric)
    if rubric.id != path.stem:
        raise DrillFileError(f"{path}:1: id {rubric.id!r} must match the file name {path.stem!r}")
    return rubric


_DRILLS: dict[tuple[str, int, int], Drill] = {}


def load_drill_file(path: Path) -> Drill:
    """A drill file, validated; parsed once per process while the file is unchanged (history,
    review and next re-mark many attempts of the same drill)."""
    try:
        stat = path.stat()
    except OSError as error:
        raise DrillFileError(f"{path}: cannot read: {error.strerror}") from None
    stamp = (str(path.resolve()), stat.st_mtime_ns, stat.st_size)
    if stamp not in _DRILLS:
        _DRILLS[stamp] = validate(path, Drill)
    return _DRILLS[stamp]


def find_drill(drill_id: str) -> tuple[Drill, Path]:
    """A shipped drill by id (or a path to a drill file)."""
    candidate = Path(drill_id)
    if candidate.suffix in (".yaml", ".yml") and candidate.is_file():
        return load_drill_file(candidate), candidate
    path = data_dir("drills") / f"{drill_id}.yaml"
    if not path.is_file() or "/" in drill_id or drill_id.startswith("."):
        import difflib

        known = [p.stem for p in drill_paths()]
        near = difflib.get_close_matches(drill_id, known, n=3, cutoff=0.4)
        hint = f"did you mean {', '.join(near)}?" if near else "see kvdrill list"
        raise UnknownName(f"unknown drill {drill_id!r}: {hint}")
    return load_drill_file(path), path
