"""The JSONL mirrors agree with the database: one line per record, whatever the records' dates,
after a replaced database or a lost ``-wal``, with concurrent writers in one process, and after
``repair``."""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path

from memstrata.models import Atom, AtomType, Message, Role, Tenant
from memstrata.stores.sqlite.store import SqliteStore

A = Tenant("alice")
NOW = 1_785_405_720_000  # 2026-07-30
OLD = 1_600_000_000_000  # 2020-09-13: an imported record's own date


def msg(mid: str, ms: int = NOW, tenant: Tenant = A) -> tuple[Message, str]:
    return Message(mid, tenant, "s", "s", Role.USER, f"text of {mid}", ms, ms, "Ann"), f"text of {mid}"


def atom(aid: str, created: int) -> tuple[Atom, str]:
    a = Atom(aid, A, AtomType.PERSONA, f"fact {aid}", 60, "misc", ("m1",), {}, "s", created, created)
    return a, a.content


def lines(folder: Path) -> list[dict[str, object]]:
    return [json.loads(x) for f in sorted(folder.glob("*.jsonl")) for x in f.read_text().splitlines()]


def seqs(folder: Path) -> list[int]:
    return sorted(int(str(ln["seq"])) for ln in lines(folder))


def test_atoms_with_old_dates_are_mirrored_once_however_often_the_store_opens(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path)
    store.atoms.commit(A, [atom("new", NOW)], {}, None)
    store.atoms.commit(A, [atom("imported-1", OLD), atom("imported-2", OLD)], {}, None)
    store.close()
    for _ in range(2):
        SqliteStore(tmp_path).close()
    assert seqs(tmp_path / "records") == [1, 2, 3]
    reopened = SqliteStore(tmp_path)
    assert reopened.mirror_check() is None
    reopened.close()


def test_lines_go_to_the_file_of_the_day_they_are_written_not_the_records_day(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path)
    store.messages.append([msg("m-old", OLD)])
    store.close()
    (only,) = (tmp_path / "conversations").glob("*.jsonl")
    assert only.name != "2020-09-13.jsonl"  # today's file, whatever the record's own date


def test_a_replaced_database_gets_its_mirrors_rewritten_and_new_records_mirrored(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path)
    store.messages.append([msg(f"m{i}") for i in range(5)])
    store.close()
    for suffix in ("", "-wal", "-shm"):
        (tmp_path / f"memstrata.db{suffix}").unlink(missing_ok=True)
    fresh = SqliteStore(tmp_path)  # a new, empty database under the old mirrors
    fresh.messages.append([msg("after-1"), msg("after-2")])
    assert [ln["id"] for ln in lines(tmp_path / "conversations")] == ["after-1", "after-2"]
    assert fresh.mirror_check() is None
    fresh.close()


def test_a_lost_wal_leaves_the_mirror_ahead_and_it_is_rewritten(tmp_path: Path) -> None:
    live, copy = tmp_path / "live", tmp_path / "copy"
    store = SqliteStore(live)
    store.messages.append([msg(f"m{i}") for i in range(3)])
    store.db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.db.conn.execute("PRAGMA wal_autocheckpoint=0")
    store.messages.append([msg("m3"), msg("m4")])  # committed to the -wal only
    copy.mkdir()
    shutil.copy(live / "memstrata.db", copy / "memstrata.db")  # the -wal is lost
    shutil.copytree(live / "conversations", copy / "conversations")
    store.close()
    assert seqs(copy / "conversations") == [1, 2, 3, 4, 5]
    reopened = SqliteStore(copy)
    assert seqs(copy / "conversations") == [1, 2, 3]
    (new,) = reopened.messages.append([msg("m5")])
    assert new.seq == 4
    assert [ln["id"] for ln in lines(copy / "conversations")] == ["m0", "m1", "m2", "m5"]
    assert reopened.mirror_check() is None
    reopened.close()


def test_another_database_with_more_records_is_detected_by_its_records_ids(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path)
    store.messages.append([msg("a1"), msg("a2")])
    store.close()
    other = tmp_path / "other"
    store = SqliteStore(other)
    store.messages.append([msg("b1"), msg("b2"), msg("b3")])
    store.close()
    for suffix in ("", "-wal", "-shm"):
        (tmp_path / f"memstrata.db{suffix}").unlink(missing_ok=True)
    shutil.copy(other / "memstrata.db", tmp_path / "memstrata.db")
    SqliteStore(tmp_path).close()
    assert [ln["id"] for ln in lines(tmp_path / "conversations")] == ["b1", "b2", "b3"]


