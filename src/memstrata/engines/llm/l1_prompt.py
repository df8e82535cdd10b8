"""The L1 extraction prompt and the response models it asks for, side by side.

Input: an ``ExtractionWindow`` (new messages to extract from, earlier ones as background).
Output: ``{"scenes": [{"scene_name", "memories": [{content, type, priority, source_message_ids,
metadata}]}]}``: an array of scene segments, wrapped in an object because JSON mode only allows
objects (a bare array is accepted too). The field descriptions below are the instructions the
model reads: change them and the prompt changes.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from memstrata.engines.llm.language import RULE as LANGUAGE_RULE
from memstrata.engines.llm.language import language_line
from memstrata.engines.llm.parsing import as_list, close_cut, field_guide, parse_json, validate_items
from memstrata.errors import ParseError
from memstrata.models import (
    AtomDraft,
    AtomType,
    ChatMessage,
    Degradations,
    ExtractionWindow,
    Message,
    ResponseSchema,
)

logger = logging.getLogger(__name__)

# Names older prompts and other memory systems use for our three types.
LEGACY_TYPES = {
    "episode": AtomType.EPISODIC,
    "event": AtomType.EPISODIC,
    "preference": AtomType.PERSONA,
    "fact": AtomType.PERSONA,
    "profile": AtomType.PERSONA,
}


class ExtractedMemory(BaseModel):
    """One memory as the model writes it."""

    content: str = Field(
        min_length=1,
        description="one standalone statement that makes sense without the conversation; it names "
        "its subject (the speaker's name, never 'I' or 'the user' when a name is known) and writes "
        "resolved dates out (e.g. 'on 7 May 2023', not 'yesterday')",
    )
    type: AtomType = Field(
        description="'persona' for lasting facts about a person (identity, work, relationships, "
        "preferences, habits, plans); 'episodic' for something that happened or will happen; "
        "'instruction' for how the assistant should behave or answer",
    )
    priority: int = Field(
        50,
        description="0-100, how useful this is later (identity and strong preferences high, "
        "passing details low); -1 only for a strict instruction that must always apply",
    )
    source_message_ids: list[str] = Field(
        default_factory=list,
        description="the ids, as shown in square brackets, of the NEW messages it comes from",
    )
    metadata: dict[str, Any] = Field(
        default_factory=dict,
        description="for something dated: activity_start and activity_end as ISO 8601 dates or "
        "times, resolved against the time of the message that mentions it; else {}",
    )

    @field_validator("content", mode="before")
    @classmethod
    def _strip(cls, value: Any) -> Any:
        return value.strip() if isinstance(value, str) else value

    @field_validator("type", mode="before")
    @classmethod
    def _normalise_type(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        key = value.strip().lower()
        return LEGACY_TYPES.get(key, key)

    @field_validator("priority", mode="before")
    @classmethod
    def _clamp_priority(cls, value: Any) -> Any:
        if isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                return value  # not a number: let validation reject the item
        if isinstance(value, int | float) and not isinstance(value, bool):
            return max(-1, min(100, round(value)))
        return value

    @field_validator("source_message_ids", mode="before")
    @classmethod
    def _ids_as_strings(cls, value: Any) -> Any:
        values = [value] if isinstance(value, str | int) else value
        if not isinstance(values, list):
            return value
        return [str(v).strip().strip("[]") for v in values if v is not None]

    @field_validator("metadata", mode="before")
    @classmethod
    def _metadata_or_empty(cls, value: Any) -> Any:
        return {} if value is None else value


class SceneSegment(BaseModel):
    """A stretch of the conversation about one topic, and the memories it yields."""

    scene_name: str = Field(
        "",
        description="a short topic name (2-5 words, e.g. 'hiking trips', 'job at the bakery'); "
        "use the same name each time the same topic comes up",
    )
    memories: list[Any] = Field(description="the memories of this topic (fields below)")

    @field_validator("scene_name", mode="before")
    @classmethod
    def _name(cls, value: Any) -> Any:
        return "" if value is None else str(value).strip()


SYSTEM_PROMPT = f"""\
You extract long-term memories from a conversation, for an assistant that will talk with these \
people again and must remember what matters about them.

Rules:
1. Extract only from the NEW messages. Background messages are context (who "she" is, what "it" \
refers to): never extract a memory from them alone.
2. Each memory is one standalone statement. Name its subject: the speaker's name as shown \
before the colon, never "I", "me" or "the user" when a name is known.
3. Resolve relative dates ("yesterday", "last week", "next month") against the time of the \
message they appear in. Write the absolute date into the content and into metadata \
(activity_start / activity_end, ISO 8601).
4. Keep specifics: names, places, numbers, titles, dates. Skip greetings and small talk. Never \
invent facts; an AI assistant's suggestions are not facts about anyone.
5. Group the memories into scene segments, one per topic of the conversation.
6. {LANGUAGE_RULE}

Answer with JSON only:
{{"scenes": [{{"scene_name": "...", "memories": [{{"content": "...", "type": "persona", \
"priority": 70, "source_message_ids": ["..."], "metadata": {{}}}}]}}]}}
Answer {{"scenes": []}} when nothing is worth remembering.

Scene fields:
{field_guide(SceneSegment)}

