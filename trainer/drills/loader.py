"""Drill and rubric files → model objects. YAML is read with yaml.safe_load only, after a
token scan that refuses anchors and aliases (alias bombs), deep nesting, binary and huge files;
then validated against the schema (schema.py); every error names the file, the line and the
field. A file's validated data is kept by the hash of its text and of the schema, so a file
read before is made into objects (model.py) without YAML or pydantic."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from trainer.drills.model import Drill, Rubric
from trainer.errors import DrillFileError, KvdrillError, UnknownName
from trainer.files.bounded_io import MAX_DRILL_FILE_BYTES, article, read_text_bounded
from trainer.files.paths import data_dir, drill_path, drill_paths, package_digest

if TYPE_CHECKING:
    import yaml  # at run time imported where YAML is read: a kept parse needs none

MAX_FILE_BYTES = MAX_DRILL_FILE_BYTES
MAX_DEPTH = 12
MAX_DIGITS = 4000  # a run of digits in one plain scalar (Python refuses int() past 4,300)
_LONG_DIGITS = re.compile(rf"\d{{{MAX_DIGITS + 1}}}")

Model = TypeVar("Model", Drill, Rubric)


def yaml_text(path: Path, what: str = "drill file",
              error: type[KvdrillError] = DrillFileError) -> str:
    """The text of a YAML file, refusing a file that is not a regular one, over MAX_FILE_BYTES
    (counted as read), binary or not UTF-8. `what` names the file in messages ("answer
    sheet"); `error` is raised (its exit code: 1 or 2)."""
    text = read_text_bounded(path, MAX_FILE_BYTES, what, error)
    if "\0" in text:
        raise error(f"{path}: binary data (NUL bytes): {article(what)} is UTF-8 YAML text")
    return text


def _fix(says: str) -> str:
    """The usual cause of a YAML error, and its fix: a colon inside an answer or a text."""
    if "mapping values are not allowed" in says:
        return ('; a value with ": " in it must be quoted (1b: "KV bytes: 2 x 80 x 8"), or '
                "written as a block (1b: |, then the text indented on the lines below)")
    return ""


def parse_yaml(path: Path, text: str, what: str = "drill file",
               error: type[KvdrillError] = DrillFileError) -> Any:
    """The data of `text` (read from `path` by yaml_text), refusing hostile text before anything
    is constructed: tags, anchors and aliases, deep nesting, a key given twice in one mapping."""
    import yaml

    _screen_tokens(path, text, what, error)
    _refuse_duplicate_keys(path, text, what, error)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as problem:
        mark = getattr(problem, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        says = getattr(problem, "problem", None) or str(problem).splitlines()[0]
        raise error(f"{path}{where}: invalid YAML in the {what}: {says}{_fix(says)}") from None
    except ValueError:  # int() of a number with thousands of digits
        raise error(f"{path}: a number with more than {MAX_DIGITS:,} digits: "
                    f"{article(what)} holds figures of sensible size") from None
    return data


def screening_loader() -> Any:
    """The loader that scans and composes (never constructs) a file for the screens below:
    libyaml's, where PyYAML was built with it (eight times the pure-Python scanner's speed),
    else PyYAML's own. Objects are only ever made by yaml.safe_load."""
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _screen_tokens(path: Path, text: str, what: str = "drill file",
                   error: type[KvdrillError] = DrillFileError) -> None:
    import yaml

    depth = 0
    try:
        for token in yaml.scan(text, Loader=screening_loader()):
            if isinstance(token, yaml.AliasToken | yaml.AnchorToken):
                line = token.start_mark.line + 1
                raise error(
                    f"{path}:{line}: YAML anchors and aliases (&, *) are not allowed in "
                    f"{article(what)}: write the value out"
                )
            if isinstance(token, yaml.TagToken):
                line = token.start_mark.line + 1
                raise error(
                    f"{path}:{line}: YAML tags (!!python/..., !tag) are not allowed: "
                    f"{article(what)} holds plain data"
                )
            if isinstance(token, yaml.ScalarToken) and token.plain \
                    and _LONG_DIGITS.search(token.value):
                line = token.start_mark.line + 1
                raise error(f"{path}:{line}: a number with more than {MAX_DIGITS:,} digits: "
                            f"{article(what)} holds figures of sensible size")
            if isinstance(token, yaml.BlockMappingStartToken | yaml.BlockSequenceStartToken
                          | yaml.FlowMappingStartToken | yaml.FlowSequenceStartToken):
                depth += 1
                if depth > MAX_DEPTH:
                    line = token.start_mark.line + 1
                    raise error(
                        f"{path}:{line}: nested more than {MAX_DEPTH} levels deep: "
                        f"{article(what)} is shallow"
                    )
            elif isinstance(token, yaml.BlockEndToken | yaml.FlowMappingEndToken
                            | yaml.FlowSequenceEndToken):
                depth -= 1
    except yaml.YAMLError as problem:
        mark = getattr(problem, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        says = getattr(problem, "problem", None) or "cannot be parsed"
        if "nesting depth" in says:  # libyaml stops at its own depth, before the screen's
            raise error(f"{path}{where}: nested more than {MAX_DEPTH} levels deep: "
                        f"{article(what)} is shallow") from None
        raise error(f"{path}{where}: invalid YAML in the {what}: {says}{_fix(says)}") from None


def _refuse_duplicate_keys(path: Path, text: str, what: str,
                           error: type[KvdrillError]) -> None:
    """A key given twice in one mapping (YAML would silently keep the last): refused, naming
    the key and both lines. Runs on the composed node tree (no object is constructed), after
    the token screen has refused aliases and deep nesting."""
    import yaml

    try:
        root = yaml.compose(text, Loader=screening_loader())
    except yaml.YAMLError:
        return  # safe_load reports it, with its line
    pending: list[yaml.Node] = [] if root is None else [root]
    while pending:
        node = pending.pop()
        if isinstance(node, yaml.MappingNode):
            seen: dict[str, int] = {}
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode):
                    line = key.start_mark.line + 1
                    if key.tag == "tag:yaml.org,2002:merge":
                        # "<<: {…}" sets keys no screen above sees, read as YAML 1.1 reads
                        # them (0x20 as 32): refused like anchors
                        raise error(f"{path}:{line}: a YAML merge key (<<) is not allowed in "
                                    f"{article(what)}: write each key out")
                    if key.value in seen:
                        thing = "step" if what == "answer sheet" and node is root else "key"
                        lines = f"line {line}" if seen[key.value] == line else \
                            f"lines {seen[key.value]} and {line}"
                        raise error(
                            f"{path}:{line}: {thing} {key.value!r} is given twice in the "
                            f"{what} ({lines}): keep one"
                        )
                    seen[key.value] = line
                pending += [key, value]
        elif isinstance(node, yaml.SequenceNode):
            pending += node.value


def _line_of(node: yaml.Node | None, loc: tuple[int | str, ...]) -> int | None:
    """The line of the deepest node on the path `loc` (pydantic's error location)."""
    import yaml

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
    """A drill or rubric file as the code uses it (model.Drill or model.Rubric)."""
    what = "rubric file" if model is Rubric else "drill file"
    data = _validated_data(path, what)
    try:
        return model.from_data(data)
    except (AttributeError, KeyError, TypeError, ValueError):
        # Kept data that no longer fits the model: validate the file afresh.
        return model.from_data(_validated_data(path, what, use_kept=False))


def _validated_data(path: Path, what: str, use_kept: bool = True) -> dict[str, Any]:
    """The file's data after validation against the schema, kept by the hash of its text and
    of the schema (parsed_cache), so a file validated once is neither parsed nor validated
    again, and pydantic is not even imported."""
    from trainer.files import parsed_cache

    text = read_text_bounded(path, MAX_FILE_BYTES, what, DrillFileError)
    if "\0" in text:
        raise DrillFileError(f"{path}: binary data (NUL bytes): {article(what)} is UTF-8 YAML "
                             "text")
    key = f"validated {what}\n{package_digest()}\n{text}"
    if use_kept:
        found, kept = parsed_cache.lookup(key)
        if found and isinstance(kept, dict):
            return kept
    data = parse_yaml(path, text, what, DrillFileError)
    if not isinstance(data, dict):
        raise DrillFileError(f"{path}:1: expected a mapping of fields (id: ..., title: ...)")
    _refuse_duplicate_steps(path, data, text)
    from pydantic import ValidationError

    from trainer.drills import schema

    file_model = schema.Rubric if what == "rubric file" else schema.Drill
    try:
        document = file_model.model_validate(data)
    except ValidationError as error:
        import yaml

        first = error.errors()[0]
        loc = tuple(first["loc"])
        message = first["msg"].removeprefix("Value error, ")
        loc, message = _refine(loc, message, data)
        line = _line_of(yaml.compose(text, Loader=yaml.SafeLoader), loc)
        where = f"{path}:{line}" if line else str(path)
        if first["type"] == "extra_forbidden":
            message = "unknown field: remove it or check its spelling (kvdrill schema)"
        elif first["type"] == "missing":
            message = "required field is missing"
        more = f" (+{error.error_count() - 1} more)" if error.error_count() > 1 else ""
        raise DrillFileError(f"{where}: {_field_name(loc, data)}: "
                             f"{message}{more}") from None
    validated = schema.validated_data(document)
    parsed_cache.keep(key, validated)
    return validated


def _refine(loc: tuple[int | str, ...], message: str,
            data: Any) -> tuple[tuple[int | str, ...], str]:
    """A validator of a whole mapping (givens, vary, with) names the entry at fault as
    "name: ..." (model.py); point the location at that entry, so the line is its own."""
    cursor = data
    for key in loc:
        try:
            cursor = cursor[key]
        except (KeyError, IndexError, TypeError):
            return loc, message
    name, colon, rest = message.partition(": ")
    if colon and isinstance(cursor, dict) and name in cursor:
        return (*loc, name), rest
    return loc, message


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
            import yaml

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
    """A shipped drill by id (or a path to a drill file, which must be a regular file)."""
    path = drill_path(drill_id)
    if path is None:
        import difflib

        known = [p.stem for p in drill_paths()]
        near = difflib.get_close_matches(drill_id[:100], known, n=3, cutoff=0.4)
        hint = f"did you mean {', '.join(near)}?" if near else "see kvdrill list"
        shown = drill_id if len(drill_id) <= 60 else drill_id[:59] + "…"
        raise UnknownName(f"unknown drill {shown!r}: {hint}")
    return load_drill_file(path), path
