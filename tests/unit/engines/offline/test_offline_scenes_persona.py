"""The offline L2 scene writer and L3 persona writer: topic grouping under the capacity rules,
readable scenes, and a persona that names the person."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from memstrata.engines.offline.l2.writer import OfflineSceneWriter, founding_minimum
from memstrata.engines.offline.l3.facts import OTHER, reports_on_another, section_of
from memstrata.engines.offline.l3.writer import OfflinePersonaWriter
from memstrata.layers.l2.scene_file import DELETED, parse_scene
from memstrata.models import Atom, AtomType, ConsolidationResult, Scene, Tenant, Vectors
from memstrata.ports import ConsolidationRequest, PersonaRequest
from memstrata.stores.files.folder import DirectoryFolder

T = Tenant("ann")
NOW = 1_785_405_720_000
DAY = 86_400_000
MAY_8 = 1_683_554_160_000  # 2023-05-08


def atom(n: int, content: str, label: str, kind: AtomType = AtomType.EPISODIC, priority: int = 50) -> Atom:
    meta = {"speaker": "Ann", "message_time": MAY_8 + n * DAY}
    return Atom(f"a{n}", T, kind, content, priority, label, metadata=meta, seq=n)


async def consolidate(
    folder: Path,
    atoms: list[Atom],
    members: dict[str, list[Atom]] | None = None,
    *,
    final: bool = True,
    max_scenes: int = 15,
    vectors: dict[str, Vectors] | None = None,
) -> ConsolidationResult:
    scenes = tuple(parse_scene(name, text(folder / name), NOW) for name in listing(folder))
    members = members or {}
    total = len(atoms) + sum(len(m) for m in members.values())
    request = ConsolidationRequest(
        T,
        DirectoryFolder(folder),
        tuple(atoms),
        scenes,
        {k: tuple(v) for k, v in members.items()},
        vectors or {},
        max_scenes,
        final,
        NOW,
        total,
    )
    return await OfflineSceneWriter().consolidate(request)


def listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def text(path: Path) -> str:
    return path.read_text()


def hiking(n: int) -> Atom:
    return atom(n, f"Ann hiked trail number {n} in the Alps.", "outdoors")


def cooking(n: int) -> Atom:
    return atom(n, f"Ann baked bread recipe {n}.", "food")


async def test_one_new_scene_per_batch_the_rest_wait_then_settle(tmp_path: Path) -> None:
    music = [atom(n, f"Ann played violin piece {n}.", "music") for n in (6, 7)]
    await consolidate(tmp_path, music)
    atoms = [hiking(1), hiking(2), hiking(3), cooking(4), cooking(5)]
    result = await consolidate(tmp_path, atoms, {"music.md": music}, final=False)
    assert listing(tmp_path) == ["music.md", "outdoors.md"]
    assert set(result.placed) == {"a1", "a2", "a3"} and result.deferred == ("a4", "a5")

    members = {"music.md": music, "outdoors.md": atoms[:3]}
    settled = await consolidate(tmp_path, atoms[3:], members, final=True)
    assert listing(tmp_path) == ["food.md", "music.md", "outdoors.md"]
    assert settled.placed == {"a4": "food.md", "a5": "food.md"} and settled.deferred == ()


async def test_a_first_batch_founds_a_scene_per_topic_its_atoms_share(tmp_path: Path) -> None:
    music = [atom(n, f"Ann played violin piece {n}.", "music") for n in (6, 7)]
    stray = atom(9, "Ann fixed the sink.", "sink-fixed")
    result = await consolidate(
        tmp_path, [hiking(1), hiking(2), hiking(3), cooking(4), cooking(5), *music, stray]
    )
    assert listing(tmp_path) == ["food.md", "music.md", "outdoors.md"]
    assert result.placed["a4"] == "food.md" and result.placed["a6"] == "music.md"
    assert result.placed["a9"] in {"food.md", "music.md", "outdoors.md"} and result.deferred == ()


async def test_atoms_update_the_scene_that_owns_their_topic(tmp_path: Path) -> None:
    first = [hiking(1), hiking(2)]
    await consolidate(tmp_path, first)
    result = await consolidate(
        tmp_path, [atom(3, "Ann climbed a mountain.", "outdoors-fitness")], {"outdoors.md": first}
    )
    assert result.placed == {"a3": "outdoors.md"}
    assert listing(tmp_path) == ["outdoors.md"]
    assert "Ann climbed a mountain." in text(tmp_path / "outdoors.md")


async def test_at_max_scenes_the_smallest_scene_is_merged_before_a_new_one(tmp_path: Path) -> None:
    outdoors, food = [hiking(1), hiking(2), hiking(3)], [cooking(4), cooking(5)]
    await consolidate(tmp_path, outdoors)
    await consolidate(tmp_path, food, {"outdoors.md": outdoors})
    music = [atom(n, f"Ann played violin piece {n}.", "music") for n in (6, 7, 8)]
    result = await consolidate(tmp_path, music, {"outdoors.md": outdoors, "food.md": food}, max_scenes=2)
    assert text(tmp_path / "food.md") == DELETED + "\n"  # soft-deleted: merged away
    assert result.placed["a4"] == result.placed["a5"] == "outdoors.md"
    assert {result.placed[a.id] for a in music} == {"music.md"}


async def test_leftovers_settle_by_embedding_when_every_atom_has_one_else_by_words(tmp_path: Path) -> None:
    outdoors, food = [hiking(1), hiking(2), hiking(3)], [cooking(4), cooking(5), cooking(6)]
    await consolidate(tmp_path, outdoors)
    await consolidate(tmp_path, food, {"outdoors.md": outdoors})
    stray = atom(9, "Ann hiked to the trail of the Alps again.", "misc")
    members = {"outdoors.md": outdoors, "food.md": food}
    by_words = await consolidate(tmp_path, [stray], members)
    assert by_words.placed == {"a9": "outdoors.md"}
    east, north = np.array([1, 0], dtype=np.float32), np.array([0, 1], dtype=np.float32)
    vectors = {a.id: east for a in outdoors} | {a.id: north for a in [*food, stray]}
    by_vectors = await consolidate(tmp_path, [stray], members, vectors=vectors)
    assert by_vectors.placed == {"a9": "food.md"}


async def test_a_small_group_does_not_displace_a_scene_at_the_limit(tmp_path: Path) -> None:
    outdoors, food = [hiking(1), hiking(2), hiking(3)], [cooking(4), cooking(5), cooking(6)]
    await consolidate(tmp_path, outdoors)
    await consolidate(tmp_path, food, {"outdoors.md": outdoors})
    music = [atom(7, "Ann played violin.", "music"), atom(8, "Ann played a violin duet.", "music")]
    result = await consolidate(tmp_path, music, {"outdoors.md": outdoors, "food.md": food}, max_scenes=2)
    assert listing(tmp_path) == ["food.md", "outdoors.md"]
    assert set(result.placed.values()) <= {"food.md", "outdoors.md"} and len(result.placed) == 2


async def test_a_scene_is_readable_markdown_with_facts_preferences_and_a_dated_timeline(
    tmp_path: Path,
) -> None:
    atoms = [
        atom(1, "Ann works as a nurse at the city hospital.", "work", AtomType.PERSONA, 80),
        atom(2, "Ann loves night shifts.", "work", AtomType.PERSONA, 60),
        atom(3, "Ann said: Great news!", "work", AtomType.EPISODIC, 40),
        Atom(
            "a4",
            T,
            AtomType.EPISODIC,
            "Ann started a new ward rotation.",
            60,
            "work",
            metadata={
                "speaker": "Ann",
                "message_time": MAY_8,
                "activity_start": "2023-05-01",
                "activity_end": "2023-05-31",
            },
            seq=4,
        ),
    ]
    await consolidate(tmp_path, atoms)
    scene = parse_scene("work.md", text(tmp_path / "work.md"), 0)
    assert scene.summary.startswith("Work: ") and "Ann" in scene.summary and "\n" not in scene.summary
    body = scene.body
    assert body.startswith("# Work\n\nWhat Ann said about work")
    assert "## Profile\n\n- Ann works as a nurse at the city hospital." in body
    assert "## Preferences\n\n- Ann loves night shifts." in body
    timeline = body[body.index("## Timeline") :]
    assert timeline.index("**2023-05** Ann started a new ward rotation.") < timeline.index(
        "Ann said: Great news!"
    )


def test_the_founding_minimum_grows_with_the_tenant() -> None:
    assert founding_minimum(12, 15) == 2
    assert founding_minimum(720, 15) == 10
    assert founding_minimum(4000, 15) == 54


async def test_the_persona_is_a_profile_of_standing_facts_with_instructions(tmp_path: Path) -> None:
    facts = [
        atom(1, "Ann works as a nurse at the city hospital.", "work", AtomType.PERSONA, 80),
        atom(2, "Ann loves night shifts.", "work", AtomType.PERSONA, 60),
        atom(
            3, "Ann instructed the assistant: answer in short bullet points.", "x", AtomType.INSTRUCTION, -1
        ),
        atom(4, "Ann said: so true", "work", AtomType.PERSONA, 40),
        atom(6, "Ann is allergic to peanuts, by the way.", "health", AtomType.PERSONA, 80),
        atom(7, "Ann works as a nurse at the city hospital now.", "work", AtomType.PERSONA, 80),
    ]
    events = (
        atom(5, "Ann ran a marathon on 7 May 2023.", "fitness", AtomType.EPISODIC, 60),
        Atom(
            "a8",
            T,
            AtomType.EPISODIC,
            "Ann is moving to Lisbon on 14 June 2023.",
            55,
            "home",
            metadata={"speaker": "Ann", "message_time": MAY_8, "activity_start": "2023-06-14"},
            seq=8,
        ),
    )
    scenes = (Scene("work.md", "Work: nurse, hospital (Ann; 2 memories, May 2023)", 5, NOW, NOW, "# Work"),)
    request = PersonaRequest(
        T,
        DirectoryFolder(tmp_path, only="persona.md"),
        "",
        True,
        scenes,
        ("work.md",),
        tuple(facts),
        (),
        NOW,
        events,
    )
    body = await OfflinePersonaWriter().write(request)
    assert "Lisbon" not in body  # the move was planned for June 2023: long past by NOW
    request = replace(request, now=MAY_8)
    body = await OfflinePersonaWriter().write(request)
    assert body.startswith("# Persona\n\nWhat these memories say about Ann")
    assert "\n## Ann\n" in body
    assert "- Health: Ann is allergic to peanuts (May 2023)." in body  # filler gone, dated
    assert body.count("works as a nurse") == 1  # the repeat is left out
    assert "- Likes: Ann loves night shifts (May 2023)." in body  # every fact says when it was said
    assert "- Plans: Ann is moving to Lisbon on 14 June 2023." in body  # still to come on 8 May
    assert "marathon" not in body  # a past event lives in its scene
    assert "- Ann instructed the assistant: answer in short bullet points. (always)" in body
    assert "so true" not in body
    assert body == await OfflinePersonaWriter().write(request)  # deterministic


async def test_the_persona_stays_within_its_budget(tmp_path: Path) -> None:
    hobbies = "chess judo origami pottery fencing rowing karate archery sailing juggling".split()
    places = "Peru Chad Fiji Laos Oman Mali Cuba Iran Togo Niue".split()
    facts = [
        atom(n, f"Ann practises {h} with friends from {p} on weekends.", "hobby", AtomType.PERSONA, 70)
        for n, (h, p) in enumerate(zip(hobbies, places, strict=True), start=1)
    ]
    request = PersonaRequest(
        T, DirectoryFolder(tmp_path, only="persona.md"), "", True, (), (), tuple(facts), (), NOW, ()
    )
    sizes = []
    for limit in (300, 800):
        body = await OfflinePersonaWriter(limit).write(request)
        assert len(body) <= limit and "Ann practises" in body
        sizes.append(body.count("Ann practises"))
    assert sizes[0] < sizes[1]


@pytest.mark.parametrize(
    ("text", "section"),
    [
        ("Maya lives in Lisbon with Tom", "Home"),
        ("Jon is living Jon's dream by having Jon's own dance studio", "Plans"),  # "dream", not a home
        ("Caroline's faith keeps Caroline going", "Identity"),
        ("Gina's faith in Jon is a real boost", OTHER),  # trust, not religion
        ("John chatted with John's family and friends about it", OTHER),  # an activity, with them
        ("Maria's kids are Maria's future", "Family and relationships"),
    ],
)
def test_a_fact_goes_to_the_section_its_words_mean(text: str, section: str) -> None:
    assert section_of(text, atom(1, text, "x", AtomType.PERSONA)) == section


@pytest.mark.parametrize(
    ("text", "reported"),
    [
        ("Caroline knows Melanie loves live music", True),
        ("Melanie said Caroline's art is great", True),
        ("Caroline thinks that Melanie is brave", True),
        ("Caroline said: Melanie and company look great", True),
        ("Caroline knows how to paint", False),
        ("Caroline loves Melanie's art", False),
    ],
)
def test_what_one_person_knows_of_another_is_in_neither_profile(text: str, reported: bool) -> None:
    assert reports_on_another(text, frozenset({"caroline", "melanie"})) is reported


async def test_a_plan_says_when_it_was_made(tmp_path: Path) -> None:
    plan = atom(1, "Ann wants to open a bakery in the old town.", "work", AtomType.PERSONA, 70)
    request = PersonaRequest(
        T, DirectoryFolder(tmp_path, only="persona.md"), "", True, (), (), (plan,), (), NOW, ()
    )
    body = await OfflinePersonaWriter().write(request)
    assert "- Plans: Ann wants to open a bakery in the old town (May 2023)." in body  # plans change


async def test_talk_about_a_photo_is_no_fact(tmp_path: Path) -> None:
    atoms = (
        atom(1, "Check out this pic of Ann's fave dance session.", "dance", AtomType.PERSONA, 80),
        atom(2, "The photo is from a forest near Ann's hometown.", "home", AtomType.PERSONA, 80),
        atom(3, "Ann teaches contemporary dance at her own studio.", "dance", AtomType.PERSONA, 60),
    )
    request = PersonaRequest(
        T, DirectoryFolder(tmp_path, only="persona.md"), "", True, (), (), atoms, (), NOW, ()
    )
    body = await OfflinePersonaWriter().write(request)
    assert "contemporary dance" in body
    assert "pic" not in body and "photo" not in body


async def test_a_scene_whose_content_drifted_takes_its_topics_name(tmp_path: Path) -> None:
    # founded under a keyword pair, then filled with cooking: the file, its members and so the
    # index and the navigation move to the topic's name
    first = [atom(n, f"Ann is allergic to peanuts {n} in Lisbon.", "allergic-lisbon") for n in (1, 2)]
    (tmp_path / "allergic-lisbon.md").write_text("# Allergic lisbon\n")
    later = [atom(n, f"Ann baked bread recipe {n} in Lisbon.", "food-lisbon") for n in (3, 4, 5)]
    result = await consolidate(tmp_path, later, {"allergic-lisbon.md": first})
    assert set(result.placed.values()) == {"food.md"}
    assert set(result.placed) == {"a1", "a2", "a3", "a4", "a5"}
    assert listing(tmp_path) == ["allergic-lisbon.md", "food.md"]
    assert text(tmp_path / "allergic-lisbon.md").startswith(DELETED)
    assert "Ann baked bread recipe 4 in Lisbon." in text(tmp_path / "food.md")


async def test_a_scene_that_still_holds_its_topic_keeps_its_name(tmp_path: Path) -> None:
    first = [hiking(1), hiking(2)]
    await consolidate(tmp_path, first)
    result = await consolidate(tmp_path, [cooking(3), cooking(4), hiking(5)], {"outdoors.md": first})
    assert "outdoors.md" in result.placed.values()
    assert "outdoors.md" in listing(tmp_path)


async def test_a_scene_filled_with_keyword_labelled_atoms_drifts_by_their_words(tmp_path: Path) -> None:
    # The demo's case: climbing atoms labelled with keyword pairs (no topic in the label) piled
    # into a scene named for a pipeline; their words say fitness, so the scene takes that name.
    first = [atom(1, "Ann's Airflow pipeline broke again.", "airflow-pipeline")]
    (tmp_path / "pipeline.md").write_text("# Pipeline\n")
    later = [
        atom(2, "Ann loves bouldering, it clears her head.", "bouldering-clears"),
        atom(3, "Ann has been climbing since 2019.", "climbing-long"),
        atom(4, "Ann plans to climb in Sintra with Ines.", "sintra-weekend"),
    ]
    result = await consolidate(tmp_path, later, {"pipeline.md": first})
    assert set(result.placed.values()) == {"fitness.md"}
    assert set(result.placed) == {"a1", "a2", "a3", "a4"}  # the members move with the name
    assert text(tmp_path / "pipeline.md").startswith(DELETED)
    assert "Ann has been climbing since 2019." in text(tmp_path / "fitness.md")