Memory fields:
{field_guide(ExtractedMemory)}
"""


class SchemaDates(BaseModel):
    """The metadata the schema allows: a small model given a free-form object fills it with
    invented keys until its reply is cut off."""

    model_config = ConfigDict(extra="forbid")

    activity_start: str | None = Field(None, max_length=32, description="ISO 8601 date or time")
    activity_end: str | None = Field(None, max_length=32, description="ISO 8601 date or time")


def _said(name: str) -> str | None:
    return ExtractedMemory.model_fields[name].description


class SchemaMemory(BaseModel):
    """``ExtractedMemory`` as the schema bounds it (lengths and counts keep a reply finite)."""

    # At least a few words: a small model otherwise copies the prompt's "..." placeholder.
    content: str = Field(min_length=8, max_length=400, description=_said("content"))
    type: AtomType = Field(description=_said("type"))
    priority: int = Field(50, description=_said("priority"))
    source_message_ids: list[str] = Field(
        default_factory=list, max_length=10, description=_said("source_message_ids")
    )
    metadata: SchemaDates | None = Field(None, description=_said("metadata"))


class SchemaSegment(SceneSegment):
    """``SceneSegment`` with its memories typed: the shape the JSON schema asks for."""

    scene_name: str = Field("", max_length=60)
    memories: list[SchemaMemory] = Field(max_length=12, description="the memories of this topic")


class ExtractionReply(BaseModel):
    """The whole reply, as a server with structured outputs is asked to constrain it."""

    scenes: list[SchemaSegment] = Field(
        max_length=8, description="one segment per topic; [] when nothing is worth remembering"
    )


# Sent with every extraction call; a server without structured outputs ignores it.
SCHEMA = ResponseSchema("memory_extraction", ExtractionReply.model_json_schema())


def format_message(message: Message) -> str:
    """``[id] (ISO time, weekday) speaker: text``: the weekday helps resolve 'last Friday'."""
    when = datetime.fromtimestamp(message.timestamp / 1000, tz=UTC)
    speaker = message.name or message.role.value
    return f"[{message.id}] ({when.isoformat(timespec='seconds')}, {when:%A}) {speaker}: {message.content}"


def extraction_messages(window: ExtractionWindow) -> list[ChatMessage]:
    """The chat to send for one window: the rules, then the background and the new messages."""
    parts: list[str] = []
    if line := language_line(m.content for m in window.new):
        parts.append(line.rstrip("\n"))
        parts.append("")
    if window.background:
        parts.append("BACKGROUND (earlier messages, context only: do NOT extract memories from these):")
        parts.extend(format_message(m) for m in window.background)
        parts.append("")
    parts.append("NEW MESSAGES (extract memories from these):")
    parts.extend(format_message(m) for m in window.new)
    return [ChatMessage("system", SYSTEM_PROMPT), ChatMessage("user", "\n".join(parts))]


def parse_extraction(
    reply: str, window: ExtractionWindow, counts: Degradations | None = None, *, cut: bool = False
) -> list[AtomDraft]:
    """Drafts from the model's reply. Invalid items are dropped (logged); raises ``ParseError``
    when the reply holds no usable JSON at all.

    ``cut``: the reply stopped at ``max_tokens``, inside its JSON. What it completed is kept
    (``close_cut``); raises ``ParseError`` when that is not one valid memory (an empty result
    would pass for "nothing worth remembering" and move the cursor past the window).

    Source ids are kept only when they name NEW messages of the window; a memory left with none
    is attributed to all the new messages (its origin is somewhere in the window).
    """
    data = parse_json((close_cut(reply) or reply) if cut else reply)
    if isinstance(data, dict) and "memories" in data:
        data = [data]  # a single scene segment
    segments = validate_items(
        _segment_items(as_list(data, "scenes", reply=reply)), SceneSegment, what="scenes", counts=counts
    )
    new_ids = [m.id for m in window.new]
    drafts: list[AtomDraft] = []
    for segment in segments:
        for memory in validate_items(segment.memories, ExtractedMemory, what="memories", counts=counts):
            drafts.append(
                AtomDraft(
                    type=memory.type,
                    content=memory.content,
                    priority=memory.priority,
                    scene_name=segment.scene_name,
                    source_message_ids=_sources(memory.source_message_ids, new_ids),
                    metadata=memory.metadata,
                )
            )
    if cut and not drafts:
        raise ParseError(
            f"the reply was cut off at max_tokens before it completed a memory ({len(reply)} chars)",
            reply=reply,
        )
    return drafts


def _segment_items(items: Sequence[Any]) -> list[Any]:
    """Scene segments as given; bare memories (no segment around them) gathered into one."""
    loose = [i for i in items if isinstance(i, dict) and "memories" not in i and "content" in i]
    segments = [i for i in items if not any(i is m for m in loose)]
    if loose:
        logger.info("model returned %d memories outside any scene segment; kept them unnamed", len(loose))
        segments.append({"scene_name": "", "memories": loose})
    return segments


def _sources(ids: Sequence[str], new_ids: Sequence[str]) -> tuple[str, ...]:
    allowed = set(new_ids)
    kept = tuple(dict.fromkeys(i for i in ids if i in allowed))
    if not kept:
        logger.debug("memory cites no new message of the window (%s); attributing it to all", ids)
        return tuple(new_ids)
    return kept
