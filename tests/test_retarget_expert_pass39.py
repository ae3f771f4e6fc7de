"""Expert pass 39 and the leftovers of passes 36 to 38: a Gaudi 3 is an accelerator, not a
GPU, in the titles and situations that name the card; a refusal that says "a smaller model"
or "a dense model" names models with which the drill runs on that card, tried as the user
would run them. Each test of a fix fails on what was printed before."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from click.testing import Result
from retarget_text import flat, refusal_text

Run = Callable[..., Result]


def test_a_gaudi_3_is_called_an_accelerator_in_a_drills_title(run: Run) -> None:
    shown = run("show", "llama31-405b-h200-tp", "--gpu", "gaudi3").output
    assert shown.splitlines()[0].endswith(
        "Llama-3.1-405B on Intel Gaudi 3 accelerators at TP=8 and TP=16")
    assert "Gaudi 3 GPU" not in flat(shown)


def test_an_nvidia_card_stays_a_gpu_in_the_same_title(run: Run) -> None:
    shown = run("show", "llama31-405b-h200-tp").output
    assert "Llama-3.1-405B on NVIDIA H200 SXM 141GB GPUs at TP=8 and TP=16" in shown


def _named(said: str, kind: str) -> list[str]:
    found = re.search(kind + r" \(such as ([a-z0-9.\-]+)(?: or ([a-z0-9.\-]+))?\)", said)
    assert found, said
    return [name for name in found.groups() if name]


def test_a_refusal_for_a_slow_card_names_smaller_models_that_run_on_it(run: Run) -> None:
    # Qwen3-32B's 65.5 GB read takes 19.6 ms of the 20 ms TPOT on an H100
    said = refusal_text(run, "littles-law-capacity", "--model", "qwen3-32b", "--gpu", "h100")
    names = _named(said, "or a smaller model")
    assert "qwen2.5-32b" not in names  # the same size is no cure
    for name in names:
        assert run("solution", "littles-law-capacity", "--model", name, "--gpu",
                   "h100").exit_code == 0, name


def test_a_refusal_for_a_small_card_names_models_that_fit_it(run: Run) -> None:
    said = refusal_text(run, "multi-turn-growth", "--model", "llama-3.1-70b", "--gpu", "l40s")
    for name in _named(said, "or a smaller model"):
        assert run("solution", "multi-turn-growth", "--model", name, "--gpu",
                   "l40s").exit_code == 0, name


def test_a_refusal_of_a_mixture_of_experts_names_dense_models_that_run(run: Run) -> None:
    said = refusal_text(run, "littles-law-capacity", "--model", "gpt-oss-120b", "--gpu", "h200")
    names = _named(said, "choose a dense model")
    for name in names:
        assert run("solution", "littles-law-capacity", "--model", name, "--gpu",
                   "h200").exit_code == 0, name


def _cache_dtypes(run: Run, tmp_path: Path, *target: str) -> dict[str, str]:
    """Each sheet's model and KV cache dtype, for six variants of the 70B drill."""
    run("variants", "llama2-70b-mi300x", *target, "--count", "6", "--seed", "3",
        "--out", str(tmp_path))
    said = {}
    for sheet in sorted(tmp_path.glob("*-sheet.md")):
        text = sheet.read_text(encoding="utf-8")
        model = re.search(r"^- model: (\S+)", text, re.M)
        dtype = re.search(r"KV cache dtype (\w+)", text)
        assert model and dtype, text
        said[sheet.name] = f"{model.group(1)} {dtype.group(1)}"
    return said


def test_a_variant_drawn_with_a_bf16_model_keeps_its_cache_in_bf16(
        run: Run, tmp_path: Path) -> None:
    # Llama-2-70B was released in fp16, Llama-3.1-70B and Qwen2.5-72B in bf16: vLLM's
    # kv-cache-dtype auto keeps each model's own (the bytes are the same)
    said = _cache_dtypes(run, tmp_path).values()
    assert {line.split()[0] for line in said} >= {"Llama-2-70B", "Llama-3.1-70B"}
    for line in said:
        assert line.endswith("fp16" if line.startswith("Llama-2") else "bf16"), line


def test_a_variant_retargeted_at_a_bf16_model_keeps_its_cache_in_bf16(
        run: Run, tmp_path: Path) -> None:
    for line in _cache_dtypes(run, tmp_path, "--model", "llama-3.1-70b").values():
        assert line == "Llama-3.1-70B bf16"


def test_what_an_moe_decode_step_reads_is_said_with_its_batch(run: Run) -> None:
    # N (pass 37): 2.46 + 57.98 × (1 − (120/128)^83) = 60.17 GB is the 83-session batch's read
    shown = flat(run("show", "multi-turn-growth", "--model", "qwen3-30b-a3b", "--gpu",
                     "gaudi3").output)
    assert "a decode step of 83 sequences reads 60.17 GB" in shown
