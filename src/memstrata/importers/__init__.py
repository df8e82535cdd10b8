"""Importers: turn history files (seed JSON, LoCoMo) into sessions of ``NewMessage`` for capture.

Parsing only: no I/O and no store access. The caller decodes the JSON and captures the sessions.
"""

from memstrata.importers.detect import FORMATS, detect_format, parse_import
from memstrata.importers.locomo import parse_locomo
from memstrata.importers.seed import parse_seed
from memstrata.importers.types import ImportSession

__all__ = ["FORMATS", "ImportSession", "detect_format", "parse_import", "parse_locomo", "parse_seed"]
