"""What the config-reader tests share: a published config.json with fields changed or taken
out, written where a test can name it, and the notes calc says of it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CONFIGS = Path(__file__).parent / "corpus" / "configs"
DROP = object()  # a field taken out of the file


def config_with(tmp_path: Path, source: str, **changes: Any) -> str:
    config = json.loads((CONFIGS / source / "config.json").read_text(encoding="utf-8"))
    for name, value in changes.items():
        if value is DROP:
            config.pop(name)
        else:
            config[name] = value
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return str(path)


def notes(payload: dict[str, Any]) -> str:
    return " ".join(payload["config"]["notes"])
