"""Splitting a message into sentences and image captions, and small word-level helpers.

Everything here is pure and deterministic. Messages are chat text: short sentences, emoji,
missing capitals, ``[shares a photo: ...]`` captions inserted by importers. The splitter errs
on the side of longer sentences (a fact cut in two loses its subject).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from memstrata import lang
from memstrata.layers.l0.media import PHOTO

_CAPTION_LEAD = re.compile(
    r"^(?:(?:a|an|the)\s+)?(?:photo(?:graph|graphy)?|picture|image|pic|close\s*up|closeup)\s+of\s+",
    re.IGNORECASE,
)
# Abbreviations whose full stop does not end a sentence (case matters: "No. 5" but "I said no.").
_ABBREV = re.compile(
    r"\b(?:Mr|Mrs|Ms|Dr|Prof|Sr|Jr|St|Mt|Ave|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec|"
    r"vs|e\.g|i\.e|approx|(?i:etc))\.$"
)
_NUMBER_ABBREV = re.compile(r"\b(?:No|Nos|Nr|pp|p)\.$")  # only before a number: "No. 5"


@lru_cache(maxsize=4)
def _boundary(ends: str) -> re.Pattern[str]:
    """Where a sentence ends: after . ! ? or an ellipsis and a space, after a pack's full-width
    sentence end (``ends``: 。！？, no space follows), at a line break, at a spaced dash."""
    unspaced = rf"|(?<=[{re.escape(ends)}])\s*" if ends else ""
    return re.compile(rf"(?<=[.!?…])[\"')\]]*\s+{unspaced}|\n+|\s+[-–—]{{1,2}}\s+(?=[A-Z])")


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_SPACES = re.compile(r"[ \t\r\f\v]+")
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_APOSTROPHES = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"'})


@dataclass(frozen=True, slots=True)
class MessageParts:
    """A message split into its sentences (in order) and its image captions."""

    sentences: tuple[str, ...]
    captions: tuple[str, ...]


def normalise_text(text: str) -> str:
    """Straight quotes and apostrophes, single spaces, no control characters; newlines kept (they
    are sentence breaks)."""
    text = _CONTROL.sub(" ", text).translate(_APOSTROPHES)
    return "\n".join(_SPACES.sub(" ", line).strip() for line in text.splitlines() if line.strip())


def clean_caption(caption: str) -> str:
    """A caption without its "a photo of" lead-in (the atom says "shared a photo of" itself)."""
    caption = _SPACES.sub(" ", caption).strip().rstrip(".")
    previous = None
    while previous != caption:  # "a photo of a picture of ..." happens
        previous = caption
        caption = _CAPTION_LEAD.sub("", caption).strip()
    return caption


# Code is evidence for search (the message keeps it: L0 is searchable), but no sentence of a fact:
# a fenced block ("```python ... ```", unclosed to the end) and lines that read as code or markup
# ("app = Flask(__name__)", "CREATE TABLE users (", "**Basic Analytics**", "- Registration")
# make no atoms. On BEAM dev chat 1 they were 636 of 1188 atoms ("User said: Import sqlite3").
_FENCE = re.compile(
    r"^[ \t]*(?:```|~~~)[^\n]*\n.*?(?:^[ \t]*(?:```|~~~)[ \t]*$|\Z)", re.DOTALL | re.MULTILINE
)
# Code is lowercase where chat is not ("let me know" opens a chat line, "let x = 1" a code line).
_CODE_START = re.compile(
    r"^(?:import [\w.]+|from [\w.]+ import |def \w+\(|class \w+[(:]|return\b.*[;)\]]|(?:const|let|var) \w+ =|"
    r"function\b|async def |await \w+|if \(|for \(|while \(|elif |else:|try:|except\b.*:$|public \w+ |"
    r"private \w+ |#include|//|/\*|\*/|@\w+[.(]|</?\w+[ >/]|\$ |>>> |pip install|npm (?:install|run)|git \w+ |"
    r"(?-i:SELECT|INSERT|UPDATE|DELETE|CREATE|ALTER|DROP) [A-Z*])"
)
# an assignment ("app = Flask(...)"), a call ("print(x)"), a brace or semicolon at the end
_CODE_SHAPE = re.compile(r"^[\w.\[\]'\"]+(?:\s*[-+*/]?=\s|\()|[;{}]\s*$|^[)}\]]")
_MARKUP = re.compile(r"^(?:#{1,6}\s|[-*+]\s|\d+[.)]\s|\*\*[^*]+\*\*:?$|\|)")
_SYMBOLS = frozenset("=(){}[];<>_`$\\|")
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'll|i'd|my|me|we|our)\b", re.IGNORECASE)


def _code_like(line: str) -> bool:
    """A line of code: it opens like code, has the shape of an assignment or a call, or is dense
    with symbols."""
    if _CODE_START.match(line) or _CODE_SHAPE.search(line):
        return True
    return sum(c in _SYMBOLS for c in line) > max(3, len(line) // 12) and not _FIRST_PERSON.search(line)


# Pasted material behind a label ("Video Transcript: women need to understand that ...", "Text: ..."):
# someone else's words the user hands over, not the user speaking about themselves.
_PASTED = re.compile(r"^[A-Z][\w ]{2,30}:\s+\S")
_PASTED_WORDS = 25


def _fragment(line: str) -> bool:
    """A line that states no fact: pasted material, or a markup line too short to state one (a
    heading, a list item, a bold label) and not about the speaker: "### Components", "- Add
    Expense", "**User Authentication**"."""
    if _PASTED.match(line) and len(line.split()) > _PASTED_WORDS:
        return True
    return bool(_MARKUP.match(line)) and len(line.split()) < 6 and not _FIRST_PERSON.search(line)


