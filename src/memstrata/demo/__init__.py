"""A small bundled conversation for ``memstrata demo`` and the docs."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

SAMPLES = {"en": "sample.json", "zh": "sample_zh.json"}


def sample(lang: str = "en") -> Any:
    """The bundled conversation in ``lang`` (``en``: Maya in Lisbon; ``zh``: 小王 in 深圳)."""
    name = SAMPLES[lang]
    return json.loads(resources.files(__package__).joinpath(name).read_text(encoding="utf-8"))