def test_concurrent_writers_in_one_process_mirror_every_record_once(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path)

    def capture(worker: int) -> None:
        for i in range(40):
            store.messages.append([msg(f"w{worker}-{i}", tenant=Tenant(f"u{worker}"))])

    threads = [threading.Thread(target=capture, args=(w,)) for w in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seqs(tmp_path / "conversations") == list(range(1, 241))
    for f in (tmp_path / "conversations").glob("*.jsonl"):
        in_file = [json.loads(x)["seq"] for x in f.read_text().splitlines()]
        assert in_file == sorted(in_file)
    assert store.mirror_check() is None
    store.close()


def test_mirror_check_names_the_difference_and_repair_rewrites_the_mirror(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path)
    store.messages.append([msg(f"m{i}") for i in range(4)])
    store.atoms.commit(A, [atom("x", NOW)], {}, None)
    (mirror,) = (tmp_path / "conversations").glob("*.jsonl")
    text = mirror.read_text().splitlines()
    mirror.write_text("\n".join([text[0], text[0], text[2], "garbage", text[3]]) + "\n")
    note = store.mirror_check()
    assert note is not None
    assert "conversations/" in note and "records/" not in note
    assert "1 records missing" in note and "1 duplicated lines" in note and "1 unreadable lines" in note
    assert store.repair_mirrors() == [
        "conversations/ rewritten from the database (was: 1 records missing, 1 duplicated lines, "
        "1 unreadable lines)"
    ]
    assert [ln["id"] for ln in lines(tmp_path / "conversations")] == ["m0", "m1", "m2", "m3"]
    assert store.mirror_check() is None
    assert store.repair_mirrors() == []
    store.close()


def test_a_rewrite_cut_short_by_a_crash_is_completed_or_discarded_on_open(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path)
    store.messages.append([msg("m0"), msg("m1")])
    store.close()
    folder = tmp_path / "conversations"
    # Crash after the new folder was complete and the old one moved away, before the second rename.
    new, old = tmp_path / ".conversations.rewrite", tmp_path / ".conversations.old"
    shutil.copytree(folder, new)
    (new / ".complete").write_bytes(b"")
    folder.rename(old)
    SqliteStore(tmp_path).close()
    assert seqs(folder) == [1, 2] and not new.exists() and not old.exists()
    # Crash while the new folder was still being written: it is dropped, the old one kept.
    new.mkdir()
    (new / "2020-01-01.jsonl").write_text('{"seq": 1, "id": "half')
    SqliteStore(tmp_path).close()
    assert seqs(folder) == [1, 2] and not new.exists()


def test_a_huge_last_line_is_read_whole_when_finding_the_mark(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path)
    big = Message("big", A, "s", "s", Role.USER, "x" * 300_000, NOW, NOW, "Ann")
    store.messages.append([msg("m0"), (big, big.content)])
    store.close()
    SqliteStore(tmp_path).close()
    assert seqs(tmp_path / "conversations") == [1, 2]


def test_a_read_only_store_reads_and_writes_nothing(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path)
    store.messages.append([msg("m0")])
    store.close()
    shutil.rmtree(tmp_path / "conversations")
    before = {p.name: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    reader = SqliteStore(tmp_path, read_only=True)
    assert [m.id for m in reader.messages.after(A, "s", 0, 10)] == ["m0"]
    assert reader.mirror_check() is not None  # it says so, but does not fix it
    reader.close()
    after = {p.name: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    # SQLite's own -wal/-shm companions may appear (empty of data); nothing else changes.
    assert {k: v for k, v in after.items() if not k.endswith(("-wal", "-shm"))} == before


def test_an_old_line_appended_at_the_end_does_not_lower_the_mark(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path)
    store.messages.append([msg(f"m{i}") for i in range(3)])
    store.close()
    (mirror,) = (tmp_path / "conversations").glob("*.jsonl")
    mirror.write_text(mirror.read_text() + mirror.read_text().splitlines()[0] + "\n")
    SqliteStore(tmp_path).close()  # seen on open: rewritten, not topped up from seq 1
    assert [ln["seq"] for ln in lines(tmp_path / "conversations")] == [1, 2, 3]


def test_the_quick_check_counts_lines_and_reads_the_ends(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path)
    store.messages.append([msg(f"m{i}") for i in range(4)])
    assert store.mirror_check(full=False) is None
    (mirror,) = (tmp_path / "conversations").glob("*.jsonl")
    text = mirror.read_text().splitlines()
    mirror.write_text("\n".join([text[0], text[2], text[3]]) + "\n")
    assert "1 records missing" in str(store.mirror_check(full=False))
    mirror.write_text("\n".join([text[0], text[1], text[2], text[3], text[1], text[3]]) + "\n")
    assert "2 lines more than records" in str(store.mirror_check(full=False))
    store.close()


def test_an_append_never_glues_a_record_onto_a_partial_line(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path)
    store.messages.append([msg("m0")])
    (mirror,) = (tmp_path / "conversations").glob("*.jsonl")
    with open(mirror, "a") as fh:
        fh.write('{"seq": 2, "id": "half')  # a write cut short that no open has trimmed yet
    store.messages.append([msg("m1")])
    assert [ln["id"] for ln in lines(tmp_path / "conversations")] == ["m0", "m1"]
    assert store.mirror_check() is None
    store.close()
