"""Expert pass 39 and the leftovers of passes 36 to 38: a Gaudi 3 is an accelerator, not a
GPU, in the titles and situations that name the card; a refusal that says "a smaller model"
or "a dense model" names models with which the drill runs on that card, tried as the user
would run them. Each test of a fix fails on what was printed before."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from click.testing import Result
from feedback_probes import marked
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


# ---- expert pass 39 (3,004 outputs: 1 WRONG, 0 MISLEADING, 3 NIT) ----------------------------

def test_a_model_with_no_vocabulary_known_does_not_claim_its_table_left_unread(
        run: Run, tmp_path: Path) -> None:
    # W1: Mixtral-8x7B's preset lists no vocabulary, so its table's bytes stay in the read
    # (91.8 GB at 14 sequences): the sheet must not say the table is left out of it
    run("variants", "observed-concurrency-lower", "--model", "mixtral-8x7b", "--gpu", "gaudi3",
        "--count", "3", "--out", str(tmp_path))
    sheets = [flat(p.read_text(encoding="utf-8")) for p in tmp_path.glob("*-sheet.md")]
    assert any("a decode step of 14 sequences reads 91.8 GB" in s for s in sheets)
    assert not any("not the embedding table" in s for s in sheets)


def test_calc_says_a_table_of_unknown_size_is_not_taken_off(run: Run) -> None:
    said = flat(run("calc", "--model", "mixtral-8x7b", "--batch", "14").output)
    assert "with no vocabulary known the table's size is unknown and nothing is taken off" \
        in said


def test_a_model_whose_table_is_known_still_says_it_is_left_out(run: Run) -> None:
    shown = flat(run("show", "observed-concurrency-lower", "--model", "qwen3-30b-a3b",
                     "--gpu", "gaudi3").output)
    assert "reads 60.42 GB (not the embedding table)" in shown


def test_another_models_drill_suggested_says_which_step_is_on_the_model(run: Run) -> None:
    # N1: the 8B drill runs as written on an A100 40GB; its TP step is the 70B's
    said = refusal_text(run, "chunked-prefill-tpot", "--model", "llama-3.1-70b", "--gpu",
                        "a100-40gb")
    assert "kvdrill practice llama31-8b-h100 --gpu a100-40gb (its step " \
        "followup-70b-tp-sessions is on Llama-3.1-70B)" in said


def test_a_drill_suggested_on_a_card_with_no_driver_figure_stays_on_that_card(
        run: Run) -> None:
    # N2: mixtral-moe-decode runs GPT-OSS-20B on a Gaudi 3, so the suggestion keeps the card
    said = refusal_text(run, "paged-blocks-vllm", "--model", "gpt-oss-20b", "--gpu", "gaudi3")
    assert "kvdrill practice mixtral-moe-decode --model gpt-oss-20b --gpu gaudi3" in said
    assert run("solution", "mixtral-moe-decode", "--model", "gpt-oss-20b", "--gpu",
               "gaudi3").exit_code == 0


# ---- expert pass 40 (3,100 outputs: 1 WRONG, 1 MISLEADING, 3 NIT) ----------------------------

CONFIGS = Path(__file__).parent / "corpus" / "configs"


def test_a_variant_retargeted_at_the_drills_own_model_grades_with_its_own_command(
        run: Run, tmp_path: Path) -> None:
    # W1: the sheet said "Llama-3.1-8B on …" where grade dropped the own model and said "its
    # own model on …", so no command graded the key
    target = ("--model", "llama-3.1-8b", "--gpu", "h200")
    run("variants", "llama31-8b-h100", *target, "--count", "1", "--out", str(tmp_path))
    answers = next(tmp_path.glob("*-answers.yaml"))
    run("grade", "llama31-8b-h100", *target, "--answers", str(answers))  # exits 0


def test_a_sheet_for_another_target_says_the_model_it_was_graded_at(
        run: Run, tmp_path: Path) -> None:
    run("variants", "llama31-8b-h100", "--gpu", "h200", "--count", "1", "--out", str(tmp_path))
    answers = next(tmp_path.glob("*-answers.yaml"))
    result = run("grade", "llama31-8b-h100", "--model", "llama-3.1-8b", "--answers",
                 str(answers), ok=False)
    said = flat(result.stderr)
    assert result.exit_code == 2
    assert "it is graded at Llama-3.1-8B on its own GPU" in said
    assert "without --model" not in said


def test_a_config_read_weight_for_weight_as_a_drawn_model_is_taken_from_any_folder(
        run: Run, tmp_path: Path) -> None:
    # M1: Qwen2.5-7B's own config.json in a folder named otherwise was refused by the drills
    # that list qwen2.5-7b
    folder = tmp_path / "qwen25-7b-local"
    folder.mkdir()
    (folder / "config.json").write_bytes((CONFIGS / "Qwen2.5-7B" / "config.json").read_bytes())
    for drill in ("prefill-vs-decode", "swap-or-recompute"):
        assert run("solution", drill, "--model", str(folder)).exit_code == 0, drill


def test_a_hugging_face_snapshot_is_named_after_its_repository(
        run: Run, tmp_path: Path) -> None:
    # N1: the folder is the commit; the repository's name is the model's
    folder = tmp_path / "models--Qwen--Qwen2.5-7B" / "snapshots" / ("d1" * 20)
    folder.mkdir(parents=True)
    (folder / "config.json").write_bytes((CONFIGS / "Qwen2.5-7B" / "config.json").read_bytes())
    title = run("solution", "prefill-vs-decode", "--model", str(folder)).output.splitlines()[0]
    assert "— Qwen2.5-7B on one NVIDIA H200" in title and "d1d1" not in title


def test_a_card_with_no_driver_figure_is_offered_no_models_that_run_only_elsewhere(
        run: Run) -> None:
    # N2: the dense models named were those that run on the drill's own card
    said = refusal_text(run, "littles-law-capacity", "--model", "qwen3-30b-a3b", "--gpu",
                        "gaudi3")
    assert "choose a dense model, or drill it with" in said


def test_the_givens_call_a_gaudi_3_an_accelerator(run: Run) -> None:
    # N3
    shown = run("show", "prefix-caching", "--gpu", "gaudi3").output
    assert "accelerator: 1 × Intel Gaudi 3" in shown and "GPU: 1 × Intel Gaudi 3" not in shown


# ---- expert pass 41 (404 outputs: 2 WRONG, 0 MISLEADING, 3 NIT) ------------------------------

def _config_folder(tmp_path: Path, name: str = "myqwen", source: str = "Qwen2.5-7B") -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "config.json").write_bytes((CONFIGS / source / "config.json").read_bytes())
    return folder


def test_calc_suggested_for_a_config_names_its_path_and_runs(run: Run, tmp_path: Path) -> None:
    # W1: "kvdrill calc --model myqwen" failed (no such preset)
    # (a text-only Qwen2.5-7B config now runs, quantized to FP8 at load by vLLM; a vision
    # model's tower is what kvdrill does not size that way)
    folder = _config_folder(tmp_path, source="Qwen3-VL-8B-Instruct")
    said = refusal_text(run, "llama31-70b-tp2-h100", "--model", str(folder), "--gpu", "h200")
    assert "config.json records no 'fp8' checkpoint" in said
    path = str(folder / "config.json")
    assert said.endswith(f"size it with kvdrill calc --model {path}")
    run("calc", "--model", path)  # exits 0


def test_a_refusal_without_gpu_names_the_drills_own_card(run: Run, tmp_path: Path) -> None:
    said = refusal_text(run, "llama31-70b-tp2-h100", "--model",
                        str(_config_folder(tmp_path, source="Qwen3-VL-8B-Instruct")))
    assert "at myqwen on NVIDIA H100 SXM 80GB (the drill's own card):" in said


def test_a_slip_that_would_divide_a_rate_is_not_said_to_multiply_it(
        run: Run, tmp_path: Path) -> None:
    # W2: requests/s fall as the KV bytes rise: counting K and V once and taking bits for
    # bytes give a quarter of the rate, not four times it
    folder = _config_folder(tmp_path)
    out = tmp_path / "v"
    run("variants", "littles-law-capacity", "--model", str(folder), "--gpu", "h200",
        "--count", "1", "--out", str(out))
    answers = next(out.glob("*-answers.yaml"))
    text = answers.read_text(encoding="utf-8")
    found = re.search(r"^p99-qps: ([0-9.]+)", text, re.M)
    assert found, text
    shown = float(found.group(1))  # (rounded: the answers a candidate would type near 4×)
    for four in (shown * 4 - 0.1, shown * 4, shown * 4 + 0.1):
        answers.write_text(text.replace(found.group(0), f"p99-qps: {four:.1f}"),
                           encoding="utf-8")
        graded = flat(run("grade", "littles-law-capacity", "--model", str(folder), "--gpu",
                          "h200", "--answers", str(answers), ok=False).output)
        assert "p99-qps" in graded
        assert "counted K and V once and took bits for bytes" not in graded, four


def test_grade_json_says_the_target_it_graded_at(run: Run, tmp_path: Path) -> None:
    # N3: the JSON of a re-targeted grade named no target
    run("variants", "llama31-8b-h100", "--gpu", "h200", "--count", "1", "--out", str(tmp_path))
    answers = next(tmp_path.glob("*-answers.yaml"))
    out = json.loads(run("grade", "llama31-8b-h100", "--gpu", "h200", "--answers",
                         str(answers), "--json").output)
    assert out["target"] == "its own model on NVIDIA H200 SXM 141GB"


def test_the_prompt_token_flops_slip_quotes_no_other_models_figures(
        run: Run, tmp_path: Path) -> None:
    # N1: the explanation quoted Llama-3.1-8B's 6.98B and 8.03B under any target
    folder = _config_folder(tmp_path)
    out = tmp_path / "v"
    run("variants", "swap-or-recompute", "--model", str(folder), "--count", "1", "--out",
        str(out))
    key = next(out.glob("*-key.md")).read_text(encoding="utf-8")
    slip = re.search(r"\| recompute-time \| [^|]* \| ([0-9.,]+) ms: charged every parameter",
                     key)
    assert slip, key
    answers = next(out.glob("*-answers.yaml"))
    text = re.sub(r"^recompute-time: .*$", f"recompute-time: {slip.group(1)} ms",
                  answers.read_text(encoding="utf-8"), flags=re.M)
    answers.write_text(text, encoding="utf-8")
    said = flat(run("grade", "swap-or-recompute", "--model", str(folder), "--answers",
                    str(answers), ok=False).output)
    assert "2 × the layers' parameters, not 2 × all of them" in said
    assert "6.98B" not in said and "8.03B" not in said


# ---- expert pass 42 (285 outputs, 170 diagnoses: 10 wrong) -----------------------------------

def test_a_per_gpu_budget_is_not_said_to_split_the_mla_latent() -> None:
    # W3: the latent does not enter the budget; "split the MLA latent" was said of it
    mark = marked("deepseek-v3-mla-h200", {"kv-budget": "38.8 GB"})["kv-budget"]
    assert mark.misconceptions == ("per-gpu-vs-total",)
    assert "MLA latent" not in mark.feedback


def test_too_few_sessions_are_not_said_to_split_the_mla_latent() -> None:
    # W3: splitting the latent would give more sessions, not fewer
    mark = marked("deepseek-v3-mla-h200", {"sessions": "2"})["sessions"]
    assert "MLA latent" not in mark.feedback


def test_a_latent_split_over_the_node_names_the_split() -> None:
    mark = marked("deepseek-v3-mla-h200", {"bytes-per-token-node": "70,272 B"})[
        "bytes-per-token-node"]
    assert "mla-latent-split" in mark.misconceptions


def test_the_rope_key_left_out_is_named_as_such() -> None:
    # M2: 61 × 512 × 2 = 62,464 B was told "a latent 448 wide"
    mark = marked("deepseek-v3-mla-h200", {"bytes-per-token-per-gpu": "62,464 B"})[
        "bytes-per-token-per-gpu"]
    assert mark.misconceptions == ("mla-rope-left-out",)
    assert "448" not in mark.feedback


def test_a_latent_width_without_its_rope_key_is_named() -> None:
    mark = marked("deepseek-v3-mla-h200", {"latent-width": "512"})["latent-width"]
    assert mark.misconceptions == ("mla-rope-left-out",)


def test_the_moe_budget_after_only_the_active_weights_is_named() -> None:
    # M1: 136 − 25.8 GB, the slip mixtral-moe-decode's solution names, got no feedback on the
    # kv-budget step (its list of mistakes left it out)
    mark = marked("mixtral-moe-decode", {"kv-budget": "110.2 GB"})["kv-budget"]
    assert mark.misconceptions == ("moe-active-as-resident",)
