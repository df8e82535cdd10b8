"""A small bundled conversation for ``memstrata demo`` and the docs."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any


def sample() -> Any:
    return json.loads(resources.files(__package__).joinpath("sample.json").read_text(encoding="utf-8"))
