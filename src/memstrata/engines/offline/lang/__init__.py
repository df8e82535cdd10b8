"""The offline engine's language packs, registered here: what the engine writes differently per
language (``engines/offline/packs.Rules``), keyed by the language's code in ``memstrata.lang``.

English (``en``) holds its framing words; its other rules are the engine's
own (``l1/``, ``l2/``, ``l3/``). Chinese (``zh``) has its own extraction, topics and wording in
``lang/zh``. A language of ``memstrata.lang`` without an engine pack is written by the engine's
own rules; one that needs its own adds a pack beside these and registers it below.
"""

from __future__ import annotations

from memstrata.engines.offline import packs
from memstrata.engines.offline.lang import en, zh
from memstrata.engines.offline.packs import Rules, pack_for

__all__ = ["Rules", "pack_for"]

packs.register(en.ENGLISH)
packs.register(zh.CHINESE)
