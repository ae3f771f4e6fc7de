"""Every file a user names is read bounded and refused in one line when it is not what it should
be: FIFOs, devices and directories; oversized sheets; broken drill files (each reported, the
next one still checked); hostile solution templates (stopped by the sandbox); malformed or
tampered transcripts; answer sheets with a step given twice. Through the real CLI."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

Run = Callable[..., Result]

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(__file__).parent / "corpus" / "drills"
SEED = "llama31-8b-h100"


def one_line_error(result: Result, code: int) -> str:
    assert result.exit_code == code, result.output + result.stderr
    assert "Traceback" not in result.output + result.stderr
    assert "internal error" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe.yaml"
    os.mkfifo(path)
    return path


@pytest.fixture
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the shipped drills, rubrics and solutions, used through KVDRILL_DATA."""
    folder = tmp_path / "data"
    for kind in ("drills", "rubrics", "solutions"):
        shutil.copytree(ROOT / kind, folder / kind)
    monkeypatch.setenv("KVDRILL_DATA", str(folder))
    return folder


def exported(run: Run) -> dict[str, Any]:
    run("practice", SEED, input="32\n8\n128\n")
    payload: dict[str, Any] = json.loads(run("export", "1").output)
    return payload


def write_json(tmp_path: Path, payload: Any) -> Path:
    path = tmp_path / "transcript.json"
    path.write_text(json.dumps(payload), encoding="utf-8")
    return path


# ---- 3. unbounded reads ---------------------------------------------------------------------


def test_grade_refuses_dev_zero_as_an_answer_sheet(run: Run) -> None:
    line = one_line_error(run("grade", SEED, "--answers", "/dev/zero", ok=False), 2)
    assert "/dev/zero" in line and "character device" in line and "answer sheet" in line


def test_grade_refuses_a_fifo_answer_sheet_without_waiting_for_a_writer(run: Run,
                                                                          fifo: Path) -> None:
    line = one_line_error(run("grade", SEED, "--answers", str(fifo), ok=False), 2)
    assert str(fifo) in line and "FIFO" in line


def test_review_refuses_dev_zero_as_a_transcript(run: Run) -> None:
    line = one_line_error(run("review", "/dev/zero", ok=False), 2)
    assert "/dev/zero" in line and "transcript" in line


def test_review_refuses_a_fifo_transcript(run: Run, fifo: Path) -> None:
    line = one_line_error(run("review", str(fifo), ok=False), 2)
    assert str(fifo) in line and "FIFO" in line


def test_lint_refuses_dev_zero_and_a_fifo_and_still_checks_the_next_file(run: Run,
                                                                          fifo: Path) -> None:
    good = ROOT / "drills" / f"{SEED}.yaml"
    result = run("lint", "/dev/zero", str(fifo), str(good), ok=False)
    assert result.exit_code == 1
    assert "FAIL /dev/zero" in result.output and "character device" in result.output
    assert f"FAIL {fifo}" in result.output and "FIFO" in result.output
    assert f"ok   {good}" in result.output


def test_a_drill_path_that_is_a_fifo_is_refused_by_show(run: Run, fifo: Path) -> None:
    line = one_line_error(run("show", str(fifo), ok=False), 1)
    assert str(fifo) in line and "FIFO" in line and "drill file" in line


def test_a_drill_path_that_is_a_directory_is_refused_by_practice(run: Run,
                                                                 tmp_path: Path) -> None:
    folder = tmp_path / "mine.yaml"
    folder.mkdir()
    line = one_line_error(run("practice", str(folder), input="", ok=False), 1)
    assert str(folder) in line and "directory" in line


