"""The sixteenth expert pass (/tmp/w4/expert16.md) and the seventh blind feedback review
(/tmp/w4/feedback7.md): a twin of the measured model read as the checkpoint, a measurement
said to be of the target's shape, int8 weights called the lever that improves both where it
frees less than a sequence, a BF16 copy said to be more than a card holds, and a count on a
knife edge marked wrong for the rounding of its inputs. Each test fails on what was printed
before."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from click.testing import Result
from retarget_text import flat
from retarget_text import solution_text as _solution

Run = Callable[..., Result]


def test_the_measured_models_twin_reads_the_same_weights(run: Run) -> None:
    # Meta-Llama-3-8B is Llama-3.1-8B weight for weight: the step reads 15.01 GB, not 16.06
    text = _solution(run, "decode-roofline-vs-measured", "--model", "llama-3-8b")
    assert "16.06 − 1.05 = **15.01 GB**" in text and "**42.6%**" in text


def test_a_measurement_is_not_said_to_be_of_the_targets_shape(run: Run) -> None:
    text = flat(run("show", "prefill-vs-decode", "--model", "qwen2.5-7b").output)
    assert "same model shape" not in text and "with the Llama-3.1-8B shape" in text


def test_int8_weights_that_free_less_than_a_sequence_are_not_the_answer(run: Run) -> None:
    text = _solution(run, "llama2-70b-mi300x", "--model", "llama-3.2-3b", "--gpu", "l4")
    assert "The option that improves **both**" not in text
    assert "is less than one sequence's 3.76 GB of KV, so the card still holds 2 sequences" \
        in text


def test_int8_weights_stay_the_answer_where_they_pay(run: Run) -> None:
    text = _solution(run, "llama2-70b-mi300x")
    assert "The option that improves **both** concurrency and per-token latency the most on " \
           "the same card is **int8 weights**" in text


def test_the_bf16_copy_is_not_said_to_overflow_a_card_it_fits(run: Run) -> None:
    text = flat(run("show", "llama31-405b-h200-tp", "--gpu", "mi300x").output)
    assert "more than one card holds" not in text


def _graded(run: Run, tmp_path: Path, drill: str, answers: str) -> str:
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text(answers, encoding="utf-8")
    return run("grade", drill, "--answers", str(sheet), ok=False).output


def test_a_count_on_a_knife_edge_is_right_either_side(run: Run, tmp_path: Path) -> None:
    # 81,559 MiB and 16.06 GB shown give 106.0008; the unrounded weights give 105.9998
    out = _graded(run, tmp_path, "littles-law-capacity", "memory-sessions: 106\n")
    assert "106     correct" in out


def test_the_floor_itself_stays_right_on_a_knife_edge(run: Run, tmp_path: Path) -> None:
    out = _graded(run, tmp_path, "littles-law-capacity", "memory-sessions: 105\n")
    assert "105     correct" in out


def test_two_past_the_floor_is_still_rounded_up(run: Run, tmp_path: Path) -> None:
    out = _graded(run, tmp_path, "littles-law-capacity", "memory-sessions: 107\n")
    assert "107     wrong" in out


def test_a_count_from_the_budget_as_shown_is_right(run: Run, tmp_path: Path) -> None:
    # 19.8 GB ÷ 25.49 MB = 776.7; the unrounded 19.76 GB gives 775.1
    out = _graded(run, tmp_path, "hybrid-state-kv", "sessions-short: 776\n")
    assert "776     correct" in out


def test_a_count_clear_of_the_edge_keeps_its_floor(run: Run, tmp_path: Path) -> None:
    # 44 GB ÷ 10.7 GB = 4.1: five is a rounding up, not the inputs' rounding
    out = _graded(run, tmp_path, "llama2-70b-mi300x", "2b-max-sequences: 5\n")
    row = next(line for line in out.splitlines() if "2b-max-sequences " in line)
    assert "wrong" in row


def test_the_key_says_which_neighbour_is_as_right(run: Run, tmp_path: Path) -> None:
    out = tmp_path / "keys"
    run("variants", "littles-law-capacity", "--count", "108", "--seed", "1", "--out", str(out))
    keys = "".join(path.read_text(encoding="utf-8") for path in out.glob("*-key.md"))
    assert "106 is as right: the quotient, 105.9998, is within 0.25% of it" in keys


def test_a_count_past_the_engines_default_cap_says_so(run: Run) -> None:
    text = _solution(run, "llama31-8b-h100", "--model", "qwen2.5-0.5b", "--gpu", "h200")
    assert "vLLM runs at most max_num_seqs sequences at once: by default 1,024 on an NVIDIA " \
           "H200" in text
    # every count past it named, not only the largest (expert pass 19); the real card is the
    # H200's CUDA total, 150,109,880,320 B: (135.10 − 4 − 0.99 GB) ÷ 50.3 MB = 2,585 (pass 28)
    # (named by their counts, not their step ids: expert pass 31)
    assert "the counts of 2,422, 2,585 and 4,844 sequences above are past it" in \
        " ".join(text.split())


def test_an_a100_gets_the_smaller_default_cap(run: Run) -> None:
    text = _solution(run, "littles-law-capacity", "--model", "qwen2.5-0.5b", "--gpu",
                     "a100-80gb")
    assert "256 on an NVIDIA A100" in text


def test_counts_under_the_cap_get_no_note(run: Run) -> None:
    assert "The engine's cap" not in _solution(run, "llama31-8b-h100")


def test_a_thin_kv_budget_says_what_a_smaller_total_costs_it(run: Run) -> None:
    text = _solution(run, "paged-blocks-vllm", "--model", "qwen3-8b", "--gpu", "l4")
    assert "each 1% of that total is 16% of the KV cache here, so on this card read the " \
           "logged blocks" in text
