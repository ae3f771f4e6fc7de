"""A config.json's fields read with their types checked and every failure named by file and
field: the one place a number from a config becomes a count kvdrill computes with."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from trainer.errors import UsageError

# No layer, head or width count of a real model is near it; a position limit may be (Llama-4
# Scout: 10,485,760 tokens), so it has its own.
MAX_COUNT = 10**7
MAX_LAYERS = 10_000  # the capacity model's own bound; read first, before any list of layers
MAX_POSITIONS = 2**31
MAX_VOCAB = 10**8


class ConfigError(UsageError):
    """A config.json that cannot be read or that lacks what sizing the model needs (exit 2)."""


class JsonConstant(str):
    """NaN or Infinity as a file wrote it: not a number any count accepts."""


class Fields:
    """A config's fields (the text part's first, then the top level's) read with their types
    checked and every failure named by file and field."""

    def __init__(self, text: Mapping[str, Any], top: Mapping[str, Any], where: str,
                 defaults: Mapping[str, Any]) -> None:
        self.text, self.top, self.where, self.defaults = text, top, where, defaults
        self.notes: list[str] = []
        # fields the config leaves out and the engine's default fills: name -> how
        self.assumed: dict[str, str] = {}

    def error(self, message: str) -> ConfigError:
        return ConfigError(f"{self.where}: {message}")

    def raw(self, name: str) -> Any:
        if name in self.text:
            return self.text[name]
        return self.top.get(name)

    def has(self, name: str) -> bool:
        return self.raw(name) is not None

    def count(self, name: str, *, required: bool = False, least: int = 1,
              most: int = MAX_COUNT) -> int | None:
        value = self.raw(name)
        if value is None:
            default = self.defaults.get(name)
            if default is not None:
                self.notes.append(f"{name} {default:,}: not in the file, the default of its "
                                  "model type in transformers (as vLLM loads it)")
                return int(default)
            if required:
                raise self.error(f"no {name}: kvdrill cannot size a model without it (is this "
                                 "a model's config.json?)")
            return None
        if isinstance(value, JsonConstant):
            raise self.error(f"{name} is {value}, not a number JSON allows: fix the file")
        if isinstance(value, bool) or not isinstance(value, int | float) or \
                (isinstance(value, float) and not value.is_integer()):
            raise self.error(f"{name} is {shown(value)}, not a whole number")
        number = int(value)
        if not least <= number <= most:
            raise self.error(f"{name} {number:,} is outside what a model can have "
                             f"({least:,} to {most:,})")
        return number

    def flag(self, name: str, default: bool) -> bool:
        value = self.raw(name)
        if value is None:
            default = bool(self.defaults.get(name, default))
            return default
        if not isinstance(value, bool):
            raise self.error(f"{name} is {shown(value)}, not true or false")
        return value

    def count_of(self, *names: str, required: bool = False,
                 most: int = MAX_COUNT) -> int | None:
        """The count under the first of `names` the config has or defaults (ChatGLM writes
        padded_vocab_size for vocab_size), noted when it is not the first; refused naming the
        first when required and none is there."""
        name = next((name for name in names
                     if self.raw(name) is not None or name in self.defaults), names[0])
        value = self.count(name, required=required, most=most)
        if value is not None and name != names[0]:
            self.notes.append(f"{name} {value:,} read as {names[0]}: the same field under "
                              "another name")
        return value

    def first_count(self, *names: str, required: bool = False, least: int = 1) -> int | None:
        """The count under the first of `names` the config has (models spell one field many
        ways); refused naming the first name when required and none is there."""
        for name in names:
            if self.raw(name) is not None or name in self.defaults:
                return self.count(name, least=least)
        if required:
            raise self.error(f"no {names[0]}: kvdrill cannot size this layer without it")
        return None

    def text_value(self, name: str) -> str | None:
        value = self.raw(name)
        if value is None:
            return None
        if not isinstance(value, str) or len(value) > 200:
            raise self.error(f"{name} is {shown(value)}, not a name")
        return value

    def int_list(self, name: str, most: int) -> list[int]:
        value = self.raw(name)
        if value is None:
            return []
        if not isinstance(value, list) or len(value) > most or any(
                isinstance(item, bool) or not isinstance(item, int) for item in value):
            raise self.error(f"{name} is {shown(value)}, not a list of layer numbers")
        return list(value)


def shown(value: Any) -> str:
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 40 else text[:39] + "…"
