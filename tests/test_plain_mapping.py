"""An answer sheet of plain `step: answer` lines is read without PyYAML (issue 39): wherever
the plain reader gives a mapping, it is exactly the one the YAML route gives (yaml.safe_load,
then numbers kept as typed), value types included; wherever the YAML route refuses a sheet, the
plain reader leaves it to YAML. Checked on every sheet and answer the tests hold, on values and
keys chosen to trip a YAML subset reader, and on lines made at random from awkward characters."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import yaml

from trainer.drills.loader import parse_yaml
from trainer.errors import KvdrillError
from trainer.files.plain_mapping import plain_mapping
from trainer.marking.grading import SHEET_FIELDS, _numbers_as_typed

TESTS = Path(__file__).parent
CORPUS = TESTS / "corpus"


def by_yaml(text: str) -> object:
    """What grading reads a sheet as through YAML, or the refusal's class."""
    try:
        return _numbers_as_typed(parse_yaml(Path("sheet.yaml"), text, "answer sheet"), text)
    except KvdrillError as refusal:
        return type(refusal)


def by_plain(text: str) -> object:
    return plain_mapping(text, numeric_fields=("variant",), fields=SHEET_FIELDS)


def typed(data: object) -> object:
    """The data with each value's type beside it (1 and "1" differ; so do None and "")."""
    if not isinstance(data, dict):
        return data
    return {(type(key), key): (type(value), value) for key, value in data.items()}


def assert_same(text: str) -> None:
    plain = by_plain(text)
    if plain is not None:
        assert typed(plain) == typed(by_yaml(text)), text


def answers_typed() -> list[str]:
    """Every answer as typed in the numeric corpora and the expert passes' sheets."""
    found: list[str] = []
    for name in ("numeric_answers.yaml", "blind_numeric_answers.yaml",
                 "blind_random_answers.yaml", "slips.yaml", "world_slips.yaml"):
        data = yaml.safe_load((CORPUS / name).read_text(encoding="utf-8"))
        entries = data.get("entries", data) if isinstance(data, dict) else data
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, dict) and isinstance(entry.get("answer"), str):
                found.append(entry["answer"])
    hostile = (CORPUS / "hostile_answers.txt").read_text(encoding="utf-8").splitlines()
    return found + [line for line in hostile if line and not line.startswith("# ")]


# Values chosen to trip a reader of a YAML subset: YAML 1.1's other types, indicators, quotes,
# comments, colons, and what tired people type
AWKWARD_VALUES = [
    "44", "44 GB", "= 52 GB", "~190", "~", "≈ 97", "8x", "x8", "<1%", "< 1%", "<<", "=",
    "yes", "No", "ON", "off", "true", "False", "null", "Null", "NULL", "y", "n", "Yes please",
    "040", "0x60", "0b101", "1_000", "1:0:8", "1:30", "12:30 ms", ".5", "5.", "1.2.3", "1e3",
    "1.5e+3", "+5", "-5", "- 5", ".inf", "-.inf", ".nan", ".NaN", "2024-01-02",
    "2024-1-2 10:00:00", "2024-01-02T10:00:00Z", "2024-01-02 later",
    "'8'", '"8"', "'it''s 8'", "'a #b'", '"a: b"', '"tab\\t"', '"q\\"q"', "'unclosed",
    '"unclosed', "it's 8", 'say "8"', "52 GB # weights", "52 GB #1", "52#1", "# only a comment",
    "a: b", "ratio:", "ratio: 8", "16:9", "[1, 2]", "{a: 1}", "a, b", "&anchor 8", "*alias",
    "!!python/object:os.system", "!tag 8", "|", ">", "|-", "%d", "@home", "`8`", "? 8", ": 8",
    "-8 GB", "8 [GB]", "8 {GB}", "(80-16)/0.66", "$8", "/8", "2 * 64 * 8 * 128 * 2 = 262144",
    "80*.9-16-4 = 52gb", "about 96-99", "189 sesions w/ the quantized weights", "96, so 1 card",
    "½", "8 × 2", "café", "naïve", "≈", "\u00a08", "8\u00a0GB", "8\u200b", "日本", "😀 8",
    "\u2028", "\u0085", "\ufeff8", "\x7f", "\x1b[31m8", "a\\b", "C:\\path",
]

AWKWARD_KEYS = [
    "1a", "2a-dkv", "3b_aggregate", "variant", "drill", "target", "target_digest", "yes", "on",
    "No", "null", "0x1a", "0b1", "1", "1e5", "2024-01-02", "1.5", "a.b", "a b", "-a", "_a",
    "A1", "step", "1A", "0o7", "Ab-", "y", "n",
]


