"""What the tool says of a wrong or unusual answer, from a second blind review of its feedback
(/tmp/feedback2.md: 18 candidates, 470 sentences judged): one explanation or none, and never
a story the sheet does not support. Each test failed on the feedback as it was."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from trainer.drills.loader import find_drill, load_rubric
from trainer.drills.reference import AnswerKey
from trainer.drills.variants import answer_key
from trainer.marking.checker import Mark, mark_sheet
from trainer.marking.scoring import score_attempt
from trainer.reading.exact import Fraction


@cache
def _key(drill_id: str):  # type: ignore[no-untyped-def]
    return answer_key(find_drill(drill_id)[0], None)


def marks(drill_id: str, answers: dict[str, str]) -> dict[str, Mark]:
    return mark_sheet(_key(drill_id), answers)


def red_flags(drill_id: str, answers: dict[str, str]) -> str:
    drill = find_drill(drill_id)[0]
    score = score_attempt(drill, load_rubric(drill.rubric), marks(drill_id, answers))
    return " ".join(says for _, says in score.red_flags)


def test_a_token_count_not_worked_out_from_bytes_gets_no_unit_mix() -> None:
    # 6,400 live tokens (the whole reply counted) is 1.042 × 6,144, inside MB/MiB's 1.049:
    # but prompt and history are counted in tokens, and no byte prefix can have slipped
    found = marks("multi-turn-growth", {"live-context": "6,400 tokens"})["live-context"]
    assert found.verdict == "wrong"
    assert not found.misconceptions and "MiB" not in found.feedback


def test_a_byte_figure_still_gets_its_unit_mix() -> None:
    found = marks("llama31-8b-h100", {"kv-budget": "48.4 GB"})["kv-budget"]
    assert "gb-gib" in found.misconceptions


def test_the_steps_own_mistake_is_named_alone_beside_an_unlisted_one_that_ties() -> None:
    # the latent stored twice and an fp32 cache both give 140,544 B; the step lists the first
    found = marks("deepseek-v3-mla-h200",
                  {"bytes-per-token-per-gpu": "140,544 B"})["bytes-per-token-per-gpu"]
    assert found.misconceptions == ("mla-kv-pair",)
    assert "fp32" not in found.feedback


def test_a_count_rounded_up_is_not_also_blamed_on_gib() -> None:
    # the candidate's other answers are right (the reserve and weights taken out): 11 for
    # 10.5 sessions is the rounding, not GB and GiB mixed as well
    found = marks("llama2-70b-mi300x", {"1a": "44 GB", "2b-max-sequences": "4", "4a": "8",
                                        "4b": "11", "4c": "32", "4d": "8"})["4b"]
    assert found.misconceptions == ("rounded-up",) and "GiB" not in found.feedback


def test_carried_forward_quotes_the_value_the_candidates_figures_give() -> None:
    found = marks("paged-blocks-vllm", {
        "bytes-per-token": "128 KiB", "block-bytes": "2 MiB", "blocks-per-request": "62.5",
        "kv-budget": "52 GB", "num-blocks": "24,795",
        "engine-max-concurrency": "48.4"})["engine-max-concurrency"]
    assert found.carried_forward and "gives 48.4 here" in found.feedback


def test_the_cards_datasheet_memory_is_not_called_another_cards() -> None:
    # paged-blocks-vllm sizes by the H100's driver total (85.52 GB): 80 GB is its datasheet
    found = marks("paged-blocks-vllm", {"kv-budget": "52 GB"})["kv-budget"]
    assert "an H100's" not in found.feedback
    assert "datasheet" in found.feedback


def test_a_hybrids_state_on_every_layer_is_named() -> None:
    # Jamba's state counted on all 32 layers, not its 28 Mamba layers: not "Qwen3-8B's 36"
    found = marks("hybrid-state-kv", {"state-per-sequence": "9.96 MB"})["state-per-sequence"]
    assert found.misconceptions == ("state-on-every-layer",)
    assert "Qwen3" not in found.feedback


def test_an_moes_active_share_taken_as_its_weights_is_named() -> None:
    found = marks("mixtral-moe-decode", {"resident-weights": "25.8 GB"})["resident-weights"]
    assert found.misconceptions == ("moe-active-as-resident",)


def test_half_a_kv_head_per_gpu_is_a_red_flag() -> None:
    flagged = red_flags("llama31-405b-h200-tp", {"why-less": (
        "Per GPU, each card holds half a KV head, so per-token bytes per GPU halve.")})
    assert "cannot hold half a KV head" in flagged


def test_whole_heads_are_no_red_flag() -> None:
    flagged = red_flags("llama31-405b-h200-tp", {"why-less": (
        "A GPU cannot hold half a KV head: past TP=8 each GPU keeps a whole copy of one, so "
        "the KV per token per GPU stays 31.5 KiB.")})
    assert "half a KV head" not in flagged


def test_an_moe_said_to_cost_a_13b_in_memory_and_bandwidth_is_a_red_flag() -> None:
    flagged = red_flags("mixtral-moe-decode", {"what-moe-saves": (
        "Mixtral only needs the 12.9B active parameters per token, so it costs the same as a "
        "13B dense model in memory and in bandwidth.")})
    assert "MoE does not save memory" in flagged


def test_head_dim_taken_as_hidden_over_heads_is_a_red_flag() -> None:
    assert "hidden ÷ heads" in red_flags("sliding-window-kv", {"gemma-head-dim": "224"})


def test_a_round_guess_gets_no_slip_within_a_rounding_window() -> None:
    # 100 KiB for 128 KiB: one significant figure, 4% from what 24 layers give (96 KiB)
    found = marks("prefix-caching", {"bytes-per-token": "100 KiB"})["bytes-per-token"]
    assert "slip" not in found.feedback.lower()
    found = marks("speculative-decoding", {"spec-breakeven": "100"})["spec-breakeven"]
    assert "acceptance" not in found.feedback


def test_another_models_figure_is_not_named_after_a_model_the_drill_never_names() -> None:
    found = marks("prefix-caching", {"bytes-per-token": "96 KiB"})["bytes-per-token"]
    assert "as if the model had 24 layers." in found.feedback
    assert "GPT-OSS" not in found.feedback


def test_the_drills_own_other_model_is_still_named() -> None:
    found = marks("sliding-window-kv", {"mistral-per-token": "168 KiB"})["mistral-per-token"]
    assert "(Gemma-2-9B's)" in found.feedback


def test_a_links_bits_for_bytes_names_the_link_of_the_step() -> None:
    found = marks("disaggregated-prefill", {"transfer-ethernet": "5.37 ms"})["transfer-ethernet"]
    assert "(100 Gb/s is 12.5 GB/s, not 100)" in found.feedback
    assert "InfiniBand" not in found.feedback


# A third blind review (/tmp/feedback3.md, 543 sentences)

def test_a_round_guess_is_not_called_right_in_gib() -> None:
    # 100 GB for a 109.8 GB budget (102.2 GiB), paged-blocks-vllm on Qwen3-8B and an H200:
    # one significant figure is no unit mix
    from trainer.capacity.presets import model_of
    from trainer.drills.variants import make_target

    key = answer_key(find_drill("paged-blocks-vllm")[0], 60314,
                     make_target(model_of("qwen3-8b"), "h200"))
    found = mark_sheet(key, {"kv-budget": "100 GB"})["kv-budget"]
    assert "gb-gib" not in found.misconceptions


def test_a_round_guess_raises_no_red_flag() -> None:
    # a bare 2 for X = 1.08 on the colocated card: forgot-weights gives 2.007, not 2 itself
    assert "weights" not in red_flags("paged-blocks-vllm", {"colocated-x": "2"})


def test_two_causes_of_one_number_with_the_steps_own_argued_against_name_neither() -> None:
    # 128 KiB for Jamba's 16: every layer counted (the step's own mistake, though 4 attention
    # layers were answered right) or bits for bytes: both give it
    found = marks("hybrid-state-kv", {"attention-layers": "4",
                                      "kv-per-token": "128 KiB"})["kv-per-token"]
    assert not found.misconceptions and found.diagnosis is None
    assert "none is named" in found.feedback


def test_the_mistake_made_on_an_earlier_step_is_the_one_named_again() -> None:
    # 1a without the reserve (54 GB), then 4e's 22: the reserve again, not a rounding up
    found = marks("llama2-70b-mi300x", {"1a": "54 GB", "4e": "22"})["4e"]
    assert found.misconceptions == ("forgot-reserve",)


def test_a_red_flag_holds_the_level_at_the_first() -> None:
    # numbers and levers of a Senior, and a red flag (FP8 KV claimed to help latency too)
    import yaml

    from trainer.drills.loader import load_rubric

    sheet = Path(__file__).parent / "corpus" / "feedback_sheets" / \
        "llama2-70b-fp8-kv-claim.yaml"
    answers = {step: str(answer) for step, answer in
               yaml.safe_load(sheet.read_text(encoding="utf-8")).items()}
    drill = find_drill("llama2-70b-mi300x")[0]
    rubric = load_rubric(drill.rubric)
    # its numbers made right (Solid needs the sessions computed, not carried from 1a's slip)
    key = AnswerKey(drill)
    answers.update({step.id: key.reference(step.id).display for step in drill.steps
                    if step.kind == "numeric" and step.id[0] in "1234"})
    score = score_attempt(drill, rubric, marks("llama2-70b-mi300x", answers))
    assert score.red_flags
    assert score.level == rubric.levels[0].id
    assert "a red flag holds it there; without it, Senior" in score.sounds_like


def test_half_a_kv_head_typed_as_a_number_is_named_and_flagged() -> None:
    found = marks("llama31-405b-h200-tp", {"kv-heads-per-gpu-tp16": "0.5"})
    assert found["kv-heads-per-gpu-tp16"].misconceptions == ("kv-head-split",)
    assert "Split a KV head across GPUs" in red_flags("llama31-405b-h200-tp",
                                                      {"kv-heads-per-gpu-tp16": "0.5"})


def test_an_moe_said_to_save_memory_too_is_a_red_flag() -> None:
    flagged = red_flags("mixtral-moe-decode", {"what-moe-saves": (
        "It saves memory too, since only the active experts need to be on the GPU.")})
    assert flagged


def test_littles_law_misstated_is_a_red_flag() -> None:
    assert red_flags("littles-law-capacity", {"plan": (
        "Little's law says throughput equals latency, so 30 requests/s means 30 slots.")})


def test_fp8_kv_said_to_quadruple_capacity_is_a_red_flag() -> None:
    assert red_flags("llama31-8b-h100", {"policy": (
        "FP8 KV quadruples capacity because it also lets the engine skip the scale factors, "
        "so ~350 sessions.")})


def test_a_retargeted_figure_in_the_mentions_sentence_quantifies_it() -> None:
    # Qwen3-30B-A3B in the Mixtral drill: its 61 GB is no figure the rubric lists
    from trainer.capacity.presets import model_of
    from trainer.drills.loader import load_rubric
    from trainer.drills.variants import make_target
    from trainer.marking.prose import mentions
    from trainer.marking.scoring import drill_figures

    drill = find_drill("mixtral-moe-decode")[0]
    key = answer_key(drill, 328680, make_target(model_of("qwen3-30b-a3b"), "h200"))
    text = "Memory: nothing. All 128 experts per layer stay resident, 61 GB, same as a dense 30B."
    figures = drill_figures(drill, mark_sheet(key, {"what-moe-saves": text}))
    concept = load_rubric(drill.rubric).concept("all-experts-resident")
    assert concept is not None
    found = mentions(concept, text, figures)
    assert found and found[0].credit > Fraction(1, 2)
