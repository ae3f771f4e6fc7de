"""The candidate's view of a drill: the situation, the givens and the questions, filled in for
the drill's own givens or a variant, and never an answer."""

from __future__ import annotations

from typing import Any

from trainer.drills.placeholders import fill, placeholders
from trainer.drills.reference import AnswerKey


def prompt_of(key: AnswerKey, step_id: str) -> str:
    return fill(key.drill.step(step_id).prompt, key.display_givens())


def situation_of(key: AnswerKey) -> str:
    text = fill(key.drill.situation, key.display_givens()).strip()
    if key.retargeted:
        # the label names the target as stored ("… on its own GPU"); the sheet names the card
        # this variant drew
        shown = key.retargeted.replace(" on its own GPU",
                                       f" on {key.display_givens().get('gpu_name', 'its GPU')}")
        if "positions_note" not in placeholders(key.drill.situation) \
                and (note := key.positions_note()):
            # a context past the target's positions, where the situation has no place for it
            text += f"\n\n{note}"
        own = key.drill.givens.get("model")
        drawn = key.givens.get("model")
        if shown.startswith("its own model on ") and (drawn == own or not drawn):
            # only the card moved
            text += (f"\n\nRe-targeted at {shown.removeprefix('its own model on ')}: every "
                     "number is this card's; the model is the drill's own.")
        elif shown.startswith("its own model on "):
            # only the card moved, and this variant drew another of the drill's models
            # (swap-or-recompute's Qwen2.5-7B): not "the drill's own" (expert pass 58, W3)
            text += (f"\n\nRe-targeted at {shown.removeprefix('its own model on ')}: every "
                     f"number is this card's and {key.display_givens()['model_name']}'s, a "
                     "model this drill's variants draw in place of its own.")
        else:
            text += (f"\n\nRe-targeted at {shown}: every number is that model's and "
                     "card's; a hint written for the drill's own model may not fit it.")
    return text


# A drill that asks for the model's shape must not print it among the givens.
SHAPE_ANSWERS = {"layers", "heads", "kv_heads", "head_dim", "kv_bytes_per_element"}


def givens_lines(key: AnswerKey) -> list[str]:
    """The givens a candidate may use, as a short list."""
    g = key.display_givens()
    d = key.base
    asks_shape = any(step.answer in SHAPE_ANSWERS for step in key.drill.steps)
    shape = "" if asks_shape else (
        f" — {g['layers']} layers, {g['heads']} query heads, {g['kv_heads']} KV heads, "
        f"head_dim {g['head_dim']}, hidden {g['hidden']}"
    )
    if shape and d.attention == "mla":  # no KV heads: one latent and one RoPE key a layer
        shape = (f" — {g['layers']} layers, {g['heads']} query heads, MLA caching a "
                 f"{d.mla_latent}-element latent and a {d.mla_rope}-element RoPE key per "
                 f"layer, hidden {g['hidden']}")
    if shape and d.window is not None and d.windowed_layers:
        layers = "every layer" if d.windowed_layers == d.layers else \
            f"{d.windowed_layers} of {d.layers} layers"
        model = key.givens.get("model")
        chunked = bool(model) and _chunked(str(model))
        shape += (f", attention within {g['window']}-token chunks on {layers}" if chunked else
                  f", sliding window {g['window']} tokens on {layers}")
    # A drill that gives a measured bandwidth shows the card's datasheet figure on the GPU
    # line and the measured rate as a given of its own, never one as the other.
    measured = g["bandwidth_tbs"] != g["bandwidth_datasheet_tbs"]
    card_tbs = g["bandwidth_datasheet_tbs"] + " TB/s on the datasheet" if measured else \
        g["bandwidth_tbs"] + " TB/s"
    # A variant sized on the memory the driver reports says so beside the marketed figure.
    memory = f"{g['hbm_gb']} GB"
    if g.get("hbm_marketed_gb") not in (None, g["hbm_gb"]):
        memory += f" as the driver reports it ({g['hbm_marketed_gb']} GB marketed)"
    lines = [
        f"model: {g['model_name']}{shape}",
        f"weights: {g['weights_gb']} GB ({g['weights_dtype']})" + (
            f"; a decode step{_of_its_batch(key)} reads {g['weights_read_gb']} GB "
            f"(not {unread})"
            if (unread := _unread_by_a_step(key)) and g['weights_read_gb'] != g['weights_gb']
            else ""),
        # (Intel sells Gaudi 3 as an accelerator: the line says what the card is)
        f"{'accelerator' if g.get('gpu_cards') == 'accelerators' else 'GPU'}: "
        f"{g['gpus']} × {g['gpu_name']} — {memory}, {card_tbs}",
        # a drill that asks for the live context must not print it among the givens
        f"KV cache dtype {g['kv_dtype']}" if any(
            step.answer == "context" and "context" not in step.with_
            for step in key.drill.steps)
        else f"context: {g['context']} tokens; KV cache dtype {g['kv_dtype']}",
    ]
    if measured:
        lines.append(f"measured bandwidth: {g['bandwidth_tbs']} TB/s (the steps use this)")
    serving = []
    if d.utilization != 1:
        serving.append(f"memory utilization {g['utilization']}")
    if d.reserve_gb:
        serving.append(f"reserve {g['reserve_gb']} GB per GPU")
    if serving:
        lines.append("serving: " + ", ".join(serving))
    return lines


