"""Any drill on your model (issue 27): `show`, `solution`, `variants`, `grade` and `practice` take
--model (a preset, a config.json or its folder) and --gpu and re-target the drill at them, as a
variant whose parameters are given; the target is stored with the attempt, so `review`,
`export`, `import` and `cohort` reproduce it; a drill whose lesson the model cannot carry is
refused in one sentence."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import Result

CONFIGS = Path(__file__).parent / "corpus" / "configs"
DRILL = "llama31-8b-h100"
Run = Callable[..., Result]
# Qwen3-32B's own shape (head_dim 128, not 5,120 ÷ 64 = 80) and bytes per token:
# 2 × 64 × 8 × 128 × 2 B = 262,144 B = 256 KiB
QWEN3_32B_SHEET = {"shape-layers": "64", "shape-kv-heads": "8", "shape-head-dim": "128",
                   "shape-dtype-bytes": "2 B", "bytes-per-token": "256 KiB"}


def qwen(tmp_path: Path) -> str:
    """A copy of Qwen3-32B's published config, laid out as a model folder."""
    folder = tmp_path / "models" / "Qwen3-32B"
    shutil.copytree(CONFIGS / "Qwen3-32B", folder)
    return str(folder)


def sheet(tmp_path: Path, answers: dict[str, str]) -> str:
    path = tmp_path / "answers.yaml"
    path.write_text(yaml.safe_dump(answers), encoding="utf-8")
    return str(path)


def graded(run: Run, *args: str) -> dict[str, Any]:
    result = run("grade", *args, "--json", ok=False)
    assert result.exit_code in (0, 1), result.stderr
    payload: dict[str, Any] = json.loads(result.stdout)
    return payload


def verdicts(payload: dict[str, Any]) -> dict[str, str]:
    return {step["id"]: step["verdict"] for step in payload["steps"]}


# ---- grade, show, solution, variants -------------------------------------------------------


def test_grade_marks_the_models_own_shape_and_bytes_per_token_correct(
        run: Run, tmp_path: Path) -> None:
    payload = graded(run, DRILL, "--model", qwen(tmp_path), "--gpu", "h200",
                     "--answers", sheet(tmp_path, QWEN3_32B_SHEET))
    marks = verdicts(payload)
    assert all(marks[step] == "correct" for step in QWEN3_32B_SHEET), marks


def test_grade_against_the_drills_own_model_marks_the_same_sheet_wrong(
        run: Run, tmp_path: Path) -> None:
    marks = verdicts(graded(run, DRILL, "--answers", sheet(tmp_path, QWEN3_32B_SHEET)))
    assert marks["shape-layers"] == "wrong"


def test_grade_names_hidden_over_heads_for_a_config_with_its_own_head_dim(
        run: Run, tmp_path: Path) -> None:
    payload = graded(run, DRILL, "--model", qwen(tmp_path), "--gpu", "h200",
                     "--answers", sheet(tmp_path, {"shape-head-dim": "80"}))
    step = next(s for s in payload["steps"] if s["id"] == "shape-head-dim")
    assert step["verdict"] == "wrong"


def test_show_re_targets_the_givens_and_says_so(run: Run) -> None:
    text = run("show", DRILL, "--model", "qwen3-30b-a3b", "--gpu", "h200").stdout
    assert "Qwen3-30B-A3B on one NVIDIA H200" in text
    assert "Re-targeted at Qwen3-30B-A3B on NVIDIA H200 SXM 141GB" in text
    assert "61.06 GB (bf16)" in text


def test_show_json_carries_the_target(run: Run, tmp_path: Path) -> None:
    # (on the drill's own H100 Qwen3-32B holds no 32k session: refused since expert pass 20)
    payload = json.loads(run("show", DRILL, "--model", qwen(tmp_path), "--gpu", "h200",
                             "--json").stdout)
    assert payload["target"]["model"]["config"]["head_dim"] == 128
    assert payload["target"]["gpu"] == "h200"


def test_solution_works_the_models_numbers(run: Run, tmp_path: Path) -> None:
    text = run("solution", DRILL, "--model", qwen(tmp_path), "--gpu", "h200", "--format",
               "md").stdout
    assert "2 (K and V) × 64 layers × 8 KV heads × 128 head_dim × 2 B (bf16) = " \
           "**262,144 B (256 KiB)**" in text
    assert "× 32 layers" not in text  # Llama-3.1-8B's shape is gone


def test_a_new_gpu_alone_keeps_the_drills_model(run: Run) -> None:
    text = run("show", DRILL, "--gpu", "h200").stdout
    assert "Llama-3.1-8B on one NVIDIA H200" in text


