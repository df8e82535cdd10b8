"""Recall: the context injected before a prompt, assembled from the layers within ONE budget.

    system_context   <user-persona> the persona profile (L3) </user-persona>
                     <scene-navigation> one line per scene (L2) </scene-navigation>
                     <memory-tools-guide> how to search further </memory-tools-guide>
    prepend_context  <relevant-memories>
                     - [date] memory (L1 atoms and L0 messages, one item each, best first)
                     </relevant-memories>

``text`` formats one memory, ``select`` picks the memories, ``excerpt`` finds a scene excerpt,
``assemble`` shares the budget, ``sources`` says where a tenant's recall reads from, ``gather``
reads them within the timeout, ``heat`` warms the scenes a recall showed. Pure except ``gather``'s concurrency; the facade supplies the sources.
"""

from memstrata.recall.assemble import (
    MAX_SEARCH_CALLS_PER_TURN,
    TOOLS_GUIDE,
    Budgets,
    Memories,
    memories_block,
    navigation_lines,
    system_block,
)
from memstrata.recall.explain import matched_words
from memstrata.recall.gather import RecallResult, Sources, gather
from memstrata.recall.heat import HeatLedger, heated, warm_scenes
from memstrata.recall.select import SelectOptions, content_terms, select
from memstrata.recall.sources import recall_sources
from memstrata.recall.text import cut, memory_line, when

__all__ = [
    "MAX_SEARCH_CALLS_PER_TURN",
    "TOOLS_GUIDE",
    "Budgets",
    "HeatLedger",
    "Memories",
    "RecallResult",
    "SelectOptions",
    "Sources",
    "content_terms",
    "cut",
    "gather",
    "heated",
    "matched_words",
    "memories_block",
    "memory_line",
    "navigation_lines",
    "recall_sources",
    "select",
    "system_block",
    "warm_scenes",
    "when",
]
