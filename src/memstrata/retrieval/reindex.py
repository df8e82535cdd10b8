"""Rebuilding what the search index holds from the stored rows, when the definition of its texts
changed (``retrieval/documents.py``).

``INDEX_VERSION`` names that definition; the store records the version its index was built from
(a store filled before versions were recorded reads 1). Version 2: a message's keyword text keeps
the previous turn for short messages only and indexes code blocks as their words; a nameless
speaker's first person is left as said in both texts and the vector (not renamed "User").
Version 3: a message of up to 500 characters (was 300) keeps the previous turn in its keyword text.
Version 4: an assistant's message is embedded from its first words (``ASSISTANT_VECTOR_WORDS``).
``memstrata reindex`` rewrites every message's keyword text and, on a store older than
``MESSAGE_VECTORS_SINCE``, re-embeds every message (an atom's vector text is the same in all);
until then the older texts and vectors are searched as they are, and ``status`` asks for it
(``stale_index``).
"""

from __future__ import annotations

from memstrata.models import Layer, MessageFilter
from memstrata.ports import SearchIndex, Store
from memstrata.retrieval.documents import message_body

INDEX_VERSION = 4
MESSAGE_VECTORS_SINCE = 4  # the version that last changed what a message's vector is made from
_PAGE = 500


def stale_index(index: SearchIndex) -> str | None:
    """What ``status`` says when the index was built from an older definition of its texts."""
    version = index.index_version()
    if version >= INDEX_VERSION:
        return None
    return (
        f"the search index holds texts of an older definition (version {version}, now {INDEX_VERSION}):"
        " run `memstrata reindex`"
    )


def rewrite_keyword_texts(store: Store, *, with_previous: bool) -> int:
    """Rewrite the keyword text of every message, session by session (each with the turn before
    it); returns how many."""
    done = 0
    for tenant, session_key in store.messages.sessions(None):
        previous, after = None, 0
        while batch := store.messages.after(tenant, session_key, after, _PAGE):
            texts: dict[int, str] = {}
            for m in batch:
                texts[m.seq] = message_body(m, previous, with_previous=with_previous)
                previous = m
            store.index.rewrite_texts(Layer.L0, texts)
            done += len(batch)
            after = batch[-1].seq
    return done


def drop_message_vectors(store: Store) -> int:
    """Forget every message's vector (the embedding backlog, or ``reindex``, makes them again from
    the current texts); returns how many messages."""
    done = 0
    for tenant in store.tenants():
        after = 0
        while page := store.messages.list(tenant, MessageFilter(), limit=_PAGE, after_seq=after):
            store.index.drop_vectors(tenant, Layer.L0, [m.seq for m in page])
            done += len(page)
            after = page[-1].seq
    return done
