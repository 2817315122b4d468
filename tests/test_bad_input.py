"""Every bad input a user can hand the CLI ends in one `error:` line (exit 2), leaves the disk as it was, and
never shows a traceback. Each case runs the command in its own process, as a user would: forked from a server
that imported the console script's module once (tests/forked_cli.py), with the process's own pipes, exit status,
logging and warnings; the read-only media test runs the installed command itself inside its mount namespace."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from typer.testing import CliRunner

from critiquebench.cli import app
from critiquebench.domains import get_domain, load_instances
from critiquebench.store.cache import CallCache
from critiquebench.store.db import connect
from critiquebench.store.results import ensure_schema, save_study, upsert_run
from critiquebench.studies.execute import CHECKPOINTS_ENV
from tests.scripted_server import ScriptedServer

ROOT = Path(__file__).resolve().parents[1]
CLI = ROOT / ".venv" / "bin" / "critiquebench"
DATASETS = ROOT.parent / "shared" / "datasets"


_FORKED: dict[str, str] = {}  # the forked command's environment (the module's fixture below)


@pytest.fixture(scope="module", autouse=True)
def _forked_command(forked_light_env: dict[str, str]) -> Iterator[None]:
    """~30 commands: each a process forked from one that imported the CLI (the worker's `forked_light_env`, which
    preloads tests/forked_cli.py's MEDIUM), not an interpreter importing it anew (0.6 s of CPU each)."""
    _FORKED.update(forked_light_env)
    yield
    _FORKED.clear()


def cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    assert _FORKED, "the module's fork server is not running"
    return subprocess.run(["critiquebench", *args], capture_output=True, text=True, timeout=120, cwd=ROOT,
                          input=stdin, env=_FORKED)  # fmt: skip


def snapshot(folder: Path) -> dict[str, str]:
    """Every file under `folder` with a hash of its bytes: what "nothing changed on disk" compares. A -shm file
    is SQLite's shared memory between open connections (readers mark it), not content, so it is left out."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.name.endswith("-shm")
    }


def rejected(folder: Path, *args: str, says: str) -> str:
    """Run a command that must fail cleanly: exit 2, one `error:` line naming `says`, nothing changed."""
    before = snapshot(folder)
    line = _one_error_line(args, cli(*args), says)
    assert snapshot(folder) == before, f"{args} changed files on disk"
    return line


def all_rejected(folder: Path, cases: list[tuple[list[str], str]]) -> None:
    """`rejected` for many commands at once (they only read, so they may run side by side)."""
    before = snapshot(folder)
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda case: cli(*case[0]), cases))
    for (args, says), done in zip(cases, results, strict=True):
        _one_error_line(args, done, says)
    assert snapshot(folder) == before


def _one_error_line(args: object, done: subprocess.CompletedProcess[str], says: str) -> str:
    assert done.returncode == 2, (args, done.returncode, done.stderr[-1500:])
    assert "Traceback" not in done.stderr and "Traceback" not in done.stdout, done.stderr[-1500:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    assert says in lines[0], (args, says, lines[0])
    return lines[0]


def study_args(name: str, store: Path, base_url: str, instances: str = "901-902") -> list[str]:
    return ["run", name, "--domains", "game24", "--instances", instances, "--schemes", "standard",
            "--model", "scripted", "--base-url", base_url, "--dataset", str(DATASETS), "--store", str(store),
            "--no-progress"]  # fmt: skip


def make_store(path: Path) -> Path:
    """A store with a study, many runs and cached calls (several pages), written without any LLM."""
    db = connect(path)
    ensure_schema(db)
    save_study(db, "s", {"name": "s", "domains": ["game24"], "schemes": ["standard"],
                         "instances": {"game24": "gen:1:1"}, "base_url": "http://127.0.0.1:9/v1"})  # fmt: skip
    cache = CallCache(db)
    for i in range(200):
        upsert_run(db, f"s/game24/standard/{i}/0", study="s", domain="game24", scheme="standard", params={},
                   instance_id=str(i), trial=0, status="done", correct=1, final_answer="x" * 200)  # fmt: skip
        cache.put_recorded("m", "e", [{"role": "user", "content": f"q{i}" * 50}], "a" * 300)
    db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.conn.close()
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    return path


def test_an_empty_selection_is_an_error_not_everything(tmp_path: Path) -> None:
    store = tmp_path / "store.sqlite"
    for selection in ("", "  ", "game24="):
        args = study_args("bi7", store, "http://127.0.0.1:9/v1", instances=selection)
        rejected(tmp_path, *args, says="empty instance selection for game24")
    assert not store.exists()
    with pytest.raises(ValueError, match="empty instance selection"):
        load_instances(get_domain("game24"), " ", DATASETS)


def test_a_failed_definition_takes_no_name_and_studies_delete_keeps_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CHECKPOINTS_ENV, "1")  # checkpointed runs, so deleting the study must take theirs too
    store = tmp_path / "store.sqlite"
    with ScriptedServer(reply="1 + 2 + 3 + 4") as server:
        rejected(tmp_path, *study_args("bi", store, server.base_url, "5-1"), says="bad range '5-1'")
        assert not store.exists()  # nothing half-made: no store, so no study named bi
        for name, selection in (("bi", "1-2"), ("keep", "3")):  # in this process: quicker, and not bad input
            done = CliRunner().invoke(app, study_args(name, store, server.base_url, selection))
            assert done.exit_code == 0, done.stderr[-1500:]
        rejected(tmp_path, *study_args("other", store, server.base_url, "5-1"), says="bad range '5-1'")
        assert server.answered == 3
    db = connect(store)
    threads = {t for (t,) in db.execute("SELECT DISTINCT thread_id FROM checkpoints").fetchall()}
    assert any(t.startswith("bi/") for t in threads)

    gone = CliRunner().invoke(app, ["studies", "delete", "bi", "--store", str(store)])
    assert gone.exit_code == 0 and "deleted study bi: 2 runs" in gone.stderr, gone.stderr
    for table in ("runs", "attempts", "round_calls", "checkpoints", "writes"):
        rows = db.execute(f"SELECT thread_id FROM {table}").fetchall()
        assert rows and all(t.startswith("keep/") for (t,) in rows), table
    assert [n for (n,) in db.execute("SELECT name FROM studies")] == ["keep"]
    assert db.execute("SELECT COUNT(*) FROM llm_calls").fetchone()[0] == 3  # the shared cache stays
    rejected(tmp_path, "studies", "delete", "bi", "--store", str(store), says="no study named 'bi'")


def test_unusable_stores_get_one_line_and_stay_untouched(tmp_path: Path) -> None:
    (tmp_path / "folder").mkdir()
    good = make_store(tmp_path / "good.sqlite")
    damaged = tmp_path / "truncated.sqlite"
    damaged.write_bytes(good.read_bytes()[: 4096 * 3])
    noise = tmp_path / "noise.sqlite"
    noise.write_bytes(hashlib.sha256(b"x").digest() * 300)
    run = ["run", "s", "--domains", "game24", "--instances", "gen:1:1", "--schemes", "standard"]
    missing = tmp_path / "missing.sqlite"
    cases = [
        *(([*command, "--store", str(tmp_path / "folder")], "is a directory") for command in (["studies"], run)),
        *(([*command, "--store", str(damaged)], "is damaged or not a critiquebench store")
          for command in (["report", "s"], ["export", "s"], ["studies", "delete", "s"])),
        *(([*command, "--store", str(noise)], "is damaged or not a critiquebench store")
          for command in (["cache", "stats"], ["resume", "s"], run)),
        *(([*command, "--store", str(missing)], f"no store at {missing}")
          for command in (["report", "s"], ["studies"], ["cache", "export"], ["studies", "delete", "s"])),
    ]  # fmt: skip
    all_rejected(tmp_path, cases)
    assert not missing.exists()


def test_reading_commands_work_on_read_only_media(tmp_path: Path) -> None:
    """A bind mount made read-only inside a user namespace: the store really is on read-only media."""
    # util-linux's unshare ships on every Debian machine the set-up supports: its absence is a failure, not a skip
    assert shutil.which("unshare"), "unshare (util-linux) is missing"
    media, mount = tmp_path / "media", tmp_path / "mnt"
    media.mkdir()
    mount.mkdir()
    make_store(media / "store.sqlite")
    store = mount / "store.sqlite"
    script = "; ".join([
        f"mount --bind -o ro {media} {mount} || exit 77",
        f"{CLI} studies --json --store {store} > {tmp_path}/studies.json || exit 10",
        f"{CLI} cache stats --json --store {store} > {tmp_path}/stats.json || exit 11",
        f"{CLI} export s --store {store} > {tmp_path}/rounds.jsonl || exit 12",
        f"{CLI} resume s --store {store} 2> {tmp_path}/resume.err; echo $? > {tmp_path}/resume.rc",
    ])  # fmt: skip
    before = snapshot(media)
    done = subprocess.run(["unshare", "-rm", "sh", "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode != 77, f"cannot make a read-only mount here: {done.stderr.strip()[:200]}"
    assert done.returncode == 0, done.stderr[-1500:]
    assert [s["name"] for s in json.loads((tmp_path / "studies.json").read_text())] == ["s"]
    assert json.loads((tmp_path / "stats.json").read_text())["recorded"] == 200
    resume_err = (tmp_path / "resume.err").read_text()
    assert (tmp_path / "resume.rc").read_text().strip() == "2" and "Traceback" not in resume_err
    assert resume_err.startswith("error: ") and "read-only" in resume_err
    assert snapshot(media) == before


def test_toml_values_of_the_wrong_type_name_the_file_and_value(tmp_path: Path) -> None:
    base = 'domains = ["game24"]\nschemes = ["standard"]\ninstances = "1"\n'
    cases = {
        'temperature = "hot"': 'temperature = "hot": temperature must be a number',
        "schemes = [1, 2]": "schemes = [1, 2]: schemes must be a list",
        "instances = 5": "instances = 5: instances must be a selection string",
        "trials = true": "trials = true: trials must be an integer",
    }
    store = tmp_path / "store.sqlite"
    for line, says in cases.items():
        key = line.split(" = ")[0]
        config = tmp_path / f"{key}.toml"
        kept = [row for row in base.splitlines() if not row.startswith(f"{key} =")]
        config.write_text("\n".join([*kept, line]) + "\n")
        message = rejected(tmp_path, "run", "t", "--config", str(config), "--store", str(store), says=says)
        assert str(config) in message
    assert not store.exists()


def test_score_caps_huge_answers_and_fails_on_error_lines(tmp_path: Path) -> None:
    answers = tmp_path / "answers.jsonl"
    huge = "(4 + 5 + 6 - 10) * 4 + 4 " + "1 " * 2_000_000
    answers.write_text(
        json.dumps({"id": "huge", "instance": "901", "response": huge})
        + "\n"
        + json.dumps({"id": "ok", "instance": "901", "response": "6 * 4 * (10 - 5) / 5"})
        + "\n"
    )
    args = ["score", "--domain", "game24", "--dataset", str(DATASETS), "--max-answer-chars", "1000", str(answers)]
    done = cli(*args)
    assert done.returncode == 0, done.stderr
    rows = {r["id"]: r for r in map(json.loads, done.stdout.splitlines())}
    assert rows["huge"]["truncated"] is True and rows["huge"]["response_chars"] == len(huge)
    assert "truncated" not in rows["ok"]
    summary = done.stderr.strip().splitlines()
    assert len(summary) == 1 and summary[0].startswith("scored 2 answers: ")
    assert summary[0].endswith(" 0 error; 1 truncated to 1000 characters")
    with answers.open("a") as fp:
        fp.write("not json\n")
    failed = cli(*args)
    assert failed.returncode == 1 and "Traceback" not in failed.stderr
    assert failed.stderr.strip().splitlines()[-1].endswith("1 error; 1 truncated to 1000 characters")
    rejected(tmp_path, "score", "--domain", "game24", str(tmp_path / "nope.jsonl"), says="nope.jsonl")
    rejected(tmp_path, "score", "--domain", "chess", str(answers), says="--domain chess")


def test_colouring_file_errors_name_the_line_as_written(tmp_path: Path) -> None:
    graph = tmp_path / "bad.col"
    graph.write_text("p edge 3 2\ne 1 2\ne 0 9\n")
    with pytest.raises(ValueError) as caught:
        get_domain("coloring").load(None, graph)
    assert str(caught.value) == (
        f"{graph}:3: 'e 0 9' names vertex 0, outside the vertices 1..3 (the 'p edge 3 ...' header numbers "
        "vertices from 1)"
    )
    graph.write_text("e 0 1\ne 2 2\n")
    with pytest.raises(ValueError, match=r"bad.col:2: 'e 2 2' is a self-loop on vertex 2"):
        get_domain("coloring").load(None, graph)
