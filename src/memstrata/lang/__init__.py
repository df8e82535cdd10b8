"""The language seam: every language-specific rule memstrata applies outside a model, one pack per
language, in one table.

A consumer (search terms, recall's wording and quoting, the embedder choice, the offline engine)
asks the table (``language_of``, ``get``, ``stopwords``, ``runs``) and never names a language or
a script itself; a test holds every module outside ``memstrata/lang`` and the engine's packs
(``engines/offline/lang``) to that. A third language is a new pack (``memstrata/lang/<code>``, a
``Language``) registered below, and that one ``register`` is all: for the offline engine to
extract and write it with rules of its own, the pack names the engine's pack
(``engines={"offline": "module:attribute"}``), which the engine imports when it first meets the
language; a pack naming none is written by the default language's rules.

The bundled packs: English (``en``, the default: a text no other pack claims is English) and
Chinese (``zh``: jieba cuts its runs).
"""

from __future__ import annotations

from memstrata.lang import en, zh
from memstrata.lang.pack import Language
from memstrata.lang.registry import (
    colons,
    default,
    get,
    language_of,
    languages,
    register,
    runs,
    sentence_ends,
    stopwords,
    turn_owner,
    turn_words,
    unregister,
)

__all__ = [
    "Language",
    "colons",
    "default",
    "get",
    "language_of",
    "languages",
    "register",
    "runs",
    "sentence_ends",
    "stopwords",
    "turn_owner",
    "turn_words",
    "unregister",
]

register(en.ENGLISH, default=True)
register(zh.CHINESE)