def test_a_file_that_understates_its_size_is_cut_at_the_cap(run: Run, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text("shape-layers: '" + "3" * 400_000 + "'\n", encoding="utf-8")
    real_fstat = os.fstat

    def lying_fstat(fd: int) -> os.stat_result:  # as /proc files do: st_size 0
        st = list(real_fstat(fd))
        st[6] = 0
        return os.stat_result(st)

    monkeypatch.setattr(os, "fstat", lying_fstat)
    line = one_line_error(run("grade", SEED, "--answers", str(sheet), ok=False), 2)
    assert "more than 262,144 bytes is too large for an answer sheet" in line


# ---- 8. drill files -------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "line", "field", "says"), [
    ("word-for-number", 7, "givens.reserve_gb", "'four' is not a number"),
    ("unit-in-number", 7, "givens.context", "'4k' is not a number"),
    ("string-in-vary", 9, "vary.context", "'four' is not a number"),
    ("empty-vary", 9, "vary.context", "empty"),
    ("yes-for-number", 7, "givens.context", "yes/no"),
    ("number-for-model", 7, "givens.model", "must be text"),
])
def test_a_wrong_value_in_a_drill_names_file_line_and_field(run: Run, name: str, line: int,
                                                            field: str, says: str) -> None:
    path = CORPUS / f"{name}.yaml"
    result = run("lint", str(path), ok=False)
    assert result.exit_code == 1
    assert f"error: {path}:{line}: {field}: " in result.output and says in result.output


def test_a_5000_digit_integer_in_a_drill_is_refused_with_its_line(run: Run) -> None:
    path = CORPUS / "huge-integer.yaml"
    result = run("lint", str(path), ok=False)
    assert f"{path}:7: a number with more than 4,000 digits" in result.output


def test_a_key_given_twice_in_a_drill_is_refused_with_both_lines(run: Run) -> None:
    path = CORPUS / "duplicate-key.yaml"
    result = run("lint", str(path), ok=False)
    assert "key 'title' is given twice in the drill file (lines 2 and 9)" in result.output


def test_lint_reports_every_broken_drill_and_goes_on(run: Run) -> None:
    broken = [CORPUS / f"{n}.yaml" for n in ("huge-integer", "word-for-number",
                                             "string-in-vary")]
    good = ROOT / "drills" / f"{SEED}.yaml"
    result = run("lint", *map(str, broken), str(good), ok=False)
    assert result.exit_code == 1
    for path in broken:
        assert f"FAIL {path}" in result.output
    assert f"ok   {good}" in result.output
    assert "internal error" not in result.output + result.stderr


@pytest.mark.parametrize("command", [
    ("show",), ("solution",), ("practice",), ("variants", "--json"), ("grade", "--answers"),
])
@pytest.mark.parametrize("name", ["word-for-number", "unit-in-number", "huge-integer"])
def test_every_command_given_a_broken_drill_fails_in_one_line(run: Run, command: tuple[str, ...],
                                                             name: str, tmp_path: Path) -> None:
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text("s1: 1\n", encoding="utf-8")
    args = [command[0], str(CORPUS / f"{name}.yaml"), *command[1:]]
    if command[0] == "grade":
        args.append(str(sheet))
    line = one_line_error(run(*args, input="", ok=False), 1)
    assert str(CORPUS / f"{name}.yaml") in line


HOSTILE_TEMPLATES = {
    "range-of-a-billion": "{% for i in range(10**9) %}x{% endfor %}",
    "nested-loops": "{% for i in range(10000) %}{% for j in range(10000) %}{% endfor %}"
                    "{% endfor %}",
    "huge-power": "{{ 9 ** 999999 }}",
    "power-tower-of-a-float": "{{ 2.5 ** 100000.0 }}",
    "recursive-macro": "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}",
    "exponential-macro": "{% macro f(n) %}{% if n %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}"
                         "{% endmacro %}{{ f(35) }}",
    "string-repetition": "{{ 'x' * 10**9 }}",
    "list-repetition": "{{ [1] * 10**8 }}",
    "format-width": "{{ '%999999999d' % 1 }}",
    "str-format-width": "{{ '{:999999999}'.format(1) }}",
    "center-filter": "{{ 'x' | center(999999999) }}",
    "namespace-doubling": "{% set ns = namespace(s='xxxxxxxxxx') %}{% for i in range(60) %}"
                          "{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s | length }}",
    "int-to-bytes": "{{ (10).to_bytes(10**9, 'big') }}",
    "drill-field-method": "{{ drill.budget_seconds.to_bytes(10**9, 'big') }}",
    "replace-amplifies": "{% set s = 'x' * 100000 %}{{ s.replace('x', s) }}",
}


