"""Produced folders killed (SIGKILL) at a random moment of their rewrite: the folder is the previous
one byte for byte or the new one whole, and a rerun leaves the new one whole (build_collection's
:func:`ehi.data.collection_build.run_build_script`, encode_collection's
:func:`ehi.model.encode_collection.encode_collection`, write_tower's
:func:`ehi.model.tower.write_tower_spec`)."""

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow  # kill loops: fresh interpreters killed at random moments
BUILD = """import json, pathlib, sys, time
out = pathlib.Path(sys.argv[1]); (out / "qrels").mkdir(parents=True)
for i in range(20):  # slow enough for a kill to land inside
    (out / f"part{i}.txt").write_text(sys.argv[2]); time.sleep(0.02)
(out / "corpus.jsonl").write_text("".join(json.dumps({"_id": f"d{i}", "title": "", "text": f"{sys.argv[2]} doc {i}"}) + "\\n" for i in range(40)))
(out / "queries.jsonl").write_text("".join(json.dumps({"_id": f"q{i}", "text": f"query {i}"}) + "\\n" for i in range(8)))
(out / "qrels" / "test.tsv").write_text("query-id\\tcorpus-id\\tscore\\n" + "".join(f"q{i}\\td{i}\\t1\\n" for i in range(8)))
"""


def contents(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def run(code: str, kill_after: float | None = None) -> None:
    """Run ``code`` in a fresh interpreter; SIGKILL it after ``kill_after`` seconds when given."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if kill_after is None:
        assert proc.wait(timeout=300) == 0, proc.stderr.read().decode()[-2000:]
        return
    time.sleep(kill_after)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)


def encode_command(tmp_path: Path) -> str:
    """Code that encodes collection ``c`` (built here by BUILD) into ``v`` with a tiny encoder; its
    argument list left open for more flags."""
    (tmp_path / "build.py").write_text(BUILD)
    run(f"from ehi.data.collection_build import run_build_script; run_build_script({str(tmp_path / 'build.py')!r}, "
        f"{str(tmp_path / 'c')!r}, ['x'])")
    return ("from ehi.model.encode_collection import main; "
            f"main([{str(tmp_path / 'c')!r}, {str(tmp_path / 'v')!r}, '--encoder', 'tiny-random'")


def check_killed_then_rerun(out: Path, write_old: str, write_new: str, is_new_whole, seconds: float, seed: int):
    run(write_old)
    old = contents(out)
    run(write_new, kill_after=random.Random(seed).uniform(0, seconds))
    now = contents(out) if out.exists() else {}
    assert now == old or is_new_whole(out), sorted(now)
    run(write_new)
    assert is_new_whole(out)


@pytest.mark.parametrize("seed", range(3))
def test_a_collection_build_killed_at_a_random_moment_leaves_the_old_or_the_new_whole(tmp_path, seed):
    (tmp_path / "build.py").write_text(BUILD)
    build = "from ehi.data.collection_build import run_build_script; run_build_script({!r}, {!r}, [{!r}])"
    out = tmp_path / "c"

    def is_new_whole(folder):
        return (folder / "qrels/test.tsv").is_file() and b"new doc 39" in (folder / "corpus.jsonl").read_bytes()

    check_killed_then_rerun(out, build.format(str(tmp_path / "build.py"), str(out), "old"),
                            build.format(str(tmp_path / "build.py"), str(out), "new"), is_new_whole, 1.5, seed)


@pytest.mark.parametrize("seed", range(2))
def test_an_encoding_killed_at_a_random_moment_leaves_the_old_or_the_new_whole(tmp_path, seed):
    encode = encode_command(tmp_path) + ", '--max-length', '{}'])"

    def is_new_whole(folder):
        manifest = json.loads((folder / "embeddings.json").read_text())
        return manifest["max_length"] == 16 and manifest["n_docs"] == 40 and (folder / "queries.npy").is_file()

    check_killed_then_rerun(tmp_path / "v", encode.format(32), encode.format(16), is_new_whole, 6.0, seed)


@pytest.mark.parametrize("seed", range(2))
def test_a_tower_spec_killed_at_a_random_moment_leaves_the_old_or_the_new_whole(tmp_path, seed):
    from ehi.data.vector_world import WorldConfig, generate_world

    generate_world(tmp_path / "w", WorldConfig(n_docs=60, dim=8, n_topics=2, subtopics_per_topic=2, n_train=5,
                                               n_dev=2, n_test=2))
    write = (f"from ehi.model.tower import write_tower_spec; "
             f"write_tower_spec({str(tmp_path / 't')!r}, {str(tmp_path / 'w')!r}, kind={{!r}})")

    def is_new_whole(folder):
        return json.loads((folder / "tower.json").read_text())["kind"] == "mlp"

    check_killed_then_rerun(tmp_path / "t", write.format("linear"), write.format("mlp"), is_new_whole, 3.0, seed)


@pytest.mark.parametrize("seed", range(3))
def test_a_table_pair_killed_at_a_random_moment_is_the_old_pair_or_the_new_one(tmp_path, seed):
    """dev_choice, world_fit and world_calibration write their CSV and Markdown as one
    (:func:`ehi.report.report_files.write_table_pair`)."""
    write = ("import pandas as pd; from ehi.report.report_files import write_table_pair\n"
             "for i in range(ROUNDS):\n"
             "    t = pd.DataFrame({'x': range(20000)}).assign(y=i)\n"
             f"    write_table_pair(t, {str(tmp_path / 't.csv')!r}, f'table {{i}}', {str(tmp_path / 't.md')!r})")
    run(write.replace("ROUNDS", "1"))
    run(write.replace("ROUNDS", "40"), kill_after=random.Random(seed).uniform(0, 2.0))
    written = (tmp_path / "t.md").read_text().split()[-1]
    assert (tmp_path / "t.csv").read_text().splitlines()[1].endswith(f",{written}")
    assert not list(tmp_path.glob(".staged.*"))


def test_an_encoding_killed_after_its_last_row_is_swapped_in_without_encoding_again(tmp_path, caplog):
    """Killed between writing its manifest and moving the folder into place: the rerun moves it."""
    import logging
    import shutil

    run(encode_command(tmp_path) + "])")
    shutil.move(tmp_path / "v", tmp_path / "v.partial")  # whole, its progress file removed, not yet renamed
    written = contents(tmp_path / "v.partial")
    from ehi.model.encode_collection import main

    with caplog.at_level(logging.INFO):
        main([str(tmp_path / "c"), str(tmp_path / "v"), "--encoder", "tiny-random"])
    assert contents(tmp_path / "v") == written and "encoded c into" not in caplog.text
    shutil.rmtree(tmp_path / "v")
    with caplog.at_level(logging.INFO):
        main([str(tmp_path / "c"), str(tmp_path / "v"), "--encoder", "tiny-random"])
    assert "encoded c into" in caplog.text  # what an encoding logs, which the swap above did not
