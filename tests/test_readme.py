"""The README is the front door (issue 38): its first lines are the two set-up commands, the
second exactly the one `.ci/run` runs; it stays short and sends the rest to docs/ pages that
exist; and the examples it shows are what the code does (the interviewer's variant ids are the
ones its `--seed` draws, every answer in its table of accepted forms is marked right, every
runtime dependency is named with its reason)."""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
MAX_LINES = 300  # issue 38: a front door, not the manual
Run = Callable[..., Result]


def readme() -> str:
    return README.read_text(encoding="utf-8")


def section(text: str, heading: str) -> str:
    """The body of one `## heading` section, up to the next heading of its level or above."""
    start = text.index(f"\n## {heading}\n")
    rest = text[start + len(heading) + 5:]
    end = re.search(r"^#{1,2} ", rest, re.MULTILINE)
    return rest[:end.start()] if end else rest


def slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces to '-'."""
    text = heading.strip().lower().replace("`", "")
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", path.read_text(encoding="utf-8"),
                  flags=re.MULTILINE | re.DOTALL)
    return {slug(m.group(1)) for m in re.finditer(r"^#{1,6} (.+)$", text, re.MULTILINE)}


def test_the_first_lines_are_the_two_set_up_commands() -> None:
    lines = readme().splitlines()
    assert lines[0] == "# kvdrill" and lines[1] == "" and lines[2] == "```sh", lines[:3]
    install, test, close = lines[3], lines[4], lines[5]
    assert close == "```"
    assert install.startswith("python3 -m venv .venv && . .venv/bin/activate && pip install . "
                              "&& kvdrill practice "), install
    ci = ROOT / ".ci" / "run"
    if not ci.exists():
        pytest.skip(".ci/run is not in this copy (an sdist)")
    assert test in ci.read_text(encoding="utf-8").splitlines(), \
        f"the README's test command is not the line .ci/run runs: {test!r}"


def test_the_readme_is_short_and_links_to_docs_pages_that_exist() -> None:
    text = readme()
    assert len(text.splitlines()) <= MAX_LINES, \
        f"README.md is {len(text.splitlines())} lines; put the detail in docs/ and link to it"
    pages = set(re.findall(r"\]\((docs/[\w.-]+\.md)", text))
    assert len(pages) >= 3, pages
    for page in pages:
        assert (ROOT / page).is_file(), page


def test_every_relative_link_and_anchor_resolves() -> None:
    for source in [README, *sorted(DOCS.glob("*.md"))]:
        text = source.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue  # an address outside the repository
            path, _, anchor = target.partition("#")
            file = (source.parent / path).resolve() if path else source
            assert file.is_file(), (source.name, target)
            if anchor and file.suffix == ".md":
                assert anchor in anchors(file), (source.name, target, sorted(anchors(file)))


def test_the_interviewer_example_grades_a_variant_its_seed_draws(run: Run) -> None:
    drawn = json.loads(run("variants", "llama2-70b-mi300x", "--count", "5", "--seed", "42",
                           "--json").output)
    ids = [str(v["variant"]) for v in drawn["variants"]]
    for page in (README, DOCS / "interviewer.md"):
        text = page.read_text(encoding="utf-8")
        assert f"to interview/: {', '.join(ids)}" in text, (page.name, ids)
        shown = set(re.findall(r"--variant (\d+)", text)) | \
            set(re.findall(r"llama2-70b-mi300x-(\d+)-", text))
        assert shown and shown <= set(ids), (page.name, shown, ids)


def accepted_forms() -> list[tuple[str, str]]:
    """(step id, typed answer) for every form in the README's table of accepted answers."""
    body = section(readme(), "Your first hour, as a candidate")
    table = body[body.index("| step (reference) | typed |"):].split("\n\n", 1)[0]
    forms = []
    for row in table.splitlines()[2:]:
        step, typed = row.strip("|").split("|", 1)
        forms += [(step.split()[0], answer) for answer in re.findall(r"`([^`]+)`", typed)]
    return forms


def test_every_answer_the_readme_says_is_accepted_is_marked_right(
        run: Run, tmp_path: Path) -> None:
    forms = accepted_forms()
    assert len(forms) >= 20, forms
    sheet = tmp_path / "sheet.yaml"
    for step, typed in forms:
        sheet.write_text(f"{step}: {json.dumps(typed)}\n", encoding="utf-8")
        result = run("grade", "llama31-8b-h100", "--answers", str(sheet), "--json", ok=False)
        marked = {s["id"]: s["verdict"] for s in json.loads(result.output)["steps"]}
        assert marked[step] == "correct", (step, typed, marked[step])


def test_the_readme_says_why_each_runtime_dependency_is_here() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    names = [re.split(r"[<>=!~ \[]", d, maxsplit=1)[0] for d in project["dependencies"]]
    said = section(readme(), "Dependencies, and why each is here").lower()
    missing = [n for n in names if n.lower() not in said]
    assert not missing, f"README's dependency list does not name {missing}"
    assert "## Dependencies, and why each is here" in \
        (DOCS / "design-notes.md").read_text(encoding="utf-8")
