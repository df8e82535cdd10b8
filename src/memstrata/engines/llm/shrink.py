"""Fitting an extraction window to what a real model can take.

Two limits meet an extraction call on a real server: the model's context (the server answers
``ContextLengthError``) and the reply budget (the reply stops with ``finish_reason="length"``,
its JSON cut off). Neither fails the window while there is a smaller way to ask:

- too long a prompt: half the background (the most recent half stays), then none, then the new
  messages split in two windows (the second sees the first as background), then, for one message
  alone, its text cut in half in the prompt only (L0 keeps it whole);
- a truncated reply: asked once more with twice the tokens (up to the cap), then the window
  split; a single message's truncated reply is parsed as far as it goes; a reply still cut
  that began no JSON (prose) fails the window without splitting it;
- a truncated reply that repeats a memory it already wrote, or a run of words inside one, is a
  model caught in a loop (a small model under greedy sampling writes the same item, or phrase,
  until the budget ends): more tokens or a smaller window would buy more of the same, so what it
  completed is kept, once.

Each step is counted in ``degradations``: ``context_shrunk``, ``window_split``,
``message_cut``, ``truncated_replies``, ``looping_replies``.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Awaitable, Callable

from memstrata.errors import ContextLengthError, ParseError
from memstrata.layers.l1.writer import unique_drafts
from memstrata.models import AtomDraft, ChatReply, Degradations, ExtractionWindow

logger = logging.getLogger(__name__)

Ask = Callable[[ExtractionWindow, int | None], Awaitable[ChatReply]]
# The drafts of a reply (a cut one: as far as it goes), counting dropped items in the counter.
Parse = Callable[[ChatReply, ExtractionWindow, Degradations], list[AtomDraft]]
MAX_CUTS = 6  # a message halved six times keeps 1/64 of its text: past that it is not the size


@dataclasses.dataclass(frozen=True, slots=True)
class Budget:
    """The reply tokens to ask for first (None: the model's own) and the most to ask for."""

    first: int | None
    cap: int


async def fit_window(
    window: ExtractionWindow, ask: Ask, parse: Parse, counts: Degradations, budget: Budget, cuts: int = 0
) -> list[AtomDraft]:
    """The drafts of ``window``, asked as often and as small as it takes. Raises
    ``ContextLengthError`` only when a message cut ``MAX_CUTS`` times still does not fit."""
    tokens = budget.first
    grew = False
    while True:
        try:
            reply = await ask(window, tokens)
        except ContextLengthError:
            smaller = _less_background(window)
            if smaller is not None:
                counts.add("context_shrunk")
                logger.info("prompt too long: retrying with %d background messages", len(smaller.background))
                window = smaller
                continue
            if len(window.new) > 1:
                counts.add("window_split")
                return await _split(window, ask, parse, counts, budget)
            if cuts >= MAX_CUTS:
                raise
            counts.add("message_cut")
            return await fit_window(_cut(window), ask, parse, counts, budget, cuts + 1)
        if reply.finish_reason != "length":
            return parse(reply, window, counts)
        counts.add("truncated_replies")
        looped = _looping(reply, window, parse, counts)
        if looped is not None:
            return looped
        used = tokens or reply.completion_tokens  # 0: the budget is unknown, so it cannot grow
        if not grew and used and used * 2 <= budget.cap:
            logger.info("reply cut at %d tokens: asking again with %d", used, used * 2)
            tokens, grew = used * 2, True
            continue
        if len(window.new) > 1 and _began_json(reply.content):
            counts.add("window_split")
            return await _split(window, ask, parse, counts, dataclasses.replace(budget, first=tokens))
        # One message: keep what the cut reply holds. Prose (no JSON begun): a smaller window
        # would be more prose, so it fails here (``ParseError``) for the pipeline's retry.
        return parse(reply, window, counts)


def _stutters(text: str, run: int = 5, times: int = 3) -> bool:
    """Whether some ``run`` words follow each other ``times`` times in ``text``: a statement does
    not, a model looping inside one string ("I'm sorry, I didn't mean to ... I'm sorry, ...") does."""
    words = text.lower().split()
    seen: dict[tuple[str, ...], int] = {}
    for i in range(len(words) - run + 1):
        key = tuple(words[i : i + run])
        seen[key] = seen.get(key, 0) + 1
        if seen[key] >= times:
            return True
    return False


def _began_json(text: str) -> bool:
    # An object: every extraction reply is one or a list of them. A bracket alone is not JSON
    # begun: prose echoing the prompt's "[D1:3] ..." message lines has those.
    return "{" in text


def _looping(
    reply: ChatReply, window: ExtractionWindow, parse: Parse, counts: Degradations
) -> list[AtomDraft] | None:
    """The drafts of a cut reply that repeats a memory or a phrase inside one (counted as
    ``looping_replies``), or None when it repeats nothing or completed nothing: then asking again
    may help."""
    scratch = Degradations()  # a reply asked again must not count its dropped items
    try:
        drafts = parse(reply, window, scratch)
    except ParseError:
        return None
    if len(unique_drafts(drafts)) == len(drafts) and not any(_stutters(d.content) for d in drafts):
        return None
    logger.info(
        "reply cut at %d tokens repeats itself: keeping its %d distinct memories",
        reply.completion_tokens,
        len(unique_drafts(drafts)),
    )
    counts.add("looping_replies")
    for name, count in scratch.snapshot().items():
        counts.add(name, count)
    return drafts


async def _split(
    window: ExtractionWindow, ask: Ask, parse: Parse, counts: Degradations, budget: Budget
) -> list[AtomDraft]:
    """Both halves of the new messages, in order; the second half sees the first as background."""
    half = len(window.new) // 2
    first, second = window.new[:half], window.new[half:]
    keep = len(window.background)
    before = dataclasses.replace(window, new=first)
    after = dataclasses.replace(
        window, new=second, background=(window.background + first)[-keep:] if keep else ()
    )
    logger.info("splitting a window of %d messages in %d + %d", len(window.new), len(first), len(second))
    return [
        *await fit_window(before, ask, parse, counts, budget),
        *await fit_window(after, ask, parse, counts, budget),
    ]


def _less_background(window: ExtractionWindow) -> ExtractionWindow | None:
    """The window with the older half of its background dropped; None when it has none."""
    if not window.background:
        return None
    keep = len(window.background) // 2
    return dataclasses.replace(window, background=window.background[-keep:] if keep else ())


def _cut(window: ExtractionWindow) -> ExtractionWindow:
    """The one new message with the first half of its text, for the prompt only."""
    (message,) = window.new
    cut = dataclasses.replace(message, content=message.content[: max(1, len(message.content) // 2)])
    return dataclasses.replace(window, new=(cut,))
