"""A decode step of an MoE model reads its experts at the experts' own bytes: an MXFP4
checkpoint quantizes the experts alone (GPT-OSS keeps attention, router, embedding and LM head
in BF16), so one token's read is the BF16 rest plus 4 of 128 experts at 17/32 B, not the
checkpoint scaled by active ÷ total. Through the real CLI."""

from __future__ import annotations

import json
from collections.abc import Callable

from click.testing import Result

Run = Callable[..., Result]


def read_at_batch_1(run: Run, model: str) -> dict[str, float]:
    out: dict[str, float] = json.loads(run("calc", "--model", model, "--gpu", "h100",
                                           "--batch", "1", "--json").output)
    return out


def test_gpt_oss_120b_batch1_reads_the_bf16_rest_and_four_mxfp4_experts(run: Run) -> None:
    # 5,711,982,912 active params = 2,167,371,072 that are not experts + 3,544,611,840 of the
    # 4 experts a token uses; read: 2,167,371,072 × 2 B + 3,544,611,840 × 17/32 B
    # = 4,334,742,144 + 1,883,075,040 = 6,217,817,184 B, less the 201,088 × 2,880 × 2 B
    # embedding table a token reads one row of (1,158,266,880 B): 5,059,550,304 B
    assert read_at_batch_1(run, "gpt-oss-120b")["weights_read_per_step"] == 5_059_550_304


def test_gpt_oss_120b_batch1_read_is_not_the_checkpoint_scaled(run: Run) -> None:
    # 65.25 GB × 5.71 / 116.83 = 3.19 GB would key the step 1.9× too fast
    read = read_at_batch_1(run, "gpt-oss-120b")["weights_read_per_step"]
    assert 4.9e9 <= read <= 6.3e9


def test_a_uniform_moe_checkpoint_reads_its_share_of_the_weights(run: Run) -> None:
    # Mixtral-8x7B in bf16: one price per parameter, so active bytes = active params × 2 B
    out = json.loads(run("calc", "--model", "mixtral-8x7b", "--gpu", "h200", "--batch", "1",
                         "--json").output)
    assert out["assumptions"]["active_params"]["value"] * 2 == out["weights_read_per_step"]
