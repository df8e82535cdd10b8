"""BERT's uncased WordPiece tokenizer in plain Python, equal to the ``tokenizers`` one MiniLM ships.

Why not the ``tokenizers`` package: it and its hub client add more installed size than the whole
model, and tokenizing is a small share of an embedding. This module reproduces the bundled
``tokenizer.json`` pipeline step by step (``BertNormalizer``: drop control characters, map
whitespace to spaces, space out CJK ideographs, strip accents (NFD, drop Mn), lowercase char by
char; ``BertPreTokenizer``: split on whitespace and isolate punctuation; ``WordPiece`` with ``##``
continuations, ``[UNK]`` for words over 100 characters or without a split), and a test compares it
with ``tokenizers`` on real conversations and hostile Unicode.

Tokenizing is lazy: it stops once ``max_length`` pieces are produced, so a 50 MB message costs the
same as its first few hundred words.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections.abc import Iterator, Sequence
from functools import lru_cache
from pathlib import Path

from memstrata.errors import EmbeddingError

# Unicode White_Space less the control characters among it (VT, FF, NEL), which the normalizer
# deletes instead: exactly the characters BERT turns into a separating space.
_SPACES = "\t\n\r \xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
_WORDS = re.compile(f"[^{_SPACES}]+")
_ASCII_PUNCT = frozenset(string.punctuation)
_CJK = (
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F),
    (0x2B920, 0x2CEAF),
    (0xF900, 0xFAFF),
    (0x2F800, 0x2FA1F),
)
# Control, format, private-use and surrogate: the characters the normalizer deletes. Unassigned
# code points (Cn) are kept, as the Rust implementation does (they become [UNK]).
_DELETED = frozenset({"Cc", "Cf", "Co", "Cs"})
_MAX_WORD_CHARS = 100
_CACHE_WORDS = 1 << 16


def _is_cjk(ch: str) -> bool:
    code = ord(ch)
    return any(lo <= code <= hi for lo, hi in _CJK)


def _is_punct(ch: str) -> bool:
    return ch in _ASCII_PUNCT or unicodedata.category(ch).startswith("P")


def _normalise(chunk: str) -> list[str]:
    """A non-ASCII whitespace-free chunk -> its normalised pre-tokens (CJK and punctuation split)."""
    cleaned = "".join(ch for ch in chunk if ch != "\ufffd" and unicodedata.category(ch) not in _DELETED)
    spaced = "".join(f" {ch} " if _is_cjk(ch) else ch for ch in cleaned)
    out: list[str] = []
    for part in spaced.split(" "):
        stripped = "".join(
            ch for ch in unicodedata.normalize("NFD", part) if unicodedata.category(ch) != "Mn"
        )
        # Char by char, as the Rust normalizer does: str.lower() would apply the final-sigma rule.
        out.extend(_split_punct("".join(ch.lower() for ch in stripped)))
    return out


def _split_punct(word: str) -> list[str]:
    """``word`` with every punctuation character isolated; empty parts dropped."""
    out: list[str] = []
    start = 0
    for i, ch in enumerate(word):
        if _is_punct(ch):
            if i > start:
                out.append(word[start:i])
            out.append(ch)
            start = i + 1
    if start < len(word):
        out.append(word[start:])
    return out


class WordPieceTokenizer:
    """Text -> token ids ``[CLS] pieces... [SEP]``, at most ``max_length`` ids (truncating).

    Thread-safe: the only state after construction is a lock-free LRU cache of word splits.
    """

    def __init__(self, vocab: Sequence[str], max_length: int) -> None:
        if max_length < 3:
            raise EmbeddingError(f"max_length must leave room for a token, got {max_length}")
        self.vocab = {token: i for i, token in enumerate(vocab)}
        try:
            self.cls, self.sep, self.unk = (self.vocab[t] for t in ("[CLS]", "[SEP]", "[UNK]"))
        except KeyError as exc:
            raise EmbeddingError(f"the vocabulary has no {exc.args[0]} token") from exc
        self.max_length = max_length
        self._pieces = lru_cache(maxsize=_CACHE_WORDS)(self._split)

    @classmethod
    def from_file(cls, path: Path, max_length: int) -> WordPieceTokenizer:
        """Load a ``vocab.txt`` (one token per line, the line number is the id)."""
        try:
            lines = path.read_text(encoding="utf-8").split("\n")
        except (OSError, UnicodeDecodeError) as exc:
            raise EmbeddingError(f"cannot read vocabulary {path}: {exc}") from exc
        if lines and lines[-1] == "":
            lines.pop()
        return cls(lines, max_length)

    def encode(self, text: str) -> list[int]:
        """Ids of ``text`` with ``[CLS]`` and ``[SEP]``, truncated to ``max_length``."""
        room = self.max_length - 2
        ids = [self.cls]
        for word in self._words(text):
            # A word past the limit is [UNK] without entering the cache (it would keep the word).
            pieces = (self.unk,) if len(word) > _MAX_WORD_CHARS else self._pieces(word)
            ids.extend(pieces[: room - (len(ids) - 1)])
            if len(ids) - 1 >= room:
                break
        ids.append(self.sep)
        return ids

    def _words(self, text: str) -> Iterator[str]:
        """Pre-tokens of ``text``, lazily, in order."""
        for match in _WORDS.finditer(text):
            chunk = match.group()
            if chunk.isascii() and chunk.isalnum():
                yield chunk.lower()  # the common case needs no Unicode work
            elif chunk.isascii() and chunk.isprintable():
                yield from _split_punct(chunk.lower())
            else:
                yield from _normalise(chunk)

    def _split(self, word: str) -> tuple[int, ...]:
        """Greedy longest-match-first WordPiece split of one pre-token."""
        if len(word) > _MAX_WORD_CHARS:
            return (self.unk,)
        pieces: list[int] = []
        start = 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                found = self.vocab.get(piece)
                if found is not None:
                    pieces.append(found)
                    break
                end -= 1
            else:
                return (self.unk,)
            start = end
        return tuple(pieces)
