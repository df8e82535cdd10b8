"""A conversation that drifts: a scene founded under keywords (``airflow-dag``) fills with talk
about work, and the offline engine renames it ``work``: the file, the scene index, the persona's
navigation and every member atom's link follow, with the real offline engine end to end."""

from __future__ import annotations

from pathlib import Path

from memstrata import Memory

USER = "rui"
SESSIONS = [
    [
        "I spent the evening untangling the Airflow DAG again.",
        "The Airflow scheduler keeps skipping the nightly DAG.",
    ],
    ["My boss asked me to present the fix at the office on Monday."],
    ["The client meeting went well, my manager was happy with the project."],
    ["I got a promotion at work, I am now the team's lead engineer."],
    ["My new job title comes with a salary raise from the company."],
]


def test_a_scene_whose_talk_drifts_is_renamed_with_its_file_index_navigation_and_members(home: Path) -> None:
    names: list[list[str]] = []
    with Memory.open(home, embedder=None) as mem:
        for i, said in enumerate(SESSIONS):
            messages = [{"role": "user", "name": "Rui", "content": text} for text in said]
            mem.capture(messages, session_key=f"s{i}", user_id=USER)
            mem.end_session(f"s{i}", user_id=USER)
            mem.run_all()
            names.append([s.name for s in mem.scenes(user_id=USER)])
        assert names[0] == ["airflow-dag.md"]  # founded under its first atoms' keywords
        assert names[-1] == ["work.md"]  # the talk moved on: the name followed
        atoms = mem.atoms(user_id=USER, limit=100)
        (scene,) = mem.scenes(user_id=USER)
        assert set(scene.atom_ids) == {a.id for a in atoms}  # the first atoms moved along
        navigation = mem.recall("what happened at work?", user_id=USER).system_context
        assert "work.md" in navigation and "airflow-dag" not in navigation
        assert "Airflow DAG" in mem.read_scene("work.md", user_id=USER).body
    folder = next(home.glob("profiles/*/scene_blocks"))
    live = [p.name for p in folder.glob("*.md") if not p.read_text().startswith("[DELETED]")]
    assert live == ["work.md"]


def test_the_demo_files_climbing_under_fitness_and_the_pipeline_under_work(tmp_path: Path) -> None:
    # Before: the climbing atoms had keyword labels (bouldering-clears, climbing-long: the lexicon
    # lacked the words), settled into work.md by nearness, and no rule saw them drift.
    from typer.testing import CliRunner

    from memstrata.cli.main import app

    where = tmp_path / "demo"
    assert CliRunner().invoke(app, ["demo", "--dir", str(where)]).exit_code == 0
    with Memory.open(where, read_only=True) as mem:
        atoms = {a.id: a.content for a in mem.atoms(user_id="maya", limit=100)}
        held = {s.name: " ".join(atoms[i] for i in s.atom_ids) for s in mem.scenes(user_id="maya")}
    assert set(held) == {"fitness.md", "home.md", "work.md"}
    assert "bouldering" in held["fitness.md"] and "climb" not in held["work.md"]
    assert "Airflow pipeline" in held["work.md"] and "Airflow" not in held["fitness.md"]
