"""Memory reaches a model as quoted data, never as instructions.

What memory holds was written by whoever talked to the agent (a stored message, a persona that
``PUT /v1/persona``, TDAM's core write, the console or distillation changed): a memory reading
"ignore all previous instructions" must not arrive as an instruction. Every surface that hands
memory to a model goes through here: recall's context (which the proxy injects and the MCP
``recall`` tool returns) and the search and scene results of the agent and MCP tools.

- ``quoted(text)`` neutralises the markup a model or its harness reads as structure, and leaves
  the words: a tag opening (``<system-reminder>``, ``</relevant-memories>``, ``<user-persona>``:
  ``<`` becomes ``&lt;``), a chat-template token (``<|im_start|>``: ``&lt;|im_start|>``), Llama's
  ``[INST]`` (``(INST)``), and a turn marker opening a line (``Human:``, ``Assistant:``,
  ``System:``, and those of every language pack: ``Human said:``). "I use <div> tags" reads "I use &lt;div> tags".
- ``preamble(lang)`` opens the blocks of memory, in the conversation's language (its pack's
  ``quoted_note``), saying that what follows is quoted data; each counts in recall's budget.
"""

from __future__ import annotations

import re
from functools import lru_cache

from memstrata import lang as languages
from memstrata.layers.l3.persona_doc import escape_tags

# Chat-template tokens (<|im_start|>, <|eot_id|>, <|endoftext|>) and Llama 2's [INST] / [/INST].
_TEMPLATE = re.compile(r"<(?=\|)|\[(/?INST)\]", re.IGNORECASE)


@lru_cache(maxsize=4)
def _turn(words: tuple[str, ...], colons: str) -> re.Pattern[str]:
    """A speaker's turn marker at the start of a line (after indentation, a list mark, a quote
    mark or a heading's hashes), in any pack's words: "Human:", "\n\nAssistant:", "- System:"."""
    return re.compile(
        rf"^([ \t>*#-]*)({'|'.join(map(re.escape, words))})[ \t]*[{re.escape(colons)}]",
        re.IGNORECASE | re.MULTILINE,
    )


def preamble(lang: str) -> str:
    """What opens a block of memory, in ``lang`` (the default language's for one without a pack).
    Short: it is paid for out of recall's budget, in every prompt."""
    return languages.get(lang).quoted_note


def quoted(text: str) -> str:
    """``text`` with the markup a model reads as structure neutralised (see the module). Idempotent."""
    text = _TEMPLATE.sub(lambda m: f"({m.group(1)})" if m.group(1) else "&lt;", escape_tags(text))
    return _turn(languages.turn_words(), languages.colons()).sub(_said, text)


def _said(m: re.Match[str]) -> str:
    lead, who = m.group(1), m.group(2)
    return lead + languages.turn_owner(who).said.format(who=who)
