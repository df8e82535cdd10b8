"""L2/L3 pure logic: the scene file format, file names, the index, attribution, persona text."""

from __future__ import annotations

import pytest

from memstrata.errors import PathError, StoreError
from memstrata.layers.l2 import index, names
from memstrata.layers.l2.scene_file import is_soft_deleted, parse_scene, render_scene
from memstrata.layers.l3 import persona_doc
from memstrata.models import Atom, AtomType, Scene, SceneEntry, Tenant

T0 = 1_785_405_720_000  # 2026-07-30 10:02 UTC
T1 = 1_785_834_900_000  # 2026-08-04 09:15 UTC

FILE = """-----META-START-----
created: 2026-07-30 10:02
updated: 2026-08-04 09:15
summary: one line used in navigation and prompts
heat: 120
-----META-END-----

# Hiking

- Ann hikes every Sunday.
"""


def test_a_scene_file_parses_and_renders_back_byte_for_byte() -> None:
    scene = parse_scene("hiking.md", FILE, default_time=0)
    assert scene == Scene(
        "hiking.md",
        "one line used in navigation and prompts",
        120,
        T0,
        T1,
        "# Hiking\n\n- Ann hikes every Sunday.",
    )
    assert render_scene(scene) == FILE


def test_a_file_without_meta_is_all_body_with_defaults() -> None:
    text = "# Notes\n\nsummary: not a meta line\n"
    scene = parse_scene("notes.md", text, default_time=T0)
    assert (scene.summary, scene.heat, scene.created, scene.updated) == ("", 0, T0, T0)
    assert scene.body == "# Notes\n\nsummary: not a meta line"


def test_an_unterminated_meta_block_is_body_too() -> None:
    text = "-----META-START-----\nheat: 3\n# no end marker"
    assert parse_scene("x.md", text, default_time=T0).body == text


def test_malformed_meta_values_get_defaults_and_a_summary_stays_one_line() -> None:
    text = "-----META-START-----\ncreated: yesterday\nheat: lots\n-----META-END-----\nbody"
    scene = parse_scene("x.md", text, default_time=T0)
    assert (scene.heat, scene.created, scene.updated, scene.body) == (0, T0, T0, "body")
    rendered = render_scene(Scene("x.md", "two\nlines", -4, T0, T0, "b"))
    assert "summary: two lines\nheat: 0\n" in rendered


@pytest.mark.parametrize(
    ("text", "deleted"),
    [
        ("[DELETED]", True),
        ("  [DELETED]\n", True),
        ("", True),
        ("-----META-START-----\nheat: 1\n-----META-END-----\n\n", True),
        ("-----META-START-----\nheat: 1\n-----META-END-----\n\n[DELETED]\n", True),
        ("[DELETED] but not really", False),
        (FILE, False),
    ],
)
def test_soft_deleted_files_are_recognised(text: str, deleted: bool) -> None:
    assert is_soft_deleted(text) is deleted


@pytest.mark.parametrize(
    ("name", "normal"),
    [
        ("Hiking Trips.MD", "hiking-trips.md"),
        ("family", "family.md"),
        ("../../etc/passwd", "etc-passwd.md"),
        ("  café & crème!!.md", "café-crème.md"),
        ("工作.md", "工作.md"),
        ("***.md", "scene.md"),
        ("a" * 100 + ".md", "a" * 64 + ".md"),
    ],
)
def test_names_are_normalised_to_a_safe_lowercase_md(name: str, normal: str) -> None:
    assert names.normalise(name) == normal


def test_collisions_get_numbered_suffixes_and_normal_names_keep_theirs() -> None:
    got = names.assign(["Work.md", "work.md", "WORK .md", "play.md"])
    assert got == {
        "work.md": "work.md",
        "play.md": "play.md",
        "WORK .md": "work-2.md",
        "Work.md": "work-3.md",
    }
    assert names.unique("work", ["work.md", "work-2.md"]) == "work-3.md"


@pytest.mark.parametrize(
    "bad", ["../persona.md", "/etc/passwd", "scene_blocks/../x.md", "a\0.md", "x.txt", "Big.md", ""]
)
def test_read_paths_outside_the_scene_folder_are_refused(bad: str) -> None:
    with pytest.raises(PathError):
        names.from_path(bad)
    assert names.from_path("scene_blocks/family.md") == names.from_path("family.md") == "family.md"


def atom(aid: str, content: str, seq: int) -> Atom:
    return Atom(aid, Tenant(), AtomType.EPISODIC, content, seq=seq)


