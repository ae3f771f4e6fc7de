"""Every command the README and the docs/ pages show is run (issue 38), so no example drifts
from the code: each `sh` block's lines are read as the shell would split them (quotes, a
trailing `# comment`, `< file`, `> file`, `&&`), and each `kvdrill ...` is run in process, in
page order, against a scratch store and folder of its page's own. It must exit 0 (or the exit
the page gives it, see EXITS) without a traceback.

The scratch store is a newcomer's an hour in: attempt 1 of llama31-8b-h100, complete with a
skill missed (so `practice --weak` has one to drill); attempt 2 of llama2-70b-mi300x,
complete; attempt 3 of it, stopped part-way (so `practice --resume 3` resumes). The folder holds
what the examples read: `alice.json`, `bob.json`, `carol.json` and `transcript.json` exported
from a candidate's store, `my-answers.yaml` (a filled sheet of llama2-70b-mi300x), `mine.yaml`
(one of llama31-8b-h100 re-targeted at Qwen3-32B, from its key), two engine logs
(`vllm-startup.log`, `log.txt`), and `tests/` (the repository's, for `tests/corpus/...`). A line
whose comment says it runs "in each candidate's store" runs in that candidate's store.
Practice reads its answers from standard input, as piped: a drill's filled sheet where the
repository has one, else nothing (the attempt is saved, stopped)."""

from __future__ import annotations

import json
import re
import shlex
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result

from trainer.app.cli import cli
from trainer.store.database import FILE_NAME

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SHEETS = ROOT / "tests" / "sheets"
LOGS = ROOT / "tests" / "corpus" / "engine_logs"
SHELLS = ("sh", "bash", "shell", "console", "zsh")
# The set-up lines of the README (a venv, an install, the suite): run by a person, not here;
# tests/test_readme.py checks the first two lines are the ones .ci/run runs.
NOT_KVDRILL = ("python3", ".", "pip", "pytest")
CANDIDATE = "in each candidate's store"
# A command whose page says it exits otherwise: none today (grade exits 1 on a wrong sheet,
# and every sheet the pages grade is a right one).
EXITS: dict[str, int] = {}


@dataclass(frozen=True)
class Command:
    page: str
    line: str
    args: tuple[str, ...]
    stdin: str | None  # a file to read standard input from
    stdout: str | None  # a file standard output goes to
    comment: str
    env: tuple[tuple[str, str], ...] = ()


def shell_blocks(text: str) -> Iterator[str]:
    """The lines of the page's fenced shell blocks."""
    for match in re.finditer(r"^```(\w*)\n(.*?)^```", text, re.MULTILINE | re.DOTALL):
        if match.group(1) in SHELLS:
            yield from match.group(2).splitlines()


def parse(page: str, line: str) -> list[Command]:
    """A shell line's kvdrill commands, as the shell would split them."""
    code, comment = split_comment(line)
    lex = shlex.shlex(code, posix=True, punctuation_chars="<>|&;")
    lex.whitespace_split = True
    tokens = list(lex)
    commands = []
    part: list[str] = []
    for token in [*tokens, "&&"]:
        if token not in ("&&", ";"):
            part.append(token)
            continue
        if part:
            commands += _command(page, line, part, comment)
        part = []
    return commands


def split_comment(line: str) -> tuple[str, str]:
    """The line's code and its comment: a `#` that starts a word outside quotes."""
    quote = None
    for i, char in enumerate(line):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i], line[i + 1:].strip()
    return line, ""