@pytest.mark.parametrize("value", AWKWARD_VALUES)
def test_an_awkward_value_reads_as_yaml_reads_it(value: str) -> None:
    assert_same(f"drill: llama31-8b-h100\n1a: {value}\n1b: 32\n")


@pytest.mark.parametrize("key", AWKWARD_KEYS)
def test_an_awkward_key_reads_as_yaml_reads_it(key: str) -> None:
    assert_same(f"{key}: 44 GB\n")


@pytest.mark.parametrize("variant", ["5", "0", "05", "0x5", "1_0", "-5", "5.0", "'5'", "", "~",
                                     "null", "five", "123456789012345678901234567890"])
def test_the_variant_line_reads_as_yaml_reads_it(variant: str) -> None:
    assert_same(f"drill: llama2-70b-mi300x\nvariant: {variant}\n1a: 36.9 GB\n")


@pytest.mark.parametrize("digest", ["0123456789abcdef", "1234567890123456", "abcdef0123456789",
                                    "0b10101010101010", "0x23456789abcdef"])
def test_a_field_that_may_be_a_number_reads_as_yaml_reads_it(digest: str) -> None:
    assert_same(f"target: Qwen3-32B on NVIDIA H100\ntarget_digest: {digest}\n1a: 8\n")


@pytest.mark.parametrize("layout", [
    "1a: 44\n1a: 45\n",            # a key twice: YAML's route refuses it
    "1a: 44\n  1b: 45\n",          # an indented line continues a value
    "1a: 44\r\n1b: 45\r\n",        # Windows line ends
    "1a:44\n",                     # no space: one plain scalar, not a mapping
    "1a : 44\n",
    "1a:\t44\n",
    "1a: 44\t\n",
    "---\n1a: 44\n",
    "1a: 44\n...\n",
    "%YAML 1.1\n---\n1a: 44\n",
    "# a comment\n\n   \n1a: 44\n   # indented comment\n",
    "1a: |\n  44 GB\n",
    "1a: >\n  44 GB\n",
    "1a:\n  - 44\n",
    "1a: 44\n\0",
    "",
    "# nothing but a comment\n",
    "1a: " + "9" * 5000 + "\n",
    "1a: " + "x" * 500 + "\n",
])
def test_a_sheet_laid_out_otherwise_reads_as_yaml_reads_it(layout: str) -> None:
    assert_same(layout)


def test_every_sheet_the_tests_hold_reads_as_yaml_reads_it() -> None:
    sheets = sorted(TESTS.glob("sheets/*.yaml")) + sorted(CORPUS.glob("feedback_sheets*/*.yaml"))
    assert len(sheets) >= 20
    read_plainly = 0
    for path in sheets:
        text = path.read_text(encoding="utf-8")
        assert_same(text)
        read_plainly += by_plain(text) is not None
    assert read_plainly >= 20  # the fast route is the usual one, not a rare one


def test_every_answer_the_corpora_hold_reads_as_yaml_reads_it() -> None:
    answers = answers_typed()
    assert len(answers) > 1000
    for answer in answers:
        if "\n" not in answer:
            assert_same(f"1a: {answer}\n")


def test_lines_made_at_random_from_awkward_characters_read_as_yaml_reads_them() -> None:
    alphabet = [*"aZ09 .:-#'\"~=<>!&*|%@`[]{},?\\/\t", "≈", "\u00a0", "\u0085", "😀"]
    chooser = random.Random(39)
    for _ in range(3000):
        value = "".join(chooser.choice(alphabet) for _ in range(chooser.randint(0, 8)))
        key = chooser.choice(["1a", "variant", "drill", "yes", "2b-x"])
        assert_same(f"{key}: {value}\n1b: 8\n")


def test_a_sheet_variants_writes_is_read_without_yaml() -> None:
    text = ("drill: llama2-70b-mi300x\nvariant: 555592\n1a: 36.9 GB\n2a-dkv: 8,192\n"
            "2c-ratio: '8'\n3a-step-time: 32.7 ms\n4a: 13 sequences\n")
    assert by_plain(text) == {"drill": "llama2-70b-mi300x", "variant": 555592, "1a": "36.9 GB",
                              "2a-dkv": "8,192", "2c-ratio": "8", "3a-step-time": "32.7 ms",
                              "4a": "13 sequences"}