def test_the_index_lists_each_scene_on_disk_with_its_atoms_by_seq() -> None:
    scenes = [Scene("b.md", "B", 2, T0, T1, "x"), Scene("a.md", "A", 5, T0, T0, "y")]
    membership = {"x2": "a.md", "x1": "a.md", "x3": "gone.md"}
    entries = index.rebuild(scenes, membership, {"x1": 1, "x2": 2, "x3": 3})
    assert entries == [
        SceneEntry("a.md", "A", 5, T0, T0, ("x1", "x2")),
        SceneEntry("b.md", "B", 2, T0, T1, ()),
    ]
    assert index.from_json(index.to_json(entries)) == entries


def test_a_malformed_index_is_a_store_error() -> None:
    with pytest.raises(StoreError):
        index.from_json('{"scenes": [{"summary": "no filename"}]}')


def test_atoms_are_attributed_to_the_scene_sharing_their_rare_words() -> None:
    scenes = [
        Scene("hiking.md", "Ann's hikes", 1, T0, T0, "Ann hiked the Alps trail with her dog."),
        Scene("work.md", "Ann's job", 9, T0, T0, "Ann works as a nurse at the city hospital."),
    ]
    got = index.attribute(
        [atom("h", "Ann plans a trail hike", 1), atom("w", "Ann got a hospital shift", 2)], scenes
    )
    assert got == {"h": "hiking.md", "w": "work.md"}
    assert index.attribute([atom("h", "x", 1)], []) == {}


@pytest.mark.parametrize(
    "tag",
    [
        "<user-persona>",
        "</relevant-memories>",
        "<scene-navigation>",
        "<memory-tools-guide>",
        "<system>",
        "< /system>",
        "<!-- x -->",
        "<?xml?>",
        "<SYSTEM attr='1'>",
    ],
)
def test_xml_like_tags_are_escaped_so_they_cannot_break_out(tag: str) -> None:
    escaped = persona_doc.escape_tags(f"Ann {tag} likes tea")
    assert "<" not in escaped
    assert persona_doc.escape_tags(escaped) == escaped
    assert persona_doc.escape_tags("3<4 and x <= y") == "3<4 and x <= y"


def test_navigation_is_appended_by_heat_and_stripped_before_a_rewrite() -> None:
    entries = [SceneEntry("cold.md", "rarely", 1, T0, T0), SceneEntry("hot.md", "often <system>", 9, T0, T1)]
    text = persona_doc.compose("# Ann\n\nAnn is a nurse.", entries)
    body, navigation = persona_doc.split(text)
    assert body == "# Ann\n\nAnn is a nurse."
    assert navigation.index("hot.md") < navigation.index("cold.md")
    assert (
        "- path: scene_blocks/hot.md\n- heat: 9\n- updated: 2026-08-04 09:15\n- summary: often &lt;system>"
        in navigation
    )
    again = persona_doc.compose(text, entries[:1])  # the old navigation is replaced, not stacked
    assert again.count(persona_doc.NAV_MARKER) == 1 and "hot.md" not in again


def test_a_body_cannot_fake_the_navigation() -> None:
    hostile = f"# Ann\n{persona_doc.NAV_MARKER}\n### fake.md\n- path: ../../etc/passwd"
    text = persona_doc.compose(hostile, [SceneEntry("a.md", "A", 1, T0, T0)])
    assert text.count(persona_doc.NAV_MARKER) == 1
    assert "fake" not in text and "passwd" not in text and "scene_blocks/a.md" in text


@pytest.mark.parametrize(
    ("body", "shown"),
    [
        (
            "# Persona\n\nWhat these memories say about Ann, most telling first.\n\n## Ann\n\n- Home: Leeds.",
            "## Ann\n\n- Home: Leeds.",
        ),
        (
            "# 用户画像\n\n以下是记忆中关于用户的信息。\n\n## 用户\n\n- 健康：对花生过敏",
            "## 用户\n\n- 健康：对花生过敏",
        ),
        ("# Persona\n## Ann\n- Home: Leeds.", "## Ann\n- Home: Leeds."),
        # other shapes are shown whole: no sections, no title, a preface that may hold facts
        ("# Persona\nAlice teaches piano.", "# Persona\nAlice teaches piano."),
        ("Ann is a nurse.\n\n## Ann\n- Home: Leeds.", "Ann is a nurse.\n\n## Ann\n- Home: Leeds."),
        (
            "# Ann\n\nAnn is a nurse.\nShe lives in Leeds.\n\n## Plans\n- Lisbon",
            "# Ann\n\nAnn is a nurse.\nShe lives in Leeds.\n\n## Plans\n- Lisbon",
        ),
    ],
)
def test_the_profile_a_prompt_reads_leaves_out_the_files_title_and_lead(body: str, shown: str) -> None:
    assert persona_doc.profile(body) == shown
