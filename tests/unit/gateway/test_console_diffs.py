"""The console's line diff: rows with both line numbers, counts, context and gaps, as ``diff -u``."""

from __future__ import annotations

import difflib

from memstrata.gateway.console.diffs import diff, scene_text


def test_an_unchanged_text_has_no_rows() -> None:
    found = diff("a\nb\n", "a\nb\n")
    assert found.same and found.lines == () and (found.added, found.removed) == (0, 0)


def test_a_changed_line_is_one_removed_and_one_added_with_both_line_numbers() -> None:
    found = diff(
        "# Pets\n- Biscuit is a dog.\n- Rosemary is a cat.\n",
        "# Pets\n- Biscuit is a beagle.\n- Rosemary is a cat.\n",
    )
    rows = [(r.kind, r.old_no, r.new_no, r.text) for r in found.lines]
    assert rows == [
        ("hunk", None, None, "@@ -1,3 +1,3 @@"),
        ("same", 1, 1, "# Pets"),
        ("del", 2, None, "- Biscuit is a dog."),
        ("add", None, 2, "- Biscuit is a beagle."),
        ("same", 3, 3, "- Rosemary is a cat."),
    ]
    assert (found.added, found.removed) == (1, 1) and not found.same


def test_far_apart_changes_are_separate_hunks_matching_difflib_unified() -> None:
    old = [f"line {i}" for i in range(1, 31)]
    new = [*old]
    new[1], new[27] = "changed 2", "changed 28"
    new.append("line 31")
    found = diff("\n".join(old), "\n".join(new))
    hunks = [r.text for r in found.lines if r.kind == "hunk"]
    expected = [h.strip() for h in difflib.unified_diff(old, new, lineterm="") if h.startswith("@@")]
    assert hunks == expected and len(hunks) == 2
    assert "line 15" not in [r.text for r in found.lines]  # outside the context: left out


def test_hunk_ranges_are_written_as_diff_u_writes_them() -> None:
    for old, new in (("a", "b"), ("", "x\ny"), ("x\ny", ""), ("a\nb\nc", "a\nc")):
        ours = [r.text for r in diff(old, new).lines if r.kind == "hunk"]
        theirs = [
            h.strip()
            for h in difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="")
            if h.startswith("@@")
        ]
        assert ours == theirs, (old, new)


def test_added_and_removed_lines_are_counted_and_kept_as_written() -> None:
    found = diff("keep\n", "keep\n<b>new</b> 李伟\n  indented\n")
    assert (found.added, found.removed) == (2, 0)
    assert [r.text for r in found.lines if r.kind == "add"] == ["<b>new</b> 李伟", "  indented"]


def test_a_scene_is_compared_by_its_summary_and_body() -> None:
    assert scene_text("pets", "\n# Pets\n- a dog\n\n") == "Summary: pets\n\n# Pets\n- a dog\n"