@pytest.mark.parametrize("source", HOSTILE_TEMPLATES.values(), ids=HOSTILE_TEMPLATES.keys())
def test_a_hostile_solution_template_is_stopped_by_the_sandbox(run: Run, data: Path,
                                                               source: str) -> None:
    template = data / "solutions" / f"{SEED}.md.j2"
    template.write_text(source, encoding="utf-8")
    line = one_line_error(run("solution", SEED, ok=False), 1)
    assert line.startswith(f"Error: {template}: stopped by the sandbox: ")


def test_a_template_calling_what_a_drill_does_not_have_names_the_template(run: Run,
                                                                         data: Path) -> None:
    template = data / "solutions" / f"{SEED}.md.j2"
    template.write_text("{{ drill.model_dump_json(indent=1000000) }}", encoding="utf-8")
    line = one_line_error(run("solution", SEED, ok=False), 1)
    assert line.startswith(f"Error: {template}: ") and "model_dump_json" in line


def test_lint_reports_a_hostile_solution_template_against_its_drill(run: Run,
                                                                    data: Path) -> None:
    (data / "solutions" / f"{SEED}.md.j2").write_text(HOSTILE_TEMPLATES["recursive-macro"],
                                                       encoding="utf-8")
    result = run("lint", str(data / "drills" / f"{SEED}.yaml"), ok=False)
    assert result.exit_code == 1 and "stopped by the sandbox" in result.output