def test_variants_re_targets_every_variant_and_names_the_target(run: Run) -> None:
    payload = json.loads(run("variants", DRILL, "--count", "2", "--model", "qwen3-8b",
                             "--gpu", "h100", "--json").stdout)
    assert payload["target"] == {"model": {"preset": "qwen3-8b"}, "gpu": "h100"}
    for variant in payload["variants"]:
        assert variant["params"]["model"] == "qwen3-8b"
        assert variant["params"]["layers"] == 36
        assert variant["answers"]["bytes-per-token"] == {"value": 144, "unit": "KiB"}


def test_variant_and_model_together_draw_the_serving_givens_and_keep_the_model(
        run: Run) -> None:
    text = run("show", DRILL, "--variant", "7", "--model", "qwen3-8b").stdout
    assert "Qwen3-8B on one" in text


# ---- refusals --------------------------------------------------------------------------------


@pytest.mark.parametrize(("drill", "model", "says"), [
    ("deepseek-v3-mla-h200", "qwen3-32b",
     "drill deepseek-v3-mla-h200 is DeepSeek-V3's own (its prose works DeepSeek-V3's own "
     "shape: 61 layers, 128 heads, 256 experts): re-target it with --gpu only, or drill it "
     "with kvdrill practice llama31-70b-tp2-h100 --model qwen3-32b"),
    ("sliding-window-kv", "qwen3-32b",
     "drill sliding-window-kv is Mistral-7B-v0.1's own (it compares Mistral-7B's window on "
     "every layer with Gemma-2's on half of them): re-target it with --gpu only, or drill it "
     "with kvdrill practice llama31-70b-tp2-h100 --model qwen3-32b"),
    ("mixtral-moe-decode", "llama-3.3-70b",
     "drill mixtral-moe-decode is a lesson in mixture-of-experts, which Llama-3.3-70B does not "
     "have: choose an MoE model, such as qwen3-30b-a3b, gpt-oss-20b or mixtral-8x7b"),
])
def test_a_lesson_the_model_cannot_carry_is_refused_in_one_sentence(
        run: Run, drill: str, model: str, says: str) -> None:
    result = run("show", drill, "--model", model, ok=False)
    assert result.exit_code == 2
    assert result.stderr.strip() == f"Error: {says}"


def test_an_mla_drill_on_an_mla_config_works(run: Run) -> None:
    text = run("show", "deepseek-v3-mla-h200", "--model",
               str(CONFIGS / "DeepSeek-V3")).stdout
    assert "Re-targeted at DeepSeek-V3" in text


def test_the_sliding_window_drill_compares_its_own_two_models_only(run: Run) -> None:
    # its prose sets Mistral-7B (a window on every layer) beside Gemma-2 (on half of them)
    result = run("show", "sliding-window-kv", "--model", "gpt-oss-20b", ok=False)
    assert result.exit_code == 2
    assert "compares Mistral-7B's window on every layer with Gemma-2's" in result.stderr


def test_a_model_too_large_for_the_card_is_refused_in_one_line(
        run: Run, tmp_path: Path) -> None:
    result = run("grade", DRILL, "--model", "llama-3.3-70b",
                 "--answers", sheet(tmp_path, {"shape-layers": "80"}), ok=False)
    assert result.exit_code == 2
    assert "its weights do not fit on 1 × NVIDIA H100 SXM 80GB (141 GB against 80 GB)" \
        in result.stderr
    assert "--gpu" in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_a_model_no_card_holds_is_not_told_to_choose_a_larger_card(run: Run) -> None:
    # 470 GB of bf16 weights: more than the largest card kvdrill knows (256 GB)
    result = run("show", DRILL, "--model", "qwen3-235b-a22b", ok=False)
    assert result.exit_code == 2
    assert "the largest card kvdrill knows" in result.stderr
    assert "--gpu" not in result.stderr and "kvdrill calc --model qwen3-235b-a22b" in \
        result.stderr


# ---- practice, stored, and reproduced by review, export, import and cohort -----------------


def practise(run: Run, *args: str, answers: dict[str, str]) -> int:
    from trainer.drills.loader import find_drill

    drill, _ = find_drill(DRILL)
    lines = [answers.get(step.id, "") for step in drill.steps]
    run("practice", DRILL, *args, input="".join(f"{line}\n" for line in lines))
    newest: int = json.loads(run("history", "--json", "--limit", "1").stdout)[0]["id"]
    return newest


def test_practice_stores_the_target_and_review_reproduces_it_after_the_file_is_gone(
        run: Run, tmp_path: Path) -> None:
    folder = qwen(tmp_path)
    attempt = practise(run, "--model", folder, "--gpu", "h200", answers=QWEN3_32B_SHEET)
    shutil.rmtree(folder)  # the config is gone; the attempt keeps every field it used
    review = json.loads(run("review", str(attempt), "--json").stdout)
    marks = {s["id"]: s["verdict"] for s in review["steps"]}
    assert all(marks[step] == "correct" for step in QWEN3_32B_SHEET)
    assert review["target"]["gpu"] == "h200"