def drill_json(key: AnswerKey, variant: int | None) -> dict[str, Any]:
    drill = key.drill
    return {
        "id": drill.id,
        "title": key.title(),
        "variant": variant,
        "target_minutes": drill.target_minutes,
        "tags": list(drill.tags),
        "situation": situation_of(key),
        "givens": key.display_givens(),
        "steps": [
            {"id": s.id, "kind": s.kind, "prompt": prompt_of(key, s.id), "unit": s.unit,
             "seconds": s.seconds}
            for s in drill.steps
        ],
    }


def drill_text(key: AnswerKey, variant: int | None, width: int | None = None) -> str:
    """The drill as the candidate reads it; for a terminal of `width` columns the situation's
    paragraphs are filled anew (their line breaks were made for the drill file)."""
    from trainer.text_layout import reflow

    drill = key.drill
    title = key.title(variant)
    lines = [title, f"Target: {drill.target_minutes} minutes", "",
             reflow(situation_of(key), width), "", "Given:"]
    lines += [f"  {line}" for line in givens_lines(key)]
    lines.append("")
    for step in drill.steps:  # labelled by step id, as the prompts refer to them
        unit = f" [{step.unit}]" if step.unit else ""
        kind = " (text)" if step.kind == "text" else ""
        lines.append(f"{step.id}{kind}{unit} · {step.seconds}s")
        for part in prompt_of(key, step.id).strip().splitlines():
            lines.append(f"    {part}")
    return "\n".join(lines)


# below this share of experts touched, the untouched ones are said among what a step skips
_ALL_EXPERTS = 0.9995


def _unread_by_a_step(key: AnswerKey) -> str:
    """What of the weights a decode step does not read, in words: the embedding table (one
    row per sequence is gathered), a vision tower, experts the batch is not routed to."""
    from trainer.capacity.solver import value_of

    d = key.base
    # (a model with no vocabulary known has a table of unknown size, counted in the read)
    unread = [] if d.reads_embedding or not value_of(d, "embedding_table_bytes") \
        else ["the embedding table"]
    if d.vision_params:
        unread.append("the vision tower")
    if d.experts is not None and float(value_of(d, "decode_expert_share")) < _ALL_EXPERTS:
        unread.append("the experts its batch is not routed to")
    return ", ".join(unread[:-1]) + (" or " if len(unread) > 1 else "") + unread[-1] \
        if unread else ""


def _of_its_batch(key: AnswerKey) -> str:
    """" of 83 sequences" where what a step reads depends on its batch (an MoE's experts:
    a few sequences touch few of them, as a drill's steps may ask)."""
    from trainer.capacity.solver import value_of
    from trainer.reading.numbers import format_number

    if key.base.experts is None:
        return ""
    batch = value_of(key.base, "batch_size")
    return f" of {format_number(batch)} sequence{'' if batch == 1 else 's'}"


def _chunked(model: str) -> bool:
    """Whether the model's local layers attend within chunks (Llama-4), not a sliding window."""
    from trainer.capacity.presets import model_of
    from trainer.errors import KvdrillError

    try:
        return bool(model_of(model).chunked_attention)
    except KvdrillError:
        return False

