"""The README's examples do what their comments say: the Python quickstart prints search hits, the
persona and a ``<relevant-memories>`` block; the seed file shown before ``memstrata import`` is
one the importer reads."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import pytest

from memstrata import Memory
from memstrata.interchange import parse_import

README = Path(__file__).resolve().parents[2] / "README.md"


def blocks(kind: str) -> list[str]:
    return re.findall(rf"```{kind}\n(.*?)```", README.read_text(), re.DOTALL)


def test_the_python_quickstart_prints_what_its_comments_promise(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))  # "~/.memstrata" lands in the test's folder
    monkeypatch.delenv("MEMSTRATA_HOME", raising=False)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(blocks("python")[0], "README.md[python 0]", "exec"), {})
    printed = out.getvalue()
    first_hit = printed.splitlines()[0]
    rank, _, score = first_hit.split()[:3]
    assert rank == "1" and 0 < float(score) <= 1
    # where Maya lives comes first: "Maya", which every record holds, ranks nothing
    assert "Lisbon" in first_hit and "moved" in first_hit, printed
    assert "<user-persona>" in printed and "<scene-navigation>" in printed
    memories = printed.split("<relevant-memories>")[1]
    assert "allergic to peanuts" in memories  # the remembered note, recalled for the question
    assert (tmp_path / ".memstrata" / "memstrata.db").exists()


def test_after_the_quickstart_where_do_i_live_finds_lisbon_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The quickstart as written, then what a new user asks next in their own words: the first
    person is Maya's (her messages are the tenant's user messages), so the floor lets the question
    through and Lisbon comes first, in search and in what recall injects."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("MEMSTRATA_HOME", raising=False)
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(blocks("python")[0], "README.md[python 0]", "exec"), {})
    with Memory.open("~/.memstrata") as mem:
        hits = mem.search("where do I live?", user_id="maya")
        assert hits and "Lisbon" in hits[0].content, [h.content for h in hits]
        assert hits[0].explain["read_as_user"] == 1  # why it passed the floor
        # recall hands the agent the fact: in the persona, which the memories then do not repeat
        context = mem.recall("where do I live?", user_id="maya")
        assert "Lisbon" in context.system_context + context.prepend_context
        allergy = mem.search("What am I allergic to?", user_id="maya")
        assert allergy and "peanuts" in allergy[0].content
        assert not mem.search("How do I configure TLS on a Kubernetes ingress?", user_id="maya")


def test_the_quickstart_in_a_store_other_users_share_ranks_as_in_a_store_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server's store holds many users: another user's records, none naming Maya, do not make
    "Maya" a word that tells her records apart (each of hers still holds it), so Lisbon still
    comes first."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("MEMSTRATA_HOME", raising=False)
    with Memory.open("~/.memstrata") as mem:
        said = [
            "I bought a kayak.",
            "The lake was cold today.",
            "My brother fixed my bike.",
            "I like rainy days.",
        ]
        mem.capture(
            [{"role": "user", "name": "Bob", "content": text} for text in said * 2],
            session_key="bob-1",
            user_id="bob",
        )
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(blocks("python")[0], "README.md[python 0]", "exec"), {})
    first_hit = out.getvalue().splitlines()[0]
    assert "Lisbon" in first_hit and "moved" in first_hit, out.getvalue()


def test_the_seed_file_shown_before_import_is_read_by_the_importer() -> None:
    (seed,) = blocks("json")
    sessions = parse_import(json.loads(seed))
    assert len(sessions) == 1 and len(sessions[0].messages) == 2