# A lead-in names what follows it ("Here's my code:", "so here's what I have so far:"): code or a
# list, which extraction leaves out, so the lead-in alone tells nothing. A longer sentence ending in
# a colon still may ("I've been using the following code to measure TTI:").
_LEAD_IN_WORDS = 10


def _lead_in(text: str) -> bool:
    return text.endswith(":") and len(text.split()) < _LEAD_IN_WORDS


def _without_lead_in(sentence: str) -> str:
    """``sentence`` without a lead-in at its end ("I'm stuck on the navbar, here's my code:" reads
    "I'm stuck on the navbar"); empty when it is one."""
    if _lead_in(sentence):
        return ""
    head, comma, tail = sentence.rpartition(", ")
    return head if comma and _lead_in(tail) else sentence


def prose(text: str) -> str:
    """``text`` without its code and markup fragments: what extraction reads."""
    lines = _FENCE.sub("\n", text).split("\n")
    kept = (line for line in lines if not (_code_like(line.strip()) or _fragment(line.strip())))
    return "\n".join(kept).replace("**", "")  # bold marks are no words


def split_message(text: str) -> MessageParts:
    """The sentences and photo captions of a message's text (its code and markup fragments left
    out: ``prose``)."""
    text = normalise_text(prose(text))
    captions = tuple(c for c in (clean_caption(m.group(1)) for m in PHOTO.finditer(text)) if c)
    body = PHOTO.sub("\n", text)
    sentences = (_without_lead_in(s) for s in split_sentences(body))
    return MessageParts(tuple(s for s in sentences if s), captions)


def split_sentences(text: str) -> tuple[str, ...]:
    """Sentences of ``text``: split after ``. ! ?`` (not after abbreviations), at newlines, and at
    a spaced dash that starts a new capitalised clause."""
    out: list[str] = []
    carry = ""
    pos = 0
    for match in _boundary(lang.sentence_ends()).finditer(text):
        piece = carry + text[pos : match.start()]
        pos = match.end()
        stripped = piece.rstrip("\"')]")
        before_number = _NUMBER_ABBREV.search(stripped) is not None and text[pos : pos + 1].isdigit()
        if before_number or _ABBREV.search(stripped) or re.search(r"\b[A-Z]\.$", stripped):
            carry = piece + " "  # "Dr. Smith", "J. K." continue the sentence
            continue
        carry = ""
        out.append(piece)
    out.append(carry + text[pos:])
    return tuple(s for s in (p.strip(" -–—") for p in out) if _WORD.search(s))


def words(text: str) -> list[str]:
    """Word tokens (letters, digits, inner apostrophes), in order, case kept."""
    return _WORD.findall(text)


def lower_words(text: str) -> list[str]:
    """Lowercased word tokens."""
    return [w.lower() for w in _WORD.findall(text)]
