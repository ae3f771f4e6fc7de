"""Every variant renders (issue 23): for every drill, a dozen variants drawn (the whole space
where it is smaller) give a candidate's sheet, a key, the key as a sheet, a blank sheet and the
variants' JSON without an error; and a variant that cannot render leaves no files behind."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from trainer.drills.loader import drill_paths, find_drill
from trainer.drills.reference import AnswerKey
from trainer.drills.variants import space_size
from trainer.views import keys

Run = Callable[..., Result]
DRILLS = [path.stem for path in drill_paths()]
PER_DRILL = 6  # two seeds: a dozen variants a drill, the whole space where smaller


@pytest.mark.parametrize("drill_id", DRILLS)
def test_every_drawn_variant_renders_every_file(drill_id: str) -> None:
    drill, _ = find_drill(drill_id)
    count = min(PER_DRILL, space_size(drill))
    for seed in (1, 2):
        for variant, givens in keys.pick_variants(drill, count, seed):
            key = AnswerKey(drill, givens)
            assert keys.sheet_markdown(key, variant).strip()
            assert str(variant) in keys.key_markdown(key, variant)
            assert keys.key_as_sheet(key, variant).startswith(f"drill: {drill.id}\n")
            assert f"variant: {variant}" in keys.blank_sheet(key, variant)
            json.dumps(keys.variant_json(key, variant), allow_nan=False)


def test_a_variant_that_cannot_render_leaves_no_files(run: Run, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    calls = {"n": 0}
    real = keys.key_markdown

    def fails_on_the_second(key: AnswerKey, variant: int | None) -> str:
        calls["n"] += 1
        if calls["n"] == 2:
            raise ValueError("a key that cannot be rendered")
        return real(key, variant)

    monkeypatch.setattr(keys, "key_markdown", fails_on_the_second)
    out = tmp_path / "out"
    result = run("variants", "llama2-70b-mi300x", "--count", "3", "--out", str(out), ok=False)
    assert result.exit_code == 1 and "internal error" in result.stderr
    assert not out.exists() or list(out.iterdir()) == []


def test_lint_fails_on_a_drill_whose_tolerance_swallows_a_listed_mistake(tmp_path: Path) -> None:
    from trainer.marking.lint import lint_paths

    source = drill_paths()[0].parent / "swap-or-recompute.yaml"
    copy = tmp_path / "swap-or-recompute.yaml"
    text = source.read_text(encoding="utf-8")
    assert "tolerance: 2%  # all parameters" in text
    copy.write_text(text.replace("tolerance: 2%  # all parameters", "tolerance: 10%  # all",
                                 1), encoding="utf-8")
    errors = " ".join(error for report in lint_paths([copy]) for error in report.errors)
    assert "step mha-crossover: its listed mistake 'all-params-per-prompt-token' gives 36,590" \
        in errors and "can never be named" in errors
