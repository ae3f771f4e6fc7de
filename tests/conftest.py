"""Shared fixtures: the CLI runner, and the seeds' deployments built through the real presets."""

from __future__ import annotations

import compileall
import gc
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from trainer.app.cli import cli
from trainer.capacity.deployment import Deployment
from trainer.capacity.presets import build_deployment
from trainer.reading.exact import Fraction


def pytest_configure(config: pytest.Config) -> None:
    """The package's bytecode written once, before any test starts the CLI: a machine that
    sets PYTHONDONTWRITEBYTECODE (this one does) would otherwise have every one of the
    suite's hundreds of `kvdrill` processes compile the modules it imports from source,
    about a fifth of the CPU of the tests that start it (py_compile writes whatever the
    variable says; the interpreter still reads what is written)."""
    if not hasattr(config, "workerinput"):  # (the controller, once, not each xdist worker)
        compileall.compile_dir(Path(__file__).parent.parent / "trainer", quiet=2)


def pytest_collection_finish(session: pytest.Session) -> None:
    """The cycle collector off in each test process, after one last collection, with what
    collection built (modules, parsed drills and rubrics, thousands of test items) frozen out
    of its sight: it walked that heap over and over as the marking's caches grew, some 7% of
    the suite's time. Refcounting still frees nearly everything; a worker peaks near 1 GB."""
    gc.collect()
    gc.freeze()
    gc.disable()


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory: pytest.TempPathFactory,
                  monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads or writes the user's real attempts or caches."""
    monkeypatch.setenv("KVDRILL_HOME", str(tmp_path_factory.mktemp("kvdrill-home")))


@pytest.fixture
def run() -> Callable[..., Result]:
    """Invoke the real CLI in-process; success paths let exceptions through."""

    def invoke(*args: str, ok: bool = True, input: str | None = None) -> Result:
        result = CliRunner().invoke(cli, list(args), catch_exceptions=not ok, input=input)
        if ok:
            assert result.exit_code == 0, result.output + result.stderr
        return result

    return invoke


@pytest.fixture
def calc_json(run: Callable[..., Result]) -> Callable[..., dict[str, Any]]:
    def invoke(*args: str) -> dict[str, Any]:
        payload: dict[str, Any] = json.loads(run("calc", *args, "--json").output)
        return payload

    return invoke


def seed_8b_h100(**changes: Any) -> Deployment:
    """Seed 000: Llama-3.1-8B, BF16, one H100 80 GB, utilisation 0.9, ~4 GB headroom, 4k
    context, and the seed's round 16 GB of weights."""
    values: dict[str, Any] = {
        "utilization": Fraction(9, 10),
        "reserve_gb": Fraction(4),
        "context": 4096,
        "weights_gb": Fraction(16),
    }
    values.update(changes)
    return build_deployment("llama-3.1-8b", "h100", values)[0]


def seed_70b_mi300x(**changes: Any) -> Deployment:
    """Seed 002: a 70B (Llama-2-70B shape, 138 GB fp16) on one MI300X, 32k context, 10 GB
    reserve, GQA with 8 KV heads."""
    values: dict[str, Any] = {"context": 32768, "reserve_gb": Fraction(10)}
    values.update(changes)
    return build_deployment("llama2-70b", "mi300x", values)[0]
