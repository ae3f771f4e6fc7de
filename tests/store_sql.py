"""What the reliability tests do to a store behind kvdrill's back: one SQL statement on the
isolated store (conftest's KVDRILL_HOME), committed."""

from __future__ import annotations

import sqlite3
from typing import Any

from trainer.store.database import default_path


def store_sql(statement: str, *args: Any) -> None:
    conn = sqlite3.connect(default_path())
    conn.execute(statement, args)
    conn.commit()
    conn.close()
