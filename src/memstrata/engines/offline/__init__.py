"""The offline engine: deterministic L1 extraction and deduplication, no network, no model.

OfflineExtractor      Extractor port: sentences -> standalone atoms (speaker named, dates resolved)
OfflineDeduplicator   Deduplicator port: normalised equality and token-set similarity

The work is done by plain synchronous functions (``extract_window``, ``decide_duplicates``); the
port classes only wrap them.
"""

from memstrata.engines.offline.dedup import OfflineDeduplicator
from memstrata.engines.offline.dedup import decide as decide_duplicates
from memstrata.engines.offline.extract import ExtractOptions, OfflineExtractor, extract_window

__all__ = ["ExtractOptions", "OfflineDeduplicator", "OfflineExtractor", "decide_duplicates", "extract_window"]
