"""The offline engine: deterministic L1 extraction and deduplication, no network, no model.

OfflineExtractor      Extractor port: sentences -> standalone atoms (speaker named, dates resolved)
OfflineDeduplicator   Deduplicator port: normalised equality and token-set similarity
"""

from memstrata.engines.offline.dedup import OfflineDeduplicator
from memstrata.engines.offline.extract import OfflineExtractor, extract_window

__all__ = ["OfflineDeduplicator", "OfflineExtractor", "extract_window"]
