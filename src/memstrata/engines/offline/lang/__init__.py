"""The offline engine's bundled language packs: what the engine writes differently per language
(``engines/offline/packs.Rules``).

English (``en``) holds its framing words; its other rules are the engine's own (``l1/``, ``l2/``,
``l3/``). Chinese (``zh``) has its own extraction, topics and wording in ``lang/zh``. Nothing is
registered here: each language's pack in ``memstrata.lang`` names its engine pack
(``engines={"offline": "memstrata.engines.offline.lang.zh:CHINESE"}``) and the engine's table
(``packs``) imports it when it first meets the language. A language that names none is written by
the default language's rules; a third language with rules of its own adds a pack beside these
(or anywhere importable) and names it in its ``memstrata.lang`` pack.
"""

from __future__ import annotations

from memstrata.engines.offline.packs import Rules, pack_for

__all__ = ["Rules", "pack_for"]