def test_export_carries_the_target_and_review_file_re_derives_it(
        run: Run, tmp_path: Path) -> None:
    attempt = practise(run, "--model", qwen(tmp_path), "--gpu", "h200",
                       answers=QWEN3_32B_SHEET)
    out = tmp_path / "attempt.json"
    run("export", str(attempt), "--out", str(out))
    exported = json.loads(out.read_text(encoding="utf-8"))
    assert exported["target"]["model"]["config"]["name"] == "Qwen3-32B"
    review = json.loads(run("review", str(out), "--json").stdout)
    assert review["tampered"] == []
    marks = {s["id"]: s["verdict"] for s in review["steps"]}
    assert marks["bytes-per-token"] == "correct"


def test_export_markdown_names_the_target(run: Run, tmp_path: Path) -> None:
    attempt = practise(run, "--model", "qwen3-8b", "--gpu", "h200", answers={})
    text = run("export", str(attempt), "--format", "md").stdout
    assert "- re-targeted at Qwen3-8B on NVIDIA H200 SXM 141GB" in text


def test_a_tampered_target_is_a_malformed_transcript(run: Run, tmp_path: Path) -> None:
    attempt = practise(run, "--model", "qwen3-8b", answers={})
    out = tmp_path / "attempt.json"
    run("export", str(attempt), "--out", str(out))
    data = json.loads(out.read_text(encoding="utf-8"))
    data["target"]["model"] = {"config": {"name": "x", "layers": "many"}}
    out.write_text(json.dumps(data), encoding="utf-8")
    result = run("review", str(out), ok=False)
    assert result.exit_code == 2
    assert 'malformed transcript: target: model.config.layers: "many" is not a whole number' \
        in result.stderr


def test_import_and_cohort_mark_a_re_targeted_attempt_on_its_own_model(
        run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KVDRILL_HOME", str(tmp_path / "candidate"))
    attempt = practise(run, "--model", qwen(tmp_path), "--gpu", "h200",
                       answers=QWEN3_32B_SHEET)
    out = tmp_path / "dana.json"
    run("export", str(attempt), "--out", str(out))
    monkeypatch.setenv("KVDRILL_HOME", str(tmp_path / "interviewer"))
    run("import", str(out))
    cohort = json.loads(run("cohort", DRILL, "--format", "json").stdout)
    shape = next(s for s in cohort["steps"] if s["id"] == "shape-head-dim")
    assert shape["right"] == ["dana"]


def test_resume_continues_on_the_stored_target(run: Run, tmp_path: Path) -> None:
    from trainer.drills.loader import find_drill

    drill, _ = find_drill(DRILL)
    run("practice", DRILL, "--model", "qwen3-8b", input="36\n")  # one answer, then end of input
    attempt = json.loads(run("history", "--json", "--limit", "1").stdout)[0]["id"]
    rest = "".join("\n" for _ in drill.steps[1:])
    result = run("practice", "--resume", str(attempt), input=rest)
    assert "Qwen3-8B" in result.stdout
    review = json.loads(run("review", str(attempt), "--json").stdout)
    assert review["steps"][0]["verdict"] == "correct"  # 36 layers: Qwen3-8B's


def test_resume_refuses_a_new_target(run: Run) -> None:
    result = run("practice", "--resume", "1", "--model", "qwen3-8b", ok=False)
    assert result.exit_code == 2
    assert "--resume continues an attempt on the model and GPU it began with" in result.stderr


def test_a_schema_4_store_is_read_and_upgraded_with_no_target(tmp_path: Path) -> None:
    import sqlite3

    from trainer.store.database import Store
    from trainer.store.schema import MIGRATIONS

    path = tmp_path / "kvdrill.sqlite3"
    conn = sqlite3.connect(path, isolation_level=None)
    for number, migration in enumerate(MIGRATIONS[:4]):
        for statement in migration:
            conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {number + 1}")
    conn.execute("INSERT INTO attempts (drill_id, drill_hash, variant, params, solver_version,"
                 " mode, strict, started_at, status) VALUES ('d', 'h', NULL, '{}', '1',"
                 " 'practice', 0, '2025-01-01T00:00:00', 'incomplete')")
    conn.close()
    with Store(path, read_only=True) as old:
        assert [a.target for a in old.attempts(with_text=False)] == [None]
    with Store(path) as upgraded:
        assert upgraded.attempt(1).target is None
        second = upgraded.create_attempt("d", "h", None, {}, "1", "practice", False,
                                         target={"model": {"preset": "qwen3-8b"}, "gpu": None})
        assert upgraded.attempt(second).target == {"model": {"preset": "qwen3-8b"},
                                                   "gpu": None}
