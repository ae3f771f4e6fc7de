"""`kvdrill variants`: reproducible, varied, sensible, sheets without answers, keys that agree
with an independent computation and grade as all correct; and `kvdrill next`."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

Run = Callable[..., Result]
DRILL = "llama2-70b-mi300x"
DTYPE_BYTES = {"fp32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "int8": 1}


def variants_json(run: Run, seed: int = 3, count: int = 6) -> dict[str, Any]:
    payload: dict[str, Any] = json.loads(
        run("variants", DRILL, "--count", str(count), "--seed", str(seed), "--json").output)
    return payload


def test_the_same_seed_gives_byte_identical_files(run: Run, tmp_path: Path) -> None:
    for name in ("a", "b"):
        run("variants", DRILL, "--count", "3", "--seed", "11", "--out", str(tmp_path / name))
    files = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert len(files) == 12  # per variant: sheet, key, the blank sheet, the key as a sheet
    for name in files:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_different_seeds_give_different_variants(run: Run) -> None:
    first = {v["variant"] for v in variants_json(run, seed=1)["variants"]}
    second = {v["variant"] for v in variants_json(run, seed=2)["variants"]}
    assert first != second


def test_variants_of_one_draw_differ_from_each_other(run: Run) -> None:
    params = [json.dumps(v["params"], sort_keys=True) for v in variants_json(run)["variants"]]
    assert len(set(params)) == len(params)


def test_every_variant_is_physically_sensible(run: Run) -> None:
    for variant in variants_json(run, count=10)["variants"]:
        assert variant["answers"]["1a"]["value"] > 0  # the weights fit
        assert variant["answers"]["2b-max-sequences"]["value"] >= 1


def independent(params: dict[str, Any]) -> dict[str, float]:
    """The capacity model written again from scratch, from the variant's own parameters."""
    per_token = 2 * params["layers"] * params["kv_heads"] * params["head_dim"] \
        * DTYPE_BYTES[params["kv_dtype"]]
    per_sequence = per_token * params["context"]
    gb = 1e9
    budget = params["gpus"] * (params["hbm_gb"] * params["utilization"]
                               - params["reserve_gb"]) * gb - params["weights_gb"] * gb
    sequences = math.floor(budget / per_sequence)
    step = (params["weights_gb"] * gb + sequences * per_sequence) \
        / (params["gpus"] * params["bandwidth_tbs"] * 1e12)
    return {"1a": budget / gb, "2b-bytes-per-token": per_token,
            "2b-max-sequences": sequences, "3a-step-time": step * 1000}


def test_keys_agree_with_an_independent_computation(run: Run) -> None:
    for variant in variants_json(run, count=8)["variants"]:
        mine = independent(variant["params"])
        for step, value in mine.items():
            assert variant["answers"][step]["value"] == pytest.approx(value, rel=1e-9), step


def test_sheets_hold_no_answer(run: Run, tmp_path: Path) -> None:
    run("variants", DRILL, "--count", "4", "--seed", "5", "--out", str(tmp_path))
    payload = variants_json(run, seed=5, count=4)
    for variant in payload["variants"]:
        sheet = (tmp_path / f"{DRILL}-{variant['variant']}-sheet.md").read_text()
        for step in ("1a", "2b-bytes-per-sequence", "3a-step-time", "3b-aggregate", "4e"):
            answer = variant["answers"][step]
            text = f"{answer['value']:,.3g}" if isinstance(answer["value"], float) \
                else f"{answer['value']:,}"
            assert f"{text} {answer['unit']}" not in sheet, (variant["variant"], step)


def test_each_key_graded_as_an_answer_sheet_is_all_correct(run: Run, tmp_path: Path) -> None:
    run("variants", DRILL, "--count", "4", "--seed", "9", "--out", str(tmp_path), "--json")
    payload = json.loads((tmp_path / f"{DRILL}-variants.json").read_text())
    for variant in payload["variants"]:
        sheet = tmp_path / f"{DRILL}-{variant['variant']}-answers.yaml"
        result = run("grade", DRILL, "--answers", str(sheet), "--variant",
                     str(variant["variant"]), "--json")
        verdicts = {s["verdict"] for s in json.loads(result.output)["steps"]
                    if s["kind"] == "numeric"}
        assert verdicts == {"correct"}


def test_params_use_calcs_option_names(run: Run) -> None:
    params = variants_json(run, count=1)["variants"][0]["params"]
    assert {"layers", "heads", "kv_heads", "head_dim", "hbm_gb", "bandwidth_tbs", "gpus",
            "utilization", "reserve_gb", "context", "kv_dtype", "weights_dtype"} <= set(params)
    assert params["kv_heads"] < params["heads"]  # the GQA configuration of part 2(b)


def test_html_variants_without_out_is_a_usage_error(run: Run) -> None:
    result = run("variants", DRILL, "--format", "html", ok=False)
    assert result.exit_code == 2 and result.stderr.startswith(
        "Error: HTML is written as files, a sheet and a key per variant: give --out DIR")


def test_markdown_variants_without_out_print_each_sheet_and_key(run: Run) -> None:
    printed = run("variants", DRILL, "--count", "2", "--seed", "4").output
    assert printed == run("variants", DRILL, "--count", "2", "--seed", "4", "--out", "-").output
    assert printed.count("— variant ") == 4  # two sheets and two keys, each titled


def test_practice_with_a_variant_uses_its_numbers(run: Run, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KVDRILL_HOME", str(tmp_path))
    variant = variants_json(run, count=1)["variants"][0]
    budget = f"{variant['answers']['1a']['value']} GB"
    run("practice", DRILL, "--variant", str(variant["variant"]), input=f"{budget}\n")
    exported = json.loads(run("export", "1").output)
    assert exported["variant"] == variant["variant"]
    assert exported["steps"][0]["verdict"] == "correct"


def test_next_suggests_a_drill_never_practised_first(run: Run, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KVDRILL_HOME", str(tmp_path))
    run("practice", "llama31-8b-h100", input="32\n8\n")
    out = json.loads(run("next", "--json").output)
    assert out["drill"] != "llama31-8b-h100" and out["reason"] == "never practised"