def _command(page: str, line: str, tokens: list[str], comment: str) -> list[Command]:
    env = []
    while tokens and re.fullmatch(r"[A-Z_]+=\S*", tokens[0]):
        name, _, value = tokens.pop(0).partition("=")
        env.append((name, value))
    if "|" in tokens:  # `... kvdrill | source`: the shell's completion, what kvdrill prints
        tokens = tokens[:tokens.index("|")]
    if tokens[:1] == ["eval"]:  # eval "$(_KVDRILL_COMPLETE=bash_source kvdrill)"
        inner = tokens[1].removeprefix("$(").removesuffix(")")
        return _command(page, line, shlex.split(inner), comment)
    if not tokens or tokens[0] != "kvdrill":
        assert tokens and tokens[0] in NOT_KVDRILL, (page, line, tokens)
        return []
    stdin = stdout = None
    args: list[str] = []
    rest = iter(tokens[1:])
    for token in rest:
        if token == "<":
            stdin = next(rest)
        elif token == ">":
            stdout = next(rest)
        else:
            args.append(token)
    return [Command(page, line, tuple(args), stdin, stdout, comment, tuple(env))]


def page_commands(page: Path) -> list[Command]:
    text = page.read_text(encoding="utf-8")
    return [c for line in shell_blocks(text) for c in parse(page.name, line)]


ALL = [c for page in PAGES for c in page_commands(page)]


# -- the scratch stores and folder -------------------------------------------------------------

def _sheet(drill_id: str) -> dict[str, str]:
    data = yaml.safe_load((SHEETS / f"{drill_id}-correct.yaml").read_text(encoding="utf-8"))
    return {str(k): " ".join(str(v).split()) for k, v in data.items()}


def _answers(drill_id: str, changes: dict[str, str] | None = None) -> str:
    return "".join(f"{a}\n" for a in {**_sheet(drill_id), **(changes or {})}.values())


def _run(home: Path, args: list[str], input: str | None = None) -> Result:
    result = CliRunner().invoke(cli, args, input=input, catch_exceptions=False,
                                env={"KVDRILL_HOME": str(home), "KVDRILL_PAGER": "never"})
    assert result.exit_code == 0, (args, result.output, result.stderr)
    return result


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("docs-template")
    own, candidate = folder / "home", folder / "candidate"
    _run(own, ["practice", "llama31-8b-h100"],
         _answers("llama31-8b-h100", {"shape-kv-heads": "32", "bytes-per-token": "512 KiB"}))
    _run(own, ["practice", "llama2-70b-mi300x"], _answers("llama2-70b-mi300x"))
    _run(own, ["practice", "llama2-70b-mi300x"], "64 GB\n")  # stopped after one answer
    files = folder / "files"
    files.mkdir()
    # attempt 3 is alice's, the one interviewer.md exports as alice.json
    changes = [{"2b-dkv": "900"}, {"1a": "192 GB"}, {}, {"4a": "4"}]
    for name, change in zip(("bob", "carol", "alice", "transcript"), changes, strict=True):
        _run(candidate, ["practice", "llama2-70b-mi300x"], _answers("llama2-70b-mi300x", change))
        newest = json.loads(_run(candidate, ["history", "--json", "--limit", "1"]).stdout)[0]
        _run(candidate, ["export", str(newest["id"]), "--out", str(files / f"{name}.json")])
    (files / "my-answers.yaml").write_text(
        (SHEETS / "llama2-70b-mi300x-correct.yaml").read_text(encoding="utf-8"),
        encoding="utf-8")
    retargeted = ["--model", str(ROOT / "tests/corpus/configs/Qwen3-32B"), "--gpu",
                  "h200"]  # as calc.md grades
    empty = files / "empty.yaml"
    empty.write_text("{}\n", encoding="utf-8")
    key = CliRunner().invoke(cli, ["grade", "llama31-8b-h100", *retargeted, "--answers",
                                   str(empty), "--json"], env={"KVDRILL_HOME": str(own)})
    expected = {s["id"]: f"{s['expected']['value']} {s['expected']['unit']}".strip()
                for s in json.loads(key.stdout)["steps"] if s.get("expected")}
    (files / "mine.yaml").write_text(yaml.safe_dump(expected, allow_unicode=True),
                                     encoding="utf-8")
    empty.unlink()
    (files / "vllm-startup.log").write_text(
        (LOGS / "vllm-v1_llama31-8b_v0171.log").read_text(encoding="utf-8"), encoding="utf-8")
    (files / "log.txt").write_text(
        (LOGS / "vllm-v1_qwen3-32b_tp8_fp8kv.log").read_text(encoding="utf-8"),
        encoding="utf-8")
    return folder


