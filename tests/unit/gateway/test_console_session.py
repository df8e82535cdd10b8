"""Console sessions: a cookie is a signed random id, never a key; CSRF tokens belong to one
session; sessions expire and are bounded."""

from __future__ import annotations

import time

from memstrata.gateway.access import ADMIN, Principal
from memstrata.gateway.console.session import Sessions

SCOPED = Principal("maya-key", tenants=(("maya", None),))


def test_a_cookie_names_its_session_and_a_tampered_one_nothing() -> None:
    live = Sessions(b"s" * 32)
    opened, cookie = live.open(SCOPED)
    assert live.find(cookie) == opened
    sid, _, signature = cookie.partition(".")
    assert live.find(f"{sid}.{'0' * len(signature)}") is None
    assert live.find(f"{sid}x.{signature}") is None
    assert live.find(sid) is None
    assert live.find(None) is None
    assert Sessions(b"t" * 32).find(cookie) is None  # another server's secret


def test_csrf_tokens_are_per_session() -> None:
    live = Sessions()
    first, _ = live.open(ADMIN)
    second, _ = live.open(ADMIN)
    assert live.csrf_ok(first, live.csrf(first))
    assert not live.csrf_ok(first, live.csrf(second))
    assert not live.csrf_ok(first, "")
    assert not live.csrf_ok(first, None)


def test_closed_and_expired_sessions_are_gone() -> None:
    live = Sessions(lifetime_s=0.05)
    opened, cookie = live.open(ADMIN)
    live.close(opened)
    assert live.find(cookie) is None
    _, cookie = live.open(ADMIN)
    time.sleep(0.06)
    assert live.find(cookie) is None


def test_the_oldest_sessions_go_past_the_cap() -> None:
    live = Sessions(most=3)
    cookies = [live.open(ADMIN)[1] for _ in range(4)]
    assert live.find(cookies[0]) is None
    assert all(live.find(c) is not None for c in cookies[1:])


def test_past_the_cap_the_key_holding_the_most_loses_its_oldest() -> None:
    live = Sessions(most=4, per_key=10)
    _, scoped = live.open(SCOPED)
    admins = [live.open(ADMIN)[1] for _ in range(4)]
    assert live.find(scoped) is not None  # admin held the most: admin's oldest went
    assert live.find(admins[0]) is None
    assert all(live.find(c) is not None for c in admins[1:])


def test_text_that_is_not_ascii_names_no_session_and_no_token() -> None:
    live = Sessions()
    opened, cookie = live.open(ADMIN)
    assert live.find(cookie + "\xff") is None
    assert live.find("abc.\xff") is None
    assert not live.csrf_ok(opened, live.csrf(opened)[:-1] + "\xff")
