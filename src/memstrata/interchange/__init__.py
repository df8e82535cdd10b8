"""Data in and out of a memory, every format in one place.

    sessions   ``ImportSession`` / ``ImportReport``: history as sessions of ``NewMessage``
    seed       seed JSON into sessions          locomo   the LoCoMo dataset into sessions
    detect     which of them a file is
    tdai/      TencentDB-Agent-Memory directories: read, load into a store, write
    collect    every layer of a tenant, read through the ports (any backend), for an export
    jsonl      the ``jsonl`` export layout (one file per layer, a manifest), and back
    files      an export folder's layout and manifest
    migrate/   a whole memory from one store to another, verified per layer

Parsers never touch a store; what writes into one (``tdai.load``, ``migrate``) takes its ports.
Records as JSON lines (``models.lines``) live with the records, since the store's mirror writes
them too. Both export layouts import into an empty directory identically: messages (ids,
sessions, times, speakers, store times), atoms (ids, versions, supersession, sources, metadata,
pins, expiry), scenes (META and body), scene membership and the persona; store seqs are new.
"""

from memstrata.interchange.detect import FORMATS, detect_format, parse_import
from memstrata.interchange.locomo import parse_locomo
from memstrata.interchange.seed import parse_seed
from memstrata.interchange.sessions import ImportSession
from memstrata.interchange.tdai.read import SkippedLine, TdaiData, TdaiImportReport, TdaiProfile, read_tdai

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
