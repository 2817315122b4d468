"""`critiquebench score`: the command (forked from one that imported the CLI) on real data files (and planning
answers in-process)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from critiquebench.cli.score import score_lines
from critiquebench.domains import get_domain
from tests import forked_cli

PROJECT = Path(__file__).resolve().parents[1]
DATA = PROJECT.parent / "shared" / "datasets"


_FORKED: dict[str, str] = {}


@pytest.fixture(autouse=True)
def _forked(forked_light_env: dict[str, str]) -> Iterator[None]:
    """The command in its own process, forked from one that imported the CLI (`forked_light_env`), not a fresh
    interpreter importing it again."""
    _FORKED.update(forked_light_env)
    yield
    _FORKED.clear()


def run(*args: str, stdin: str | None = None, cwd: Path = PROJECT, env: dict[str, str] | None = None
        ) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in _FORKED.items() if k != "CRITIQUEBENCH_DATA"} | (env or {})
    return forked_cli.run(["critiquebench", "score", *args], environment, input=stdin, cwd=cwd, timeout=120)


def write_jsonl(path: Path, rows: list[object]) -> Path:
    text = "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows)
    path.write_text(text, encoding="utf-8")
    return path


def test_scores_game24_answers_and_reports_bad_lines(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    answers = write_jsonl(tmp_path / "answers.jsonl", [
        {"id": "ok", "instance": "901", "response": "(10-6)*5+4 = 24 [ANSWER END]\nThe answer is above."},
        {"id": "numbers", "instance": 902, "response": "(1+2)*(7+1) = 24"},
        {"id": "hostile", "instance": "902", "response": f"__import__('os').system('touch {marker}')"},
        "this is not json",
        {"id": "unknown", "instance": "99999", "response": "1+1"},
        {"id": "generated", "instance": "gen-3-2", "response": "1+1"},
        {"id": "no-response", "instance": "901"},
        "",
        {"id": "wrong-value", "instance": "901", "response": "4*5+6+10"},
    ])
    out = tmp_path / "scored.jsonl"
    # no --dataset: the default ../shared/datasets relative to the working directory (the project root)
    result = run("--domain", "game24", "--feedback", "all", "--output", str(out), str(answers))
    assert result.returncode == 1, result.stderr  # three lines were errors
    rows = {row["id"]: row for row in map(json.loads, out.read_text().splitlines())}
    assert len(rows) == 8 and not marker.exists()
    assert rows["ok"] == {"id": "ok", "instance": "901", "valid": True, "verdict": "valid",
                          "answer": "(10-6)*5+4", "feedback": ""}
    assert rows["numbers"]["verdict"] == "invalid" and rows["numbers"]["feedback"] == (
        "This expression consists of the numbers 1, 2, 7, 1, but it has to consist of only and exactly "
        "['1', '2', '4', '7'].")
    # the study's reader checks the numbers first (kstechly/gpt-and-i `game24.check_answer`); never run
    assert rows["hostile"]["verdict"] == "invalid"
    assert rows["hostile"]["feedback"].startswith("This expression consists of the numbers ")  # the path's digits
    assert rows[4]["verdict"] == "error" and "bad JSON" in rows[4]["error"]  # ids default to the line number
    assert rows["unknown"]["verdict"] == "error" and "99999" in rows["unknown"]["error"]
    assert rows["generated"]["verdict"] == "invalid"
    assert rows["no-response"]["verdict"] == "error" and "response" in rows["no-response"]["error"]
    assert rows["wrong-value"]["feedback"] == "This expression evaluates to 36 instead of 24."
    assert "scored 8 answers: 1 valid, 4 invalid, 0 malformed, 3 error" in result.stderr


def test_scores_colorings_by_id_and_by_file_from_stdin(tmp_path: Path) -> None:
    wheel = tmp_path / "wheel.col"
    wheel.write_text("p edge 4 3\ne 1 2\ne 2 3\ne 3 4\n")
    lines = [
        {"id": "a", "instance": "265", "response": "0: Color1\n1: Color2\n2: Color2\n3: Color1\n4: Color2"},
        {"id": "b", "instance": "265", "response": "0: Color1\n1: Color1\n2: Color2\n3: Color1\n4: Color2"},
        {"id": "c", "instance": str(wheel), "response": "0: red\n1: blue\n2: red\n3: blue"},
        {"id": "d", "instance": str(tmp_path / "missing.col"), "response": "0: red"},
        {"id": "e", "instance": "1", "response": "no idea"},
    ]
    stdin = "".join(json.dumps(line) + "\n" for line in lines)
    folder = str(DATA / "graph_coloring")
    result = run("--domain", "coloring", "-f", "first", "--dataset", folder, "-", stdin=stdin, cwd=tmp_path)
    assert result.returncode == 1, result.stderr  # line "d" was an error
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["verdict"] for r in rows] == ["valid", "invalid", "valid", "error", "malformed"]
    assert rows[0]["answer"] == {"0": "Color1", "1": "Color2", "2": "Color2", "3": "Color1", "4": "Color2"}
    assert rows[1]["feedback"] == (
        "Vertex 0 and vertex 1 were both colored Color1 despite being connected by an edge.")
    assert rows[4]["feedback"] == "Vertex 0 was not given a value in the coloring."


def test_dataset_from_env_and_clear_usage_errors(tmp_path: Path) -> None:
    answers = write_jsonl(tmp_path / "a.jsonl", [{"id": 1, "instance": "1", "response": "1*1*4*6"}])
    from_env = run("--domain", "game24", str(answers), cwd=tmp_path, env={"CRITIQUEBENCH_DATA": str(DATA)})
    assert json.loads(from_env.stdout)["verdict"] == "valid"
    nowhere = json.loads(run("--domain", "game24", str(answers), cwd=tmp_path).stdout)
    assert nowhere["verdict"] == "error" and "--dataset" in nowhere["error"]
    unknown = run("--domain", "chess", str(answers))
    assert unknown.returncode == 2 and "unknown domain" in unknown.stderr
    assert "Traceback" not in unknown.stderr
    missing = run("--domain", "game24", str(tmp_path / "nope.jsonl"))
    assert missing.returncode == 2 and "nope.jsonl" in missing.stderr and "Traceback" not in missing.stderr


def test_scores_planning_answers_through_the_registry() -> None:
    """In-process (no extra subprocess): the registry hands planning ids and files to H2's domain."""
    folder = DATA / "planbench" / "blocksworld"
    plan = json.loads((folder / "optimal_plans.json").read_text())["instance-131.pddl"]["plan"]
    lines = [json.dumps(line) for line in (
        {"id": "optimal", "instance": "131", "response": plan},
        {"id": "file", "instance": str(folder / "instances" / "instance-131.pddl"), "response": plan},
        {"id": "short", "instance": "131", "response": plan.split("\n")[0]},
        {"id": "nowhere", "instance": "100000", "response": plan},
    )]
    rows = {r["id"]: r for r in score_lines(get_domain("blocksworld"), lines, "first", DATA)}
    assert rows["optimal"]["verdict"] == rows["file"]["verdict"] == "valid"
    assert rows["short"]["verdict"] == "invalid" and rows["short"]["feedback"]
    assert rows["nowhere"]["verdict"] == "error"
