"""The offline engine: deterministic, no network, no model. Grouped by the layer it writes:

l1/  OfflineExtractor      Extractor port: sentences -> standalone atoms (speaker named, dates resolved)
     OfflineDeduplicator   Deduplicator port: normalised equality and token-set similarity
l2/  OfflineSceneWriter    SceneWriter port: atoms grouped into topic scenes, rendered as Markdown
l3/  OfflinePersonaWriter  PersonaWriter port: the persona profile from atoms and scenes

Shared by the layers: ``lexicon`` (word lists) and ``atom_text`` (readable text from atoms).
Per language: ``packs`` (the table, found through ``memstrata.lang``'s packs) and ``lang/`` (the
bundled engine packs, imported when a language is first met).
The work is done by plain synchronous functions (``extract_window``, ``decide_duplicates``); the
port classes only wrap them.
"""

from memstrata.engines.offline.l1.dedup import OfflineDeduplicator
from memstrata.engines.offline.l1.dedup import decide as decide_duplicates
from memstrata.engines.offline.l1.extract import ExtractOptions, OfflineExtractor, extract_window
from memstrata.engines.offline.l2.writer import OfflineSceneWriter
from memstrata.engines.offline.l3.writer import OfflinePersonaWriter

__all__ = [
    "ExtractOptions",
    "OfflineDeduplicator",
    "OfflineExtractor",
    "OfflinePersonaWriter",
    "OfflineSceneWriter",
    "decide_duplicates",
    "extract_window",
]