def test_a_solution_template_symlinked_out_of_the_folder_is_refused(run: Run, data: Path,
                                                                    tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.md.j2"
    outside.write_text("{{ given('context') }}\n", encoding="utf-8")
    template = data / "solutions" / f"{SEED}.md.j2"
    template.unlink()
    template.symlink_to(outside)
    line = one_line_error(run("solution", SEED, ok=False), 1)
    assert str(template) in line and "leads out of" in line


def test_a_solution_template_that_is_a_fifo_is_refused(run: Run, data: Path) -> None:
    template = data / "solutions" / f"{SEED}.md.j2"
    template.unlink()
    os.mkfifo(template)
    line = one_line_error(run("solution", SEED, ok=False), 1)
    assert "FIFO" in line and "solution template" in line


# ---- 9. transcripts -------------------------------------------------------------------------


def test_an_exported_transcript_reviews_with_nothing_tampered(run: Run,
                                                              tmp_path: Path) -> None:
    from trainer.store.transcripts import from_file

    path = write_json(tmp_path, exported(run))
    run("review", str(path))
    assert from_file(path)["tampered"] == []


@pytest.mark.parametrize(("change", "field"), [
    (lambda t: t.pop("id"), "id"),
    (lambda t: t.update(id="1"), "id"),
    (lambda t: t.update(id=1.5), "id"),
    (lambda t: t.update(mode="god"), "mode"),
    (lambda t: t.update(steps={}), "steps"),
    (lambda t: t["steps"][0].update(seconds="5"), "steps[0: shape-layers].seconds"),
    (lambda t: t["steps"][0].update(seconds=1e308), "steps[0: shape-layers].seconds"),
    (lambda t: t["steps"][0].update(hints=True), "steps[0: shape-layers].hints"),
    (lambda t: t["steps"][0].update(answer=["a"]), "steps[0: shape-layers].answer"),
    (lambda t: t["steps"][1].update(id="shape-layers"), "steps[1: shape-layers].id"),
])
def test_a_malformed_transcript_names_the_field(run: Run, tmp_path: Path,
                                                change: Callable[[dict[str, Any]], Any],
                                                field: str) -> None:
    transcript = exported(run)
    change(transcript)
    line = one_line_error(run("review", str(write_json(tmp_path, transcript)), ok=False), 2)
    assert f"malformed transcript: {field}: " in line


def test_nan_seconds_in_a_transcript_are_malformed(run: Run, tmp_path: Path) -> None:
    text = json.dumps(exported(run))
    start = text.index('"seconds": ')  # the first step's seconds, made NaN in place
    text = text[:start] + '"seconds": NaN' + text[text.index(",", start):]
    path = tmp_path / "nan.json"
    path.write_text(text, encoding="utf-8")
    line = one_line_error(run("review", str(path), ok=False), 2)
    assert "malformed transcript" in line and "NaN" in line


def test_a_100k_deep_json_is_refused_before_it_is_parsed(run: Run, tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    line = one_line_error(run("review", str(path), ok=False), 2)
    assert "malformed transcript: (top level): nested more than 32 levels deep" in line


def test_a_5000_digit_number_in_a_transcript_is_malformed(run: Run, tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    path.write_text('{"id": ' + "9" * 5000 + "}", encoding="utf-8")
    line = one_line_error(run("review", str(path), ok=False), 2)
    assert "malformed transcript" in line and "5,000 digits" in line


@pytest.mark.parametrize(("change", "field"), [
    (lambda t: t["steps"][0].update(seconds=1000.0), "overtime"),
    (lambda t: t["steps"][0].update(budget_seconds=600), "budget_seconds"),
    (lambda t: t["steps"][0].update(hints=7), "hints"),
    (lambda t: t.update(drill_hash="0" * 64), "drill_hash"),
    (lambda t: t.update(params={"context": 99}), "params"),
    (lambda t: t.update(status="complete", finished_at=None), "status"),
    (lambda t: t.update(drill_text=t["drill_text"] + "\n# edited\n"), "drill_text"),
])
def test_tampering_beyond_the_verdicts_is_flagged(run: Run, tmp_path: Path,
                                                  change: Callable[[dict[str, Any]], Any],
                                                  field: str) -> None:
    from trainer.store.transcripts import from_file

    transcript = exported(run)
    change(transcript)
    path = write_json(tmp_path, transcript)
    assert field in [finding["field"] for finding in from_file(path)["tampered"]]


@pytest.mark.parametrize("fmt", ["text", "md", "html"])
def test_the_review_report_shows_what_the_transcript_contradicts(
        run: Run, tmp_path: Path, fmt: str) -> None:
    transcript = exported(run)
    transcript["steps"][0]["seconds"] = 9999.0  # overtime still says false
    page = run("review", str(write_json(tmp_path, transcript)), "--format", fmt).output
    assert "disagrees with itself or its drill" in page and "overtime" in page


def test_hints_recorded_in_exam_mode_are_flagged_on_their_step(run: Run,
                                                               tmp_path: Path) -> None:
    from trainer.store.transcripts import from_file

    transcript = exported(run)
    transcript["mode"] = "exam"
    transcript["steps"][1]["hints"] = 1
    step = from_file(write_json(tmp_path, transcript))["steps"][1]
    assert step["tampered"] == ["hints"]


# ---- 11. answer sheets ----------------------------------------------------------------------


def test_a_step_given_twice_in_a_sheet_is_refused_naming_it(run: Run, tmp_path: Path) -> None:
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text("shape-layers: 32\nshape-kv-heads: 8\nshape-layers: 33\n",
                     encoding="utf-8")
    line = one_line_error(run("grade", SEED, "--answers", str(sheet), ok=False), 2)
    assert "step 'shape-layers' is given twice in the answer sheet (lines 1 and 3)" in line


def test_a_step_given_twice_once_quoted_is_refused(run: Run, tmp_path: Path) -> None:
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text("shape-layers: 32\n'shape-layers': 33\n", encoding="utf-8")
    line = one_line_error(run("grade", SEED, "--answers", str(sheet), ok=False), 2)
    assert "'shape-layers' is given twice" in line


def test_a_sheet_that_is_not_utf8_is_called_an_answer_sheet(run: Run, tmp_path: Path) -> None:
    sheet = tmp_path / "sheet.yaml"
    sheet.write_bytes(b"shape-layers: \xff\xfe\n")
    line = one_line_error(run("grade", SEED, "--answers", str(sheet), ok=False), 2)
    assert "answer sheet" in line and "drill file" not in line


def test_a_sheet_with_a_yaml_tag_is_called_an_answer_sheet(run: Run, tmp_path: Path) -> None:
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text("shape-layers: !!python/object/apply:os.system ['true']\n",
                     encoding="utf-8")
    line = one_line_error(run("grade", SEED, "--answers", str(sheet), ok=False), 2)
    assert "an answer sheet holds plain data" in line


def test_a_too_large_sheet_exits_2(run: Run, tmp_path: Path) -> None:
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text("shape-layers: '" + "3" * 300_000 + "'\n", encoding="utf-8")
    line = one_line_error(run("grade", SEED, "--answers", str(sheet), ok=False), 2)
    assert "too large for an answer sheet" in line
