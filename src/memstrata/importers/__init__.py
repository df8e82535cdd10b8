"""Importers: turn history files (seed JSON, LoCoMo) into sessions of ``NewMessage`` for capture, and
read a TencentDB-Agent-Memory data directory (``read_tdai``) into messages, atoms, scenes and personas.

Parsing only: no store access. The caller decodes the JSON and captures the sessions; a TDAI
directory is written into a memory by ``AsyncMemory.import_tdai``.
"""

from memstrata.importers.detect import FORMATS, detect_format, parse_import
from memstrata.importers.locomo import parse_locomo
from memstrata.importers.seed import parse_seed
from memstrata.importers.tdai import SkippedLine, TdaiData, TdaiImportReport, TdaiProfile, read_tdai
from memstrata.importers.types import ImportSession

__all__ = [
    "FORMATS",
    "ImportSession",
    "SkippedLine",
    "TdaiData",
    "TdaiImportReport",
    "TdaiProfile",
    "detect_format",
    "parse_import",
    "parse_locomo",
    "parse_seed",
    "read_tdai",
]
