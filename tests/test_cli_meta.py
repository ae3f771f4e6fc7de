"""Properties of the command line as a whole: help everywhere, fast start, version."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import click
import pytest
from click.testing import Result
from probes import imported_after

from trainer import __version__
from trainer.app.cli import cli, collects_as_it_runs


def _commands() -> list[tuple[str, click.Command]]:
    assert isinstance(cli, click.Group)
    ctx = click.Context(cli)
    found = [(name, cli.get_command(ctx, name)) for name in cli.list_commands(ctx)]
    return [(name, command) for name, command in found if command is not None]


def test_every_command_is_listed() -> None:
    ctx = click.Context(cli)
    assert len(_commands()) == len(cli.list_commands(ctx)) == 17


def test_every_command_module_command_is_in_the_group() -> None:
    import importlib
    import pkgutil

    import trainer.app.commands as package

    defined = set()
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        defined |= {value for value in vars(module).values() if isinstance(value, click.Command)}
    assert defined == {command for _, command in _commands()}


@pytest.mark.parametrize(("name", "command"), _commands())
def test_every_command_has_a_docstring(name: str, command: click.Command) -> None:
    assert command.help and len(command.help.strip()) > 20, name


@pytest.mark.parametrize(("name", "command"), _commands())
def test_every_option_has_help(name: str, command: click.Command) -> None:
    for param in command.params:
        if isinstance(param, click.Option) and not param.hidden:
            assert param.help, f"{name} {param.opts}"


@pytest.mark.parametrize(("name", "command"), _commands())
def test_every_command_that_prints_data_has_json(name: str, command: click.Command) -> None:
    options = {opt for param in command.params for opt in param.opts}
    prints_data = name in {"list", "show", "calc", "grade", "variants", "history", "next",
                           "lint", "review", "progress"}
    if prints_data:
        assert "--json" in options or "--format" in options, name


def test_version_prints_the_package_version(run: Callable[..., Result]) -> None:
    assert run("--version").output.strip() == f"kvdrill, version {__version__}"


def test_no_arguments_shows_help(run: Callable[..., Result]) -> None:
    assert "Commands:" in run().output


def test_an_unknown_command_is_a_one_line_usage_error(run: Callable[..., Result]) -> None:
    result = run("frobnicate", ok=False)
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: No such command 'frobnicate'")
    assert result.stderr.count("\n") == 1


@pytest.mark.parametrize("args", [["--help"], ["calc", "--help"], ["list"], ["list", "--json"],
                                  ["calc", "--model", "llama-3.1-8b", "--gpu", "h100"],
                                  ["practice", "llama31-8b-h100"]])
def test_start_up_does_not_import_sympy(args: list[str], tmp_path: Path) -> None:
    assert imported_after(args, tmp_path, ("sympy",)) == []


@pytest.mark.parametrize(("args", "collects"), [
    (["practice", "llama31-8b-h100"], True),
    (["--version"], False),
    (["grade", "llama2-70b-mi300x", "--answers", "sheet.yaml"], False),
    (["variants", "littles-law-capacity", "--count", "108"], False),
    (["lint"], False),
    ([], False),
])
def test_only_practice_keeps_the_cycle_collector_running(args: list[str],
                                                         collects: bool) -> None:
    # a person answers at their own pace; every other command does a bounded job and ends
    assert collects_as_it_runs(args) is collects


def test_a_one_shot_command_runs_with_the_collector_off(tmp_path: Path) -> None:
    code = ("import gc, sys\n"
            "sys.argv = ['kvdrill', 'list', '--json']\n"
            "from trainer.app.cli import main\n"
            "try:\n    main()\n"
            "except SystemExit as end:\n"
            "    sys.stderr.write(f'code={end.code} collecting={gc.isenabled()}')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=dict(os.environ, KVDRILL_HOME=str(tmp_path)), check=False)
    assert done.stderr.endswith("code=0 collecting=False"), done.stderr