def _copy_store(source: Path, target: Path) -> None:
    target.mkdir(parents=True)
    old, new = sqlite3.connect(source / FILE_NAME), sqlite3.connect(target / FILE_NAME)
    old.backup(new)
    old.close()
    new.close()


# -- the test -----------------------------------------------------------------------------------

def test_the_pages_show_commands(template: Path) -> None:
    shown = {c.page for c in ALL}
    assert {"README.md", "candidate.md", "interviewer.md", "reviewer.md", "calc.md"} <= shown
    assert len(ALL) >= 60, len(ALL)


@pytest.mark.parametrize("page", [p for p in PAGES if page_commands(p)], ids=lambda p: p.name)
def test_every_command_a_page_shows_runs(page: Path, template: Path, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    own, candidate = tmp_path / "home", tmp_path / "candidate"
    _copy_store(template / "home", own)
    _copy_store(template / "candidate", candidate)
    work = tmp_path / "work"
    work.mkdir()
    for file in (template / "files").iterdir():
        (work / file.name).write_bytes(file.read_bytes())
    (work / "tests").symlink_to(ROOT / "tests")
    monkeypatch.chdir(work)
    failed = []
    for command in page_commands(page):
        home = candidate if CANDIDATE in command.comment else own
        stdin = (work / command.stdin).read_text(encoding="utf-8") if command.stdin \
            else _practice_input(command.args)
        env = {"KVDRILL_HOME": str(home), "KVDRILL_PAGER": "never", **dict(command.env)}
        result = CliRunner().invoke(cli, list(command.args), input=stdin, env=env,
                                    prog_name="kvdrill")
        if command.stdout:
            (work / command.stdout).write_text(result.stdout, encoding="utf-8")
        wanted = EXITS.get(command.line, 0)
        if result.exit_code != wanted or (result.exception is not None
                                          and not isinstance(result.exception, SystemExit)):
            failed.append(f"{command.line}\n  exit {result.exit_code} (wanted {wanted}): "
                          f"{(result.stderr or result.stdout).strip()[-400:]}")
    assert not failed, f"{page.name}:\n" + "\n".join(failed)


def _practice_input(args: tuple[str, ...]) -> str:
    """What a piped `practice` reads: its drill's filled sheet, or nothing."""
    if not args or args[0] != "practice" or len(args) < 2 or args[1].startswith("-"):
        return ""
    sheet = SHEETS / f"{args[1]}-correct.yaml"
    return _answers(args[1]) if sheet.is_file() else ""


def test_a_line_is_split_as_the_shell_splits_it() -> None:
    (command,) = parse("p", 'kvdrill review 3 --set levers=2 --note "named FP8 aloud"  # why')
    assert command.args == ("review", "3", "--set", "levers=2", "--note", "named FP8 aloud")
    assert command.comment == "why"
    (command,) = parse("p", "kvdrill explain - -tp 4 < log.txt --json")
    assert (command.args, command.stdin) == (("explain", "-", "-tp", "4", "--json"), "log.txt")
    (command,) = parse("p", "kvdrill solution d --format md > s.md   # the same")
    assert (command.args, command.stdout) == (("solution", "d", "--format", "md"), "s.md")
    (command,) = parse("p", 'eval "$(_KVDRILL_COMPLETE=bash_source kvdrill)"  # ~/.bashrc')
    assert (command.args, command.env) == ((), (("_KVDRILL_COMPLETE", "bash_source"),))
    commands = parse("p", "python3 -m venv .venv && . .venv/bin/activate && pip install . "
                          "&& kvdrill practice d")
    assert [c.args for c in commands] == [("practice", "d")]
