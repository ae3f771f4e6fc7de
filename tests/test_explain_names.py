"""`kvdrill explain` names the model the way people serve it: a Hugging Face id of a preset, of a
quantised copy of one, or of a release kvdrill's table (trainer/capacity/release_names.py) checks
against a published config.json; and it refuses a name it cannot be sure of, naming what to pass
instead. Also: the figures a log gives without its memory line, an error line's figures, and
V1's windowed concurrency."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from trainer.capacity import presets, release_names
from trainer.capacity.model_config import read_config
from trainer.errors import UnknownName

LOGS = Path(__file__).parent / "corpus" / "engine_logs"
CONFIGS = Path(__file__).parent / "corpus" / "configs"
Run = Callable[..., Result]


def resolved(name: str) -> str:
    preset, _release = release_names.resolve(name, presets.find_model)
    return str(preset.id)


@pytest.mark.parametrize(("name", "preset"), [
    ("Qwen/Qwen3-235B-A22B-FP8", "qwen3-235b-a22b"),
    ("RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8-dynamic", "llama-3.1-8b"),
    ("Qwen/Qwen2.5-7B-Instruct-AWQ", "qwen2.5-7b"),
    ("Qwen/Qwen2.5-14B-Instruct-GPTQ-Int4", "qwen2.5-14b"),
    ("neuralmagic/Meta-Llama-3.1-70B-Instruct-quantized.w8a8", "llama-3.1-70b"),
    ("unsloth/gemma-3-27b-it-bnb-4bit", "gemma-3-27b"),
    ("unsloth/Llama-3.3-70B-Instruct-unsloth-bnb-4bit", "llama-3.3-70b"),
    ("Qwen/Qwen2.5-32B-Instruct-AWQ", "qwen2.5-32b"),
    ("Qwen/Qwen3-8B-Base", "qwen3-8b"),
    ("kaitchup/Phi-4-AutoRound-GPTQ-4bit", "phi-4"),
    ("/models/Qwen3-32B", "qwen3-32b"),
    ("/root/.cache/huggingface/hub/models--Qwen--Qwen3-8B/snapshots/b968826d9c46dd6066d1",
     "qwen3-8b"),
])
def test_a_quantised_copy_or_a_path_resolves_to_its_base(name: str, preset: str) -> None:
    assert resolved(name) == preset


@pytest.mark.parametrize(("name", "preset"), [
    ("moonshotai/Kimi-K2-Thinking", "kimi-k2"),
    ("Llama-3_3-Nemotron-Super-49B-v1_5", "llama-3.3-nemotron-super-49b"),
    ("deepseek-ai/DeepSeek-R1-Distill-Qwen-14B", "qwen2.5-14b"),
    ("TechxGenus/DeepSeek-Coder-V2-Lite-Instruct-AWQ", "deepseek-v2-lite"),
    ("Qwen/Qwen3-VL-30B-A3B-Instruct", "qwen3-30b-a3b"),
    ("Qwen/Qwen3-30B-A3B-Instruct-2507-FP8", "qwen3-30b-a3b"),
    ("mistralai/Mistral-7B-Instruct-v0.2", "mistral-7b-v0.3"),
    ("deepseek-ai/DeepSeek-V3-0324", "deepseek-v3"),
])
def test_a_checked_release_resolves_to_the_preset_of_its_geometry(name: str,
                                                                   preset: str) -> None:
    assert resolved(name) == preset


@pytest.mark.parametrize("name", [
    "mistralai/Mistral-Small-Instruct-2409",     # 22B, 56 layers: not Mistral-Small-24B
    "nvidia/Llama-3.1-Nemotron-70B-Instruct-HF",  # a fine-tune no entry vouches for
    "Qwen/Qwen3-14B-Thinking-2507",              # no such release: no date is stripped
    "meta-llama/Llama-3.2-11B-Vision",           # cross-attention layers: no preset
])
def test_a_name_kvdrill_cannot_be_sure_of_is_refused(name: str) -> None:
    with pytest.raises(UnknownName, match=r"--model path/to/config\.json"):
        release_names.resolve(name, presets.find_model)


def test_a_model_kvdrill_cannot_size_is_refused_saying_why() -> None:
    with pytest.raises(UnknownName, match="indexer cache"):
        release_names.resolve("deepseek-ai/DeepSeek-V3.2-Exp", presets.find_model)


@pytest.mark.parametrize("name", sorted(release_names.RELEASES))
def test_every_release_names_a_preset(name: str) -> None:
    assert release_names.RELEASES[name].preset in presets.models()


@pytest.mark.parametrize(("folder", "preset"), [
    ("Qwen3-VL-30B-A3B-Instruct", "qwen3-30b-a3b"),
    ("Qwen3-VL-2B-Instruct", "qwen3-1.7b"),
    ("Qwen3-VL-4B-Instruct", "qwen3-4b"),
    ("Qwen3-VL-8B-Instruct", "qwen3-8b"),
    ("Qwen3-VL-32B-Instruct", "qwen3-32b"),
    ("Qwen3-VL-235B-A22B-Instruct", "qwen3-235b-a22b"),
])
def test_a_release_without_a_preset_has_its_presets_kv_geometry(folder: str,
                                                                preset: str) -> None:
    read = read_config(CONFIGS / folder / "config.json").fields
    model = presets.find_model(resolved(folder))
    assert model.id == preset
    assert (read["layers"], read["kv_heads"], read["head_dim"], read["window"]) == \
        (model.layers, model.kv_heads, model.head_dim, model.window)


def test_the_new_presets_read_from_their_configs_as_stated() -> None:
    read = read_config(CONFIGS / "Mistral-7B-Instruct-v0.3" / "config.json").fields
    model = presets.find_model("mistral-7b-v0.3")
    assert (read["layers"], read["kv_heads"], read["head_dim"], read["params"],
            read["attention_params"], read["window"]) == \
        (model.layers, model.kv_heads, model.head_dim, model.params,
         model.attention_params, model.window)


def test_opt_125m_has_the_shape_its_config_gives() -> None:
    config = json.loads((CONFIGS / "opt-125m" / "config.json").read_text(encoding="utf-8"))
    model = presets.find_model("facebook/opt-125m")
    assert (model.layers, model.kv_heads, model.head_dim) == (
        config["num_hidden_layers"], config["num_attention_heads"],
        config["hidden_size"] // config["num_attention_heads"])


def explain(run: Run, log: str, *options: str, ok: bool = True) -> Any:
    result = run("explain", str(LOGS / log), "--json", *options, ok=ok)
    return result if not ok else json.loads(result.output)


def figure(out: dict[str, Any], name: str) -> dict[str, Any]:
    found: dict[str, Any] = next(f for f in out["figures"] if f["name"] == name)
    return found


def test_a_release_resolved_by_the_table_is_said_in_the_notes(run: Run) -> None:
    out = explain(run, "vllm-v1_kimi-k2-thinking_tp8.log", "--model",
                  "moonshotai/Kimi-K2-Thinking", "-tp", "8", "--block-size", "64")
    assert any("kimi-k2's KV geometry" in note for note in out["notes"])


def test_an_unknown_model_is_refused_in_one_line_naming_the_config(run: Run) -> None:
    result = explain(run, "vllm-v0_llama32-11b-vision_h100.log", "--model",
                     "meta-llama/Llama-3.2-11B-Vision", ok=False)
    assert result.exit_code == 2 and "--model path/to/config.json" in result.stderr


def test_a_log_without_its_memory_line_says_what_memory_its_tokens_imply(run: Run) -> None:
    out = explain(run, "vllm-v1_llama32-1b_v0901_no-avail-line.log")
    # 1,028,832 tokens × 32,768 B (16 layers × 8 KV heads × 64 × 2 × 2 B) = 31.40 GiB
    assert figure(out, "kv_cache_memory")["expected"] == pytest.approx(31.40, abs=0.01)


def test_the_blocks_the_v1_logger_prints_agree_with_the_tokens(run: Run) -> None:
    out = explain(run, "vllm-v1_llama32-1b_v0901_no-avail-line.log")
    assert figure(out, "gpu_blocks")["agrees"] is True


def test_an_uneven_pipeline_split_is_sized_by_its_largest_stage(run: Run) -> None:
    out = explain(run, "vllm-v1_qwen3-coder-30b-a3b-fp8_pp2_error.log", "--model",
                  "Qwen/Qwen3-Coder-30B-A3B-Instruct-FP8", "-pp", "2")
    # VLLM_PP_LAYER_PARTITION=16,32: 3.18 GiB ÷ (16 × 32 layers × 2,048 B) = 3,256 blocks
    assert figure(out, "kv_tokens")["expected"] == 52_096


def test_the_start_up_errors_estimated_length_is_accounted_for(run: Run) -> None:
    out = explain(run, "vllm-v1_qwen3-coder-30b-a3b-fp8_pp2_error.log", "--model",
                  "Qwen/Qwen3-Coder-30B-A3B-Instruct-FP8", "-pp", "2")
    assert figure(out, "estimated_max_len")["agrees"] is True


def test_windowed_concurrency_follows_v1s_per_group_rule(run: Run) -> None:
    out = explain(run, "vllm-v1_gpt-oss-120b_a100_tp4_ray.log", "--model", "gpt-oss-120b")
    # 330,010 blocks ÷ (1,024 full + 137 windowed blocks a 16,384-token request) = 284.25
    assert figure(out, "max_concurrency")["agrees"] is True


def test_windowed_concurrency_is_not_guessed_without_the_batch_size(run: Run) -> None:
    out = explain(run, "vllm-v1_gpt-oss-120b_tp2.log", "--model", "gpt-oss-120b")
    assert figure(out, "max_concurrency")["expected"] is None


def test_v0_gives_a_windowed_model_one_group_of_every_layer(run: Run, tmp_path: Path) -> None:
    log = tmp_path / "v0.log"
    log.write_text("INFO 01-01 00:00:00 llm_engine.py:1 Initializing an LLM engine (v0.6.3) "
                   "with config: model='google/gemma-2-27b-it', tensor_parallel_size=1\n"
                   "INFO 01-01 00:00:01 worker.py:1 Memory profiling results: "
                   "kv_cache_size=10.00GiB\n"
                   "INFO 01-01 00:00:01 executor_base.py:1 # GPU blocks: 1780, # CPU "
                   "blocks: 0\n", encoding="utf-8")
    out = json.loads(run("explain", str(log), "--json").output)
    # 10 GiB ÷ (16 tokens × 46 layers × 2 × 16 KV heads × 128 × 2 B) = 1,780.9: all 46 layers,
    # not V1's two groups of 23 (which here would give the same count, so check the how)
    row = figure(out, "kv_tokens")
    assert row["expected"] == 1780 * 16 and "V0 gives every layer" in row["how"]


def test_the_least_memory_a_worker_prints_sizes_the_cache(run: Run, tmp_path: Path) -> None:
    log = tmp_path / "tp2.log"
    log.write_text("(VllmWorker rank=0 pid=1) INFO 01-01 00:00:00 [gpu_worker.py:1] Available KV "
                   "cache memory: 10.00 GiB\n"
                   "(VllmWorker rank=1 pid=2) INFO 01-01 00:00:00 [gpu_worker.py:1] Available KV "
                   "cache memory: 9.00 GiB\n"
                   "INFO 01-01 00:00:01 [kv_cache_utils.py:1] GPU KV cache size: 147,456 tokens\n",
                   encoding="utf-8")
    out = json.loads(run("explain", str(log), "--json", "--model", "llama-3.1-8b", "-tp", "2")
                     .output)
    # 9 GiB ÷ (16 tokens × 32 layers × 4 KV heads × 128 × 2 × 2 B = 1 MiB) = 9,216 blocks
    assert figure(out, "kv_tokens")["expected"] == 9216 * 16


def test_later_vllms_token_count_for_a_windowed_model_is_concurrency_times_length(
        run: Run, tmp_path: Path) -> None:
    # gpt-oss-120b on TP 2 as in vllm-v1_gpt-oss-120b_tp2.log, printed by a vLLM whose token
    # count is int(max_concurrency × max_model_len): 283,734 blocks ÷ (8,192 + 521) a request
    # = 32.5645 × 131,072 = 4,268,286 tokens
    log = tmp_path / "new.log"
    log.write_text("INFO 01-01 00:00:00 [arg_utils.py:1] Chunked prefill is enabled with "
                   "max_num_batched_tokens=8192.\n"
                   "(EngineCore pid=1) INFO 01-01 00:00:01 [gpu_worker.py:1] Available KV cache "
                   "memory: 77.93 GiB\n"
                   "(EngineCore pid=1) INFO 01-01 00:00:01 [kv_cache_utils.py:1] GPU KV cache "
                   "size: 4,268,286 tokens\n"
                   "(EngineCore pid=1) INFO 01-01 00:00:01 [kv_cache_utils.py:1] Maximum "
                   "concurrency for 131,072 tokens per request: 32.56x\n", encoding="utf-8")
    out = json.loads(run("explain", str(log), "--json", "--model", "gpt-oss-120b", "-tp", "2")
                     .output)
    assert figure(out, "kv_tokens")["agrees"] is True


def test_sglangs_sliding_window_pool_is_split_between_its_layers(run: Run,
                                                                  tmp_path: Path) -> None:
    # gpt-oss-20b: 12 full and 12 windowed layers of 2 × 8 × 64 × 2 B = 2,048 B a token.
    # (1,000,000 × 12 + 200,000 × 12) × 2,048 B = 27.47 GiB, printed as 13.73 + 13.73
    log = tmp_path / "sglang.log"
    log.write_text("[2025-09-01 10:00:00] Use sliding window memory pool. full_layer_tokens="
                   "1000000, swa_layer_tokens=200000\n"
                   "[2025-09-01 10:00:00] KV Cache is allocated. #tokens: 200000, K size: 13.73 "
                   "GB, V size: 13.73 GB\n", encoding="utf-8")
    out = json.loads(run("explain", str(log), "--json", "--model", "gpt-oss-20b").output)
    assert figure(out, "kv_tokens")["agrees"] is True


def test_the_engine_is_read_from_the_source_files_in_the_prefixes() -> None:
    from trainer.reading.engine_log import read_log

    # early V1 (VLLM_USE_V1=1, January 2025) printed "# GPU blocks" from kv_cache_utils.py
    log = read_log("INFO 01-30 03:18:12 gpu_model_runner.py:848] Loading model weights took "
                   "67.7229 GB\nINFO 01-30 03:19:14 kv_cache_utils.py:395] # GPU blocks: 1381\n")
    assert log.engine == "vllm-v1"


def test_a_block_size_the_engine_forces_is_the_one_used() -> None:
    from trainer.reading.engine_log import read_log

    log = read_log("INFO 11-06 10:00:00 [cuda.py:1] Forcing kv cache block size to 128 for "
                   "CUTLASS_MLA backend.\n")
    assert log.settings["block_size"] == "128"


def test_v0_caches_an_mllama_models_cross_attention_layers_too(run: Run,
                                                               tmp_path: Path) -> None:
    log = tmp_path / "mllama.log"
    log.write_text("INFO 01-16 10:00:00 worker.py:1] model weights take 82.00GiB; the rest of the "
                   "memory reserved for KV Cache is 10.00GiB.\n"
                   "INFO 01-16 10:00:01 executor_base.py:1] # CUDA blocks: 1638, # CPU blocks: "
                   "0\n", encoding="utf-8")
    config = Path(__file__).parent / "corpus" / "configs_layouts" / "Llama-3.2-90B-Vision-Instruct"
    out = json.loads(run("explain", str(log), "--json", "--model", str(config)).output)
    # 10 GiB ÷ (16 tokens × 100 layers × 2 × 8 KV heads × 128 × 2 B) = 1,638.4: all 100 layers
    # (80 self-attention + 20 cross-attention), not the 80 that hold text tokens in V1
    assert figure(out, "gpu_blocks")["expected"] == 1638


def test_a_folder_on_the_logs_server_is_read_by_its_name_and_said_so(run: Run) -> None:
    # the thread's launch command names /mnt/Model/Qwen/Qwen3-30B-A3B, a folder not here
    log = SERVER_PATH_LOG
    out = run("explain", str(log), "-tp", "4", "--model", "/mnt/Model/Qwen/Qwen3-30B-A3B").output
    assert "Qwen3-30B-A3B" in out.splitlines()[0]
    assert "is not a folder here; read by its name as Qwen3-30B-A3B" in " ".join(out.split())


def test_a_missing_folder_whose_name_is_no_model_is_refused(run: Run) -> None:
    log = SERVER_PATH_LOG
    result = run("explain", str(log), "--model", "/x/y/MyFineTune", ok=False)
    assert result.exit_code == 2
    assert "/x/y/MyFineTune: no such file or folder" in result.stderr


SERVER_PATH_LOG = (Path(__file__).parent / "corpus" / "engine_logs"
                   / "sglang_qwen3-30b-a3b_tp4_rtx6000ada.log")
