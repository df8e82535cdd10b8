"""The scoped-key table on every store: keys by digest, listed oldest first, revoked once."""

from __future__ import annotations

from memstrata.models import ApiKey
from memstrata.ports import Store


def test_keys_are_found_by_digest_listed_and_revoked_once(empty_store: Store) -> None:
    keys = empty_store.keys
    first = ApiKey("k1", "alice's agent", (("alice", None),), created_at=1000)
    second = ApiKey("k2", "bob's pair", (("bob", "a1"), ("carol", None)), created_at=2000)
    keys.add(first, "digest-1")
    keys.add(second, "digest-2")
    assert keys.find("digest-1") == first
    assert keys.find("digest-2") == second
    assert keys.find("nope") is None
    assert keys.list() == [first, second]
    revoked = keys.revoke("k1", at=5000)
    assert revoked is not None and revoked.revoked_at == 5000 and not revoked.active
    again = keys.revoke("k1", at=9000)
    assert again is not None and again.revoked_at == 5000  # the first revocation's time is kept
    assert keys.find("digest-1") == revoked
    assert keys.revoke("missing", at=1) is None
