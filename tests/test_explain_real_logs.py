"""`kvdrill explain` on real start-up logs from public threads and committed files
(tests/corpus/engine_logs: vLLM V0 and V1 across versions, SGLang), each explained with the
model and parallel settings its thread states. The expected figures in expected.yaml were
worked by hand from each log, the model's published config and vLLM's sizing rules, never from
kvdrill's output."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import Result

LOGS = Path(__file__).parent / "corpus" / "engine_logs"
EXPECTED: dict[str, dict[str, Any]] = yaml.safe_load(
    (LOGS / "expected.yaml").read_text(encoding="utf-8"))
Run = Callable[..., Result]

# Models with no preset of their own: their published config.json, as a user would pass it.
# (Every model the threads name is now known by its own name: a preset, a quantised copy of
# one, or a release kvdrill's table checks against its published config.)
CONFIGS: dict[str, Path | str] = {}
# Logs whose model kvdrill has no shape for here: refused by name (the no-crash test holds them).
UNKNOWN_MODEL = {
    "vllm-v0_llama32-11b-vision_h100.log":
        "Llama-3.2-11B-Vision: no preset, and no verified public copy of its config.json",
    "vllm-v1_kimi-linear-48b-a3b-awq_tp2.log":
        "Kimi-Linear: linear attention beside MLA, refused by name",
}
OPTIONS = (("tensor_parallel_size", "-tp"), ("pipeline_parallel_size", "-pp"),
           ("kv_cache_dtype", "--kv-cache-dtype"), ("block_size", "--block-size"))


def arguments(name: str) -> list[str]:
    """The thread's own model and settings, as options."""
    entry = EXPECTED[name]
    model = re.sub(r"\s*\(.*$", "", str(entry.get("model") or "")).strip()
    tail = model.rsplit("/", 1)[-1]
    args = [str(LOGS / name), "--json"]
    if tail in CONFIGS:
        args += ["--model", str(CONFIGS[tail])]
    elif model:
        args += ["--model", model]
    for key, option in OPTIONS:
        if entry.get(key) is not None:
            args += [option, str(entry[key])]
    return args


def reproduced(name: str) -> bool:
    entry = EXPECTED[name]
    if name in UNKNOWN_MODEL:
        return False
    expected = entry.get("expected") or {}
    logged = entry.get("logged") or {}
    return expected.get("reproduces") is True and logged.get("kv_tokens") is not None \
        and expected.get("kv_tokens_from_available") is not None


def tokens(run: Run, name: str) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(run("explain", *arguments(name)).output)
    found: dict[str, Any] = next(f for f in out["figures"] if f["name"] == "kv_tokens")
    return found


@pytest.mark.parametrize("name", sorted(n for n in EXPECTED if reproduced(n)))
def test_the_expected_tokens_agree_with_the_logged_ones(run: Run, name: str) -> None:
    assert tokens(run, name)["agrees"] is True


@pytest.mark.parametrize("name", sorted(n for n in EXPECTED if reproduced(n)))
def test_the_expected_tokens_are_the_hand_worked_ones(run: Run, name: str) -> None:
    hand = EXPECTED[name]["expected"]["kv_tokens_from_available"]
    # the engine's rounding of its memory line allows 1%; the hand working keeps to it
    assert tokens(run, name)["expected"] == pytest.approx(hand, rel=0.01)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_no_log_crashes_the_command(run: Run, name: str) -> None:
    result = run("explain", *arguments(name), ok=False)
    assert result.exit_code in (0, 2)
    if result.exit_code:
        assert result.stderr.startswith("Error: ") and result.stderr.count("\n") == 1
