"""How a message's text carries a shared photo. Memory keeps text only, so importers write an
image's caption into the message as ``[shares a photo: <caption>]``; hosts write close variants
("[sent an image: ...]"), which ``PHOTO`` reads too. The offline engine turns captions into atoms;
recall shows a message raw when its atoms left its caption out."""

from __future__ import annotations

import re

PHOTO = re.compile(
    r"\[\s*(?:shares?|shared|sends?|sent)\s+(?:an?\s+)?(?:photo|picture|image|pic)\s*:\s*([^\]]*)\]",
    re.IGNORECASE,
)


def photo_note(caption: str) -> str:
    """The text an importer appends to a message for a shared photo with this caption."""
    return f"[shares a photo: {caption}]"


def photo_captions(text: str) -> list[str]:
    """The captions of the photos ``text`` says were shared, as written."""
    return [m.group(1).strip() for m in PHOTO.finditer(text)]
