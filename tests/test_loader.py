"""Drill files in, model objects or a one-line error out: hostile files are refused quickly,
schema errors name file:line and the field, `kvdrill lint` catches every broken
cross-reference, and `kvdrill schema` exports the format."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import Result

from trainer.drills.loader import load_drill_file
from trainer.errors import DrillFileError

DRILLS = Path(__file__).resolve().parent.parent / "drills"
SEED = DRILLS / "llama2-70b-mi300x.yaml"

# ---- helpers --------------------------------------------------------------------------------


def seed_text() -> str:
    return SEED.read_text(encoding="utf-8")


def seed_data() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(seed_text())
    return copy.deepcopy(data)


def write(tmp_path: Path, content: str | bytes, name: str = SEED.name) -> Path:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def dump(data: Any) -> str:
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


def line_of(text: str, needle: str) -> int:
    """1-based number of the first line of `text` that contains `needle`."""
    for number, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not in the text")


def refused(path: Path) -> str:
    """Load `path`, expecting a DrillFileError that names the file; its message. (How long a
    refusal takes is bounded by the loader's own limits on size, depth and aliases, tested
    with hostile files; a clock here would only measure how busy the machine is.)"""
    with pytest.raises(DrillFileError) as caught:
        load_drill_file(path)
    message = str(caught.value)
    assert message.startswith(str(path)), message
    assert "\n" not in message
    return message


def lint_errors(path: Path) -> list[str]:
    from trainer.marking.lint import lint_paths

    reports = lint_paths([path])
    assert [r.path for r in reports] == [path]
    return reports[0].errors


def only_error(path: Path) -> str:
    errors = lint_errors(path)
    assert len(errors) == 1, errors
    assert errors[0].startswith(str(path)), errors[0]
    return errors[0]


# ---- 1. hostile files -----------------------------------------------------------------------


def test_a_python_tag_is_refused_without_running_it(tmp_path: Path) -> None:
    pwned = tmp_path / "pwned"
    text = seed_text().replace(
        "\ntitle: ", f'\nsituation2: !!python/object/apply:os.system ["touch {pwned}"]\ntitle: ',
        1,
    )
    path = write(tmp_path, text)
    message = refused(path)
    assert f"{path}:{line_of(text, '!!python/object')}:" in message
    assert "tags" in message
    assert not pwned.exists()


def test_a_billion_laughs_alias_bomb_is_refused(tmp_path: Path) -> None:
    bomb = ['lol0: &lol0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for level in range(1, 10):
        aliases = ", ".join([f"*lol{level - 1}"] * 9)
        bomb.append(f"lol{level}: &lol{level} [{aliases}]")
    text = seed_text() + "\n".join(bomb) + "\n"
    path = write(tmp_path, text)
    message = refused(path)
    assert f"{path}:{line_of(text, '&lol0')}:" in message
    assert "anchors and aliases" in message


def test_ten_thousand_nested_flow_lists_are_refused(tmp_path: Path) -> None:
    text = re.sub(r"(?m)^tags: .*$", "tags: " + "[" * 10_000 + "]" * 10_000, seed_text(),
                  count=1)
    path = write(tmp_path, text)
    message = refused(path)
    assert f"{path}:{line_of(text, 'tags: [[[')}:" in message
    assert "nested more than" in message


def test_binary_content_with_nul_bytes_is_refused(tmp_path: Path) -> None:
    raw = seed_text().encode()
    path = write(tmp_path, raw[:200] + b"\x00\x00\x00" + raw[200:])
    message = refused(path)
    assert "NUL bytes" in message


def test_invalid_utf8_is_refused_with_its_byte_offset(tmp_path: Path) -> None:
    raw = seed_text().encode()
    offset = raw.index(b"title:") + len(b"title: ")
    path = write(tmp_path, raw[:offset] + b"\xff\xfe" + raw[offset:])
    message = refused(path)
    assert "not UTF-8" in message
    assert f"byte {offset}" in message


def test_a_100_mb_file_is_refused_without_being_read(tmp_path: Path) -> None:
    path = tmp_path / SEED.name
    with path.open("wb") as handle:
        handle.write(seed_text().encode())
        handle.seek(100 * 1024 * 1024)
        handle.write(b"\n")
    message = refused(path)
    assert "too large" in message
    assert f"{path.stat().st_size:,} bytes" in message


def test_an_empty_file_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "")
    message = refused(path)
    assert f"{path}:1:" in message
    assert "expected a mapping" in message


def test_a_top_level_list_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, dump([seed_data()]))
    message = refused(path)
    assert f"{path}:1:" in message
    assert "expected a mapping" in message


# ---- 2. schema errors -----------------------------------------------------------------------


def test_an_unknown_key_in_a_step_names_the_step_and_its_line(tmp_path: Path) -> None:
    text = seed_text().replace(
        "    answer: kv_width\n    skill: model-shape\n    with: {kv_heads: heads}\n",
        "    answer: kv_width\n    skill: model-shape\n    colour: red\n"
        "    with: {kv_heads: heads}\n",
        1,
    )
    assert "colour: red" in text
    path = write(tmp_path, text)
    message = refused(path)
    assert message.startswith(f"{path}:{line_of(text, 'colour: red')}: ")
    assert "steps[2: 2a-dkv].colour" in message
    assert "unknown field" in message


def test_a_wrong_type_names_the_field_and_its_line(tmp_path: Path) -> None:
    text = re.sub(r"^target_minutes: \d+$", 'target_minutes: "ten"', seed_text(), count=1,
                  flags=re.M)
    path = write(tmp_path, text)
    message = refused(path)
    assert message.startswith(f"{path}:{line_of(text, 'target_minutes:')}: target_minutes: ")
    assert "integer" in message


def test_a_missing_required_field_is_named(tmp_path: Path) -> None:
    data = seed_data()
    del data["title"]
    path = write(tmp_path, dump(data))
    message = refused(path)
    assert message.startswith(f"{path}:1: title: ")
    assert "required field is missing" in message


def test_a_step_id_used_twice_is_refused(tmp_path: Path) -> None:
    data = seed_data()
    data["steps"][5]["id"] = data["steps"][2]["id"]
    path = write(tmp_path, dump(data))
    message = refused(path)
    assert re.match(rf"{re.escape(str(path))}:\d+: ", message), message
    assert "'2a-dkv' is used twice" in message


def test_a_step_id_used_twice_points_at_the_second_use(tmp_path: Path) -> None:
    data = seed_data()
    data["steps"][5]["id"] = data["steps"][2]["id"]
    text = dump(data)
    path = write(tmp_path, text)
    message = refused(path)
    second = [n for n, line in enumerate(text.splitlines(), 1) if line == "- id: 2a-dkv"][1]
    assert message.startswith(f"{path}:{second}: steps[5: 2a-dkv]"), message


def test_a_tolerance_that_is_not_a_number_names_the_step(tmp_path: Path) -> None:
    text = seed_text().replace("tolerance: 1%", "tolerance: abc", 1)
    path = write(tmp_path, text)
    message = refused(path)
    assert message.startswith(f"{path}:{line_of(text, 'tolerance: abc')}: ")
    assert "steps[0: 1a].tolerance" in message
    assert "'abc'" in message


def test_a_numeric_step_needs_an_answer_or_a_ratio(tmp_path: Path) -> None:
    data = seed_data()
    del data["steps"][0]["answer"]
    text = dump(data)
    path = write(tmp_path, text)
    message = refused(path)
    assert message.startswith(f"{path}:{line_of(text, '- id: 1a')}: steps[0: 1a]: ")
    assert "exactly one of `answer` or `ratio_of`" in message


# ---- 3. cross-references (kvdrill lint) -----------------------------------------------------


def test_the_shipped_drill_copied_lints_clean(tmp_path: Path) -> None:
    assert lint_errors(write(tmp_path, dump(seed_data()))) == []


def test_lint_names_an_unknown_solver_quantity(tmp_path: Path) -> None:
    data = seed_data()
    data["steps"][0]["answer"] = "kv_budget_byts"
    error = only_error(write(tmp_path, dump(data)))
    assert "step 1a: unknown quantity 'kv_budget_byts'" in error


def test_lint_names_an_unknown_misconception(tmp_path: Path) -> None:
    data = seed_data()
    data["steps"][0]["misconceptions"].append("forgot-everything")
    error = only_error(write(tmp_path, dump(data)))
    assert "step 1a: unknown misconception 'forgot-everything'" in error


def test_lint_names_an_unknown_rubric(tmp_path: Path) -> None:
    data = seed_data()
    data["rubric"] = "no-such-rubric"
    error = only_error(write(tmp_path, dump(data)))
    assert "unknown rubric 'no-such-rubric'" in error
    assert "kv-capacity" in error


def test_lint_refuses_a_dependency_on_a_later_step(tmp_path: Path) -> None:
    data = seed_data()
    data["steps"][0]["depends_on"] = ["2b-max-sequences"]
    error = only_error(write(tmp_path, dump(data)))
    assert "step 1a: depends on '2b-max-sequences', which is not an earlier step" in error


def test_lint_names_an_unknown_placeholder(tmp_path: Path) -> None:
    data = seed_data()
    data["steps"][0]["prompt"] += " Assume {{ hbm_tb }} TB of HBM."
    error = only_error(write(tmp_path, dump(data)))
    assert "unknown placeholder {{ hbm_tb }}" in error


def test_lint_refuses_a_unit_that_does_not_measure_the_quantity(tmp_path: Path) -> None:
    data = seed_data()
    data["steps"][0]["unit"] = "ms"
    error = only_error(write(tmp_path, dump(data)))
    assert "step 1a: unit 'ms' does not measure kv_budget_bytes" in error


def test_lint_refuses_an_id_that_does_not_match_the_file_name(tmp_path: Path) -> None:
    path = write(tmp_path, dump(seed_data()), name="other-name.yaml")
    error = only_error(path)
    assert "drill llama2-70b-mi300x: id must match the file name 'other-name'" in error


def test_lint_refuses_givens_whose_weights_do_not_fit(tmp_path: Path) -> None:
    data = seed_data()
    data["givens"]["gpu"] = "l4"
    errors = lint_errors(write(tmp_path, dump(data)))
    assert errors, "a drill whose weights overflow the GPU linted clean"
    assert any("fit" in error for error in errors), errors


# ---- 4. kvdrill lint ------------------------------------------------------------------------


def test_cli_lint_passes_on_the_shipped_files(run: Callable[..., Result]) -> None:
    result = run("lint", ok=False)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert len(lines) >= 3  # two drills and a rubric
    assert all(line.startswith("ok") for line in lines), result.stdout


def _unknown_field(text: str) -> str:
    return text.replace("\ntitle: ", "\ncolour: red\ntitle: ", 1)


def _python_tag(text: str) -> str:
    return text.replace("\ntitle: ", '\nx: !!python/object/apply:os.system ["true"]\ntitle: ', 1)


def _unknown_quantity(text: str) -> str:
    return text.replace("answer: kv_budget_bytes", "answer: kv_budget_byts", 1)


@pytest.mark.parametrize("breakage", [_unknown_field, _python_tag, _unknown_quantity])
def test_cli_lint_fails_a_broken_file_without_a_traceback(
    run: Callable[..., Result], tmp_path: Path, breakage: Callable[[str], str]
) -> None:
    path = write(tmp_path, breakage(seed_text()))
    result = run("lint", str(path), ok=False)
    assert result.exit_code == 1, result.output
    assert f"FAIL {path}" in result.stdout
    assert "  error: " in result.stdout
    assert "Traceback" not in result.output


def test_cli_lint_of_a_missing_path_is_a_one_line_usage_error(
    run: Callable[..., Result], tmp_path: Path
) -> None:
    missing = tmp_path / "no-such-drill.yaml"
    result = run("lint", str(missing), ok=False)
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: ")
    assert result.stderr.count("\n") == 1, result.stderr
    assert str(missing) in result.stderr
    assert result.stdout == ""


# ---- 5. kvdrill schema ----------------------------------------------------------------------


def test_cli_schema_describes_drill_files(run: Callable[..., Result]) -> None:
    schema = json.loads(run("schema").stdout)
    assert {"id", "steps", "givens", "vary"} <= set(schema["properties"])


def test_cli_schema_rubric_describes_rubric_files(run: Callable[..., Result]) -> None:
    schema = json.loads(run("schema", "--rubric").stdout)
    assert "dimensions" in schema["properties"]
