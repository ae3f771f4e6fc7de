"""Expert pass 46 (models read from config.json files the project had never seen: 2 wrong,
9 misleading), the findings outside the config reader (tests/test_expert_pass46_configs.py
holds those): a dense twin of a tied-embedding MoE reads its table as the LM head; a hybrid's
layers with no cache are not called recurrent; a Gemma-3 config finds its family's draft and
the real reason vLLM refuses it; a marketed-memory count on the real-card step is wrong; a
later step's answer is never said to be copied; the RoPE reach is kvdrill's rule, not a fact."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from click.testing import Result
from retarget_text import flat, refusal_text

Run = Callable[..., Result]
CONFIGS = Path(__file__).parent / "corpus" / "configs_pass46"


def test_a_tied_moes_dense_twin_reads_its_embedding_table_as_the_lm_head(run: Run) -> None:
    # Granite-3.1-3B-A800M ties its 49,155 × 1,536 table to the LM head: a dense model of its
    # 3,298,793,472 parameters reads all 6.598 GB every step, 2 × 3.35 TB/s ÷ 6.598 GB = 1,015/s
    said = flat(run("solution", "mixtral-moe-decode", "--model",
                    str(CONFIGS / "granite31-3b-a800m-instruct"), "--format", "md").output)
    assert "| bytes read per step, batch 64 | 6.6 GB | 6.6 GB |" in said
    assert "its batch-1 ceiling is about 1015 tokens/s" in said
    assert "one row a token" not in said


def test_a_hybrids_layers_with_no_cache_are_not_called_recurrent(run: Run) -> None:
    # Nemotron-H-56B: 118 blocks, 10 attention (*), 54 Mamba2 (M), 54 MLP-only (-)
    said = refusal_text(run, "llama31-8b-h100", "--model", str(CONFIGS / "nemotron-h-56b"))
    assert "keeps KV on 10 of its 118 layers (54 are recurrent layers that keep a fixed " \
           "state, 54 are layers with no cache of their own)" in said
    assert "108 are recurrent" not in said


def test_calc_counts_a_hybrids_state_on_its_recurrent_layers_only(run: Run) -> None:
    said = flat(run("calc", "--model", str(CONFIGS / "nemotron-h-56b"), "--gpu", "h200",
                    "--gpus", "2", "--context", "8k").output)
    assert "8,450,048 state values in each of 54 recurrent ones (the other 54 keep no cache)" \
        in said


def test_a_gemma3_config_is_refused_a_draft_for_the_padded_vocabulary(run: Run, tmp_path: Path
                                                                       ) -> None:
    # Gemma-3-12B's published config (a shape no preset has), without MLX's 4-bit key
    config = json.loads((CONFIGS / "gemma3-12b-pt-4bit-mlx" / "config.json").read_text())
    del config["quantization"]
    (tmp_path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    said = refusal_text(run, "speculative-decoding", "--model", str(tmp_path))
    assert "Gemma-3-1B's table has 262,144 rows against the target's 262,208 (the same " \
           "tokenizer, padded differently)" in said
    assert "knows no draft model" not in said


def test_the_marketed_memorys_count_is_wrong_on_the_real_card_step(run: Run, tmp_path: Path
                                                                   ) -> None:
    # (80 × 0.9 − 4 − 16.06) GB ÷ 512 MiB = 96.7 on the marketed 80 GB; the driver's
    # 81,559 MiB (85.52 GB) gives 106: the step's point is the 10% between them
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text("sessions-real-card: 97\n", encoding="utf-8")
    result = run("grade", "llama31-8b-h100", "--answers", str(sheet), "--json", ok=False)
    assert '"verdict": "wrong"' in result.output


def test_a_later_steps_answer_is_not_said_to_be_copied(run: Run, tmp_path: Path) -> None:
    # 97 is the 70B follow-up's count, a step the candidate has not reached on the real-card one
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text("sessions-real-card: 97\n", encoding="utf-8")
    said = flat(run("grade", "llama31-8b-h100", "--answers", str(sheet), ok=False).output)
    assert "the answer to followup-70b-tp-sessions" not in said


def test_an_earlier_steps_answer_typed_again_is_still_said_to_be_copied(run: Run,
                                                                         tmp_path: Path
                                                                         ) -> None:
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text("sessions-real-card: 96\n", encoding="utf-8")
    said = flat(run("grade", "llama31-8b-h100", "--answers", str(sheet), ok=False).output)
    assert "It is the answer to sessions (96 sequences), not what this step asks for" in said


def test_the_rope_reach_is_said_as_kvdrills_rule(run: Run) -> None:
    said = refusal_text(run, "llama31-8b-h100", "--model",
                        str(Path(__file__).parent / "corpus" / "configs" / "Meta-Llama-3-8B"))
    assert "the furthest RoPE scaling is used" not in said
    assert "further than kvdrill stretches a trained context by RoPE scaling" in said


def test_a_config_folder_given_with_a_slash_is_named_once_in_suggestions(run: Run) -> None:
    said = refusal_text(run, "llama31-8b-h100", "--model", f"{CONFIGS / 'nemotron-h-56b'}/")
    assert "//config.json" not in said
    assert "nemotron-h-56b/config.json" in said


def test_a_float32_config_is_said_to_be_served_as_bf16(run: Run) -> None:
    said = flat(run("calc", "--model", str(CONFIGS / "olmo2-13b"), "--gpu", "h100").output)
    assert "native_weights_dtype bf16 default: torch_dtype float32 in the config, served as " \
           "bf16" in " ".join(said.split())


def test_calc_json_with_a_stated_weight_size_and_no_parameter_count_leaves_flops_out(
        run: Run) -> None:
    result = run("calc", "--layers", "32", "--kv-heads", "8", "--head-dim", "128",
                 "--weights-gb", "16", "--gpu", "h100", "--json")
    payload = json.loads(result.output)
    assert "prefill_flops" not in payload
    assert payload["max_concurrency"] > 0


def test_a_rounded_up_count_from_right_answers_is_not_right(run: Run, tmp_path: Path) -> None:
    # (expert pass 47, W1) Gemma-2-9B on an L40S: (48 × 0.9 − 4 − 18.48) GB ÷ 11.27 GB = 1.84,
    # so 1 full-context session fits; a right Mistral answer beside it made 2 "correct"
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text("mistral-per-sequence-full: 4.29 GB\ngemma-sessions-full: 2\n",
                     encoding="utf-8")
    said = flat(run("grade", "sliding-window-kv", "--gpu", "l40s", "--answers", str(sheet),
                    ok=False).output)
    assert "gemma-sessions-full 2 wrong" in " ".join(said.split())


def test_a_right_answer_is_not_named_as_carried_into_a_wrong_count(run: Run,
                                                                   tmp_path: Path) -> None:
    # variant 336502 on an A100-80GB: 51.5 GB ÷ 11.27 GB = 4.57, so 4 fit; 5 follows from no
    # wrong answer (the right Mistral one gives 4)
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text("mistral-per-sequence-full: 4.29 GB\ngemma-sessions-full: 5\n",
                     encoding="utf-8")
    said = flat(run("grade", "sliding-window-kv", "--variant", "336502", "--gpu", "a100-80gb",
                    "--answers", str(sheet), ok=False).output)
    assert "gemma-sessions-full 5 wrong" in " ".join(said.split())
    assert "follows from your answer to mistral-per-sequence-full" not in said


def test_an_error_on_the_drills_card_is_not_carried_into_a_step_pinned_to_another(
        run: Run) -> None:
    # (expert pass 47, W3) paged-blocks re-targeted at Qwen3-14B on an A100-40GB: the
    # co-located follow-up stays on Llama-3.1-8B and an H100, whose 141,024 tokens the
    # learner's A100 budget (4.77 GB, the GiB figure) does not touch
    sheet = CONFIGS.parent / "feedback_sheets_pass47" / "s12_paged_qwen3-14b_a100-40.yaml"
    said = flat(run("grade", "paged-blocks-vllm", "--model", "qwen3-14b", "--gpu", "a100-40gb",
                    "--answers", str(sheet), ok=False).output)
    assert "It follows from your answer to kv-budget, which gives 131,433 tokens" not in said
