"""Issue 35, speculative decoding: the draft shares the target's tokenizer, so it is a small model
of the target's own family (serving_formulas.DRAFT_FAMILIES), with that model's real figures; a
family with no such model is refused by name. An MoE target's verification reads the experts
that its k + 1 tokens per sequence touch, 1 − (1 − k/E)^(B(k+1)) of them, not one decode step's
share, and the lesson (it pays, or it does not) follows the numbers."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from trainer.capacity.model_config import read_config
from trainer.capacity.presets import build_deployment, find_model, model_from_config, models
from trainer.capacity.serving_formulas import DRAFT_FAMILIES, DraftFamily, family_draft
from trainer.capacity.solver import value_of
from trainer.drills.loader import find_drill
from trainer.drills.reference import AnswerKey
from trainer.drills.variants import answer_key, make_target
from trainer.errors import KvdrillError
from trainer.reading.exact import Fraction

Run = Callable[..., Result]
CONFIGS = Path(__file__).parent / "corpus" / "configs"
SPEC = {"spec_tokens": 4, "acceptance_rate": Fraction(4, 5), "batch": 1, "context": 4096,
        "utilization": Fraction(9, 10), "reserve_gb": 6}


def key_for(model_id: str, gpu: str = "h200") -> AnswerKey:
    drill = find_drill("speculative-decoding")[0]
    return answer_key(drill, None, make_target(find_model(model_id), gpu))


# ---- The draft presets, each checked against its published config.json ------------------------


@pytest.mark.parametrize(("preset_id", "folder"), [("gemma-3-1b", "gemma-3-1b-it"),
                                                   ("gemma-2-2b", "gemma-2-2b-it")])
def test_a_draft_preset_reads_as_its_published_config(preset_id: str, folder: str) -> None:
    model = find_model(preset_id)
    read = read_config(CONFIGS / folder / "config.json").fields
    for name in ("layers", "hidden", "heads", "kv_heads", "head_dim", "vocab",
                 "tied_embeddings", "window", "windowed_layers", "params", "attention_params",
                 "max_context", "weights_dtype"):
        assert read[name] == getattr(model, name), name
    assert model.published_params == model.params  # keras-hub's exact counts
    assert folder in (CONFIGS / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("family", [f for f in DRAFT_FAMILIES if f.draft is not None],
                         ids=lambda f: f.name)
def test_every_family_draft_is_a_preset_of_that_family(family: DraftFamily) -> None:
    assert family.draft is not None
    assert family.draft in models() and family.draft.startswith(family.members)
    # (Gemma-3 names none: every larger Gemma-3 pads its table past its draft's)
    assert not family.larger or (family.larger in models()
                                 and family.larger.startswith(family.members))


# ---- The draft follows the target's family -----------------------------------------------------


@pytest.mark.parametrize(("target", "draft"), [
    ("llama-3.1-70b", "Llama-3.2-1B"), ("llama-3.1-8b", "Llama-3.2-1B"),
    ("llama-3-8b", "Llama-3.2-1B"), ("llama-3.3-nemotron-super-49b", "Llama-3.2-1B"),
    ("qwen3-32b", "Qwen3-0.6B"), ("qwen3-30b-a3b", "Qwen3-0.6B"), ("qwen3-8b", "Qwen3-0.6B"),
    ("qwen2.5-3b", "Qwen2.5-0.5B"), ("gemma-2-9b", "Gemma-2-2B"),
    ("gemma-2-27b", "Gemma-2-2B"),
])
def test_the_draft_is_the_targets_familys(target: str, draft: str) -> None:
    deployment = build_deployment(target, "b200", SPEC)[0]
    assert family_draft(deployment).name == draft
    expected = find_model(draft).params * 2
    assert value_of(deployment, "draft_weights_bytes") == expected


@pytest.mark.parametrize(("target", "rows"), [("qwen2.5-72b", "151,936 rows against the "
                                                                "target's 152,064"),
                                              ("gemma-3-27b", "262,144 rows against the "
                                                              "target's 262,208")])
def test_a_target_padded_past_its_drafts_table_has_no_draft(target: str, rows: str) -> None:
    # vLLM drafts only with a model of the target's vocabulary size: the same tokenizer,
    # padded to other rows, is refused (vllm-project/vllm issues #5203, #10913)
    draft = family_draft(build_deployment(target, "b200", SPEC)[0])
    assert draft.name is None and draft.why_none is not None and rows in draft.why_none


def test_the_draft_figures_are_the_draft_presets(run: Run, tmp_path: Path) -> None:
    # Gemma-3-1B: 999,885,952 × 2 B = 2.0 GB; 2 × 26 × 1 × 256 × 2 B = 26 KiB a token over all
    # layers; 22 layers keep 512 tokens, 4 keep 4,096: 1,024 B × (4 × 4,096 + 22 × 512) a
    # session. The target is Gemma-3-27B's config with its table cut to the draft's 262,144
    # rows (the release pads it to 262,208, which vLLM would refuse beside this draft).
    config = json.loads((CONFIGS / "gemma-3-27b-it" / "config.json").read_text("utf-8"))
    config["text_config"]["vocab_size"] = 262_144
    target = tmp_path / "config.json"
    target.write_text(json.dumps(config), encoding="utf-8")
    drill = find_drill("speculative-decoding")[0]
    key = answer_key(drill, None, make_target(model_from_config(target, str(target)), "h200"))
    assert key.reference("draft-weights").value == 999_885_952 * 2
    assert key.reference("draft-kv-per-token").value == 26_624
    assert value_of(key.base, "draft_kv_bytes_per_sequence") == 1024 * (4 * 4096 + 22 * 512)
    text = run("show", "speculative-decoding", "--model", str(target), "--gpu", "h200").output
    assert "with Gemma-3-1B as the draft" in text and "Llama" not in text
    assert "22 of its layers keep only a 512-token window" in text


@pytest.mark.parametrize("target", ["gpt-oss-20b", "gpt-oss-120b"])
def test_gpt_oss_is_refused_by_name(run: Run, target: str) -> None:
    result = run("show", "speculative-decoding", "--model", target, "--gpu", "b200", ok=False)
    assert result.exit_code == 2
    line = result.stderr.strip()
    assert "\n" not in line and "GPT-OSS's o200k_harmony tokenizer" in line
    if target == "gpt-oss-120b":  # GPT-OSS-20B shares it, and is refused for its slowdown
        assert "GPT-OSS-20B, is too large to gain anything" in line
        return
    assert "EAGLE" in line and ": choose a target whose family has a draft" in line


# (Mixtral drafts with Mistral-7B since stop 58: its solution says the slowdown)
def test_a_model_of_no_known_family_is_refused_in_one_sentence() -> None:
    with pytest.raises(KvdrillError) as refusal:
        key_for("phi-4", "b200")
    text = str(refusal.value)
    # no draft of the family at all
    assert "\n" not in text and "shares its tokenizer" in text
    assert text.rsplit(": ", 1)[-1].startswith("choose a target such as llama-3.3-70b")


def test_a_family_with_no_smaller_member_is_refused_for_that_in_one_sentence() -> None:
    with pytest.raises(KvdrillError) as refusal:
        key_for("deepseek-v2-lite", "b200")
    text = str(refusal.value)
    assert "\n" not in text and "no model smaller than DeepSeek-V2-Lite" in text
    assert text.rsplit(": ", 1)[-1].startswith(
        "choose a target whose family has a draft, such as llama-3.3-70b")


@pytest.mark.parametrize("target", ["llama-3.2-1b", "qwen3-0.6b", "qwen2.5-0.5b", "gemma-3-1b",
                                    "gemma-2-2b"])
def test_a_target_no_larger_than_its_draft_is_refused(target: str) -> None:
    with pytest.raises(KvdrillError, match=r"is the .* family's draft.*choose a (larger|target)"):
        key_for(target, "h100")


def test_a_draft_given_outright_is_kept() -> None:
    # calc or an old sheet that states its draft: the figures given, whatever the family
    given = {**SPEC, "draft_params": 8_030_261_248, "draft_layers": 32, "draft_kv_heads": 8,
             "draft_head_dim": 128}
    deployment = build_deployment("qwen3-32b", "b200", given)[0]
    assert value_of(deployment, "draft_weights_bytes") == 8_030_261_248 * 2
    assert value_of(deployment, "draft_kv_bytes_per_token") == 2 * 32 * 8 * 128 * 2


def test_a_model_read_from_its_config_drafts_as_its_preset() -> None:
    from trainer.capacity.presets import model_from_config

    model = model_from_config(CONFIGS / "Qwen3-32B" / "config.json", "Qwen3-32B")
    deployment = build_deployment(model, "b200", SPEC)[0]
    assert family_draft(deployment).name == "Qwen3-0.6B"


# ---- MoE verification --------------------------------------------------------------------------


def test_verifying_five_tokens_touches_27_6_percent_of_qwen3_30b_experts() -> None:
    key = key_for("qwen3-30b-a3b")
    share = value_of(key.base, "spec_verify_expert_share")
    assert share == 1 - Fraction(120, 128) ** 5
    assert float(share) == pytest.approx(0.276, abs=0.0005)
    assert value_of(key.base, "decode_expert_share") == Fraction(8, 128)


def test_an_moe_verification_reads_the_dense_part_and_the_experts_it_touches() -> None:
    # Qwen3-30B-A3B: 48 layers × 128 experts × 3 × 2,048 × 768 = 28,991,029,248 expert
    # parameters, 57.98 GB in bf16; the rest (attention, router, norms, tables) 3.08 GB, of
    # which a step reads all but the 151,936 × 2,048 embedding table (one row a token): 2.46 GB
    d = key_for("qwen3-30b-a3b").base
    experts = Fraction(28_991_029_248 * 2)
    dense = Fraction(30_532_122_624 * 2) - experts - 151_936 * 2_048 * 2
    assert value_of(d, "routed_expert_bytes") == experts
    assert value_of(d, "spec_verify_weights_bytes") == \
        dense + experts * (1 - Fraction(120, 128) ** 5)
    assert value_of(d, "weights_read_per_step") == dense + experts * Fraction(8, 128)


def test_the_moe_speed_up_is_a_slowdown_and_the_lesson_says_so(run: Run) -> None:
    # H200, batch 1: decode step (6.08 GB, the embedding table left out, + 0.40 GB of KV) ÷
    # 4.8 TB/s = 1.35 ms; verification (18.45 + 0.40 GB) ÷ 4.8 TB/s = 3.93 ms; Qwen3-0.6B's
    # step (1.19 + 0.46 GB) = 0.346 ms; 3.36 × 1.35 ÷ (4 × 0.346 + 3.93) = 0.855, not the
    # 3.36 × 1.35 ÷ (4 × 0.346 + 1.35) = 1.66 a decode-step-priced verification would give.
    key = key_for("qwen3-30b-a3b")
    d = key.base
    tb = Fraction("4.8") * 10**12
    kv = 4096 * 2 * 48 * 4 * 128 * 2
    experts = Fraction(28_991_029_248 * 2)
    dense = Fraction(30_532_122_624 * 2) - experts - 151_936 * 2_048 * 2
    decode = (dense + experts / 16 + kv) / tb
    verify = (dense + experts * (1 - Fraction(15, 16) ** 5) + kv) / tb
    draft = (596_049_920 * 2 + 4096 * 2 * 28 * 8 * 128 * 2) / tb
    expected = Fraction("3.3616") * decode / (4 * draft + verify)
    assert value_of(d, "spec_speedup") == expected
    assert float(expected) == pytest.approx(0.855, abs=0.001)
    text = " ".join(run("solution", "speculative-decoding", "--model", "qwen3-30b-a3b",
                        "--gpu", "h200").output.split())
    assert "Speculation does not pay here" in text and "Speculation pays" not in text
    assert "touch 27.6% of the experts" in text
    assert "Verifying k + 1 tokens reads the same weights and KV as one decode step" not in text


def test_a_dense_verification_costs_one_decode_step_and_pays(run: Run) -> None:
    key = key_for("qwen3-32b")
    assert value_of(key.base, "spec_verify_seconds") == value_of(key.base, "decode_step_seconds")
    text = " ".join(run("solution", "speculative-decoding", "--model", "qwen3-32b", "--gpu",
                        "h200").output.split())
    assert "Speculation pays here: a batch-1 user sees about 3.1×" in text
    assert "draft Qwen3-0.6B (" in text and "Llama" not in text


def test_the_default_drill_keeps_its_figures() -> None:
    # Llama-3.1-70B on an MI300X drafting with Llama-3.2-1B, as before the draft followed the
    # family: 2.47 GB, 32 KiB a token, 15 sessions
    key = answer_key(find_drill("speculative-decoding")[0], None)
    assert key.reference("draft-weights").value == 1_235_814_400 * 2
    assert key.reference("draft-kv-per-token").value == 32_768
    assert key.reference("sessions-with-draft").value == 15
