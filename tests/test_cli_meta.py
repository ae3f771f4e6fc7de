"""Properties of the command line as a whole: help everywhere, fast start, version."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click
import pytest
from click.testing import Result
from probes import imported_after

from trainer import __version__
from trainer.app.cli import cli


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
