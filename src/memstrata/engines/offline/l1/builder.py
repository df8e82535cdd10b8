"""The drafts of one message: the extractor's options, and a builder that writes each draft's
text through the message's language pack with the message's metadata."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from memstrata.engines.offline.draft import Parts, parts_metadata
from memstrata.engines.offline.l1.classify import Kind, strip_filler
from memstrata.engines.offline.l1.context import Speech
from memstrata.engines.offline.l1.dates.resolve import resolve
from memstrata.engines.offline.l1.dates.span import Resolved
from memstrata.engines.offline.l1.labels import INSTRUCTION_SCENE, scene_name
from memstrata.engines.offline.l1.references import drop_fillers
from memstrata.engines.offline.l1.subject import rewrite
from memstrata.engines.offline.l1.tense import is_past
from memstrata.engines.offline.lang.en import ENGLISH
from memstrata.engines.offline.packs import Rules
from memstrata.models import AtomDraft, AtomType

_SPEAKER_WITHIN = 8  # words: a statement naming its speaker this early needs no "<name> said:"


@dataclass(frozen=True, slots=True)
class ExtractOptions:
    """Knobs of the offline extractor (defaults are the measured best)."""

    # An answer shorter than this many words also takes its next sentence: replies often open with
    # a reaction and answer in the sentence after ("Seeing my kids so happy at the beach was the
    # best! We don't go often, usually once or twice a year."). On the LoCoMo dev set 16 (was 8)
    # put the answer into recall's context for 1.4 more points of answer words (75.0 -> 76.4%),
    # evidence R@10 78.6 -> 78.5, R@1000tok 89.2 -> 88.9 (12: 75.9%; 20: 76.3%; 3 sentences: less).
    answer_words: int = 16
    max_answer_sentences: int = 2
    photo_atoms: bool = True
    join_pronouns: bool = True  # a sentence opening with "it"/"they"/"he"... continues the one before
    max_unit_words: int = 40  # ... unless that one is already this long


@dataclass(slots=True)
class Builder:
    """Collects the drafts of one message."""

    sp: Speech
    sources: tuple[str, ...]
    drafts: list[AtomDraft] = field(default_factory=list)
    pack: Rules = ENGLISH

    def add(
        self, parts: Parts, kind: Kind, resolved: Resolved | None, scene_text: str, scene: str | None = None
    ) -> None:
        """Append a draft written by the pack from ``parts``, with the message's metadata
        (mentioned_at, message_time, speaker, the parts, and the activity span when dates were
        found); the scene label is ``scene``, else comes from ``scene_text``."""
        content = self.pack.write(parts)
        metadata: dict[str, Any] = {
            "mentioned_at": self.sp.day.isoformat(),
            "message_time": self.sp.message.timestamp,
            "speaker": self.sp.me,
            **parts_metadata(parts, self.pack.code),
        }
        if kind.preference:
            metadata["preference"] = True  # the persona keeps these first (l3.facts)
        if resolved is not None and resolved.start is not None and resolved.end is not None:
            metadata["activity_start"] = resolved.start.isoformat()
            metadata["activity_end"] = resolved.end.isoformat()
        if scene is None:
            scene = (
                INSTRUCTION_SCENE
                if kind.type is AtomType.INSTRUCTION
                else scene_name(scene_text, self.sp.names)
            )
        self.drafts.append(AtomDraft(kind.type, content, kind.priority, scene, self.sources, metadata))


def speaker_early(text: str, me: str) -> bool:
    """Whether the speaker is named within the statement's first words ("On Monday Ann went ...")."""
    head = " ".join(text.split()[: _SPEAKER_WITHIN + len(me.split()) - 1])
    return re.search(rf"(?<!\w){re.escape(me)}(?!\w)", head, re.IGNORECASE) is not None


def capitalised(text: str) -> str:
    """``text`` with its first letter upper-cased, unless it opens with a non-word (a URL, code)."""
    first = text.split(" ", 1)[0]
    code_like = any(mark in first for mark in ("://", "(", "=", "/", "_"))
    return text[:1].upper() + text[1:] if text[:1].isalpha() and not code_like else text


def statement(sp: Speech, text: str, *, keep_answer: bool = False) -> tuple[str, Resolved]:
    """Text with people named and dates resolved (the speaker is not attributed here)."""
    plain = drop_fillers(strip_filler(text, sp.names, keep_answer=keep_answer))
    resolved = resolve(rewrite(plain, sp.me, sp.other, past=is_past(plain)).text, sp.day)
    return capitalised(resolved.text), resolved
