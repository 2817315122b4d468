"""Other tools' sample logs imported by `import samples`: lm-evaluation-harness's `--log_samples` JSONL (`--from
lm-eval`) and any JSON lines with `--field NAME=PATH`, through the same row parser and judging as our own
format: the pass@k / maj@k table equals a direct computation and the table of the same samples in our format."""

from __future__ import annotations

import json
from collections import Counter
from math import comb
from pathlib import Path
from typing import Any

import pytest

from critiquebench.domains import get_domain, load_instances
from critiquebench.importers.sample_formats import at, parse_fields
from tests.test_samples_import import IDS, KS, LENIENT, N, _log, _report, _truth, _write_jsonl
from tests.test_study_cli import DATASETS, invoke


def _import(tmp_path: Path, name: str, source: Path, *extra: str, check: int | None = 0) -> Any:
    return invoke("import", "samples", str(source), "--domain", "game24", "--study", name, "--dataset",
                  str(DATASETS), "--store", str(tmp_path / "s.sqlite"), *LENIENT, "--k",
                  "1,2" if "inspect" in extra else ",".join(map(str, KS)), *extra, check=check)  # fmt: skip


def _by_instance(rows: list[dict[str, Any]]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for row in sorted(rows, key=lambda r: (r["instance"], r["sample"])):
        out.setdefault(row["instance"], []).append(row["response"])
    return out


def _lm_eval_lines(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The samples as lm-eval writes them with --log_samples and repeats=N: one line per document."""
    return [{"doc_id": i, "doc": {"rank": ident, "puzzle": "..."}, "target": "24",
             "arguments": {"gen_args_0": {"arg_0": "Use the numbers to make 24.", "arg_1": {"do_sample": True}}},
             "resps": [texts], "filtered_resps": [texts[0]], "filter": "none", "metrics": ["exact_match"],
             "exact_match": 0.0} for i, (ident, texts) in enumerate(_by_instance(rows).items())]  # fmt: skip


def test_an_lm_eval_log_gives_the_pass_at_k_of_a_direct_computation_and_of_our_format(tmp_path: Path) -> None:
    rows = _log()
    ours = _write_jsonl(tmp_path / "ours.jsonl", rows)
    _import(tmp_path, "ours", ours)
    theirs = _write_jsonl(tmp_path / "samples_game24_2026.jsonl", _lm_eval_lines(rows))
    done = _import(tmp_path, "lm", theirs, "--from", "lm-eval", "--field", "instance=doc.rank")
    assert f"imported {len(rows)} sample(s) of {len(IDS)} instance(s)" in done.stdout
    truth = _truth(rows)
    report = {r["k"]: r for r in _report(tmp_path, "lm", "pass-at-k")}
    for k in KS:
        direct = sum(1 - comb(N - sum(v), k) / comb(N, k) for v in truth.values()) / len(truth)
        assert report[k]["pass_at_k"] == pytest.approx(direct, abs=1e-12)
    majority = _direct_majority(rows)
    for k in KS:  # maj@k: the most common readable answer of the first k samples (ties: the earliest) is valid
        assert report[k]["maj_correct"] == sum(majority[ident][k - 1] for ident in majority), k
        assert report[k]["maj_at_k"] == pytest.approx(report[k]["maj_correct"] / len(majority))
    native = {r["k"]: r for r in _report(tmp_path, "ours", "pass-at-k")}
    for k in KS:  # and the same samples in our own format give the same row
        for key in ("pass_at_k", "sampling_correct", "maj_correct", "maj_at_k", "samples", "samples_valid"):
            assert report[k][key] == native[k][key], (k, key)


def _direct_majority(rows: list[dict[str, Any]]) -> dict[str, list[bool]]:
    """instance -> for k = 1..n, whether the majority answer of its first k samples is valid, counted here from
    the game24 domain's canonical answers (not through the report's vote): unreadable answers do not vote, ties
    go to the answer seen first, and with no readable answer the first sample stands."""
    domain = get_domain("game24", reader="lenient")
    puzzles = {i.id: i for i in load_instances(domain, ",".join(IDS), DATASETS)}
    out: dict[str, list[bool]] = {}
    for ident, texts in _by_instance(rows).items():
        judged = [(domain.canonical(puzzles[ident], t), domain.verify(puzzles[ident], t).valid) for t in texts]
        curve = []
        for k in range(1, len(judged) + 1):
            readable = [(c, v) for c, v in judged[:k] if c is not None]
            if not readable:
                curve.append(judged[0][1])
                continue
            counts = Counter(c for c, _ in readable)
            curve.append(next(v for c, v in readable if counts[c] == max(counts.values())))
        out[ident] = curve
    return out


def test_any_json_lines_import_with_field_paths(tmp_path: Path) -> None:
    rows = _log()
    lines = [{"item": {"id": ident}, "outputs": {"texts": texts}} for ident, texts in _by_instance(rows).items()]
    source = _write_jsonl(tmp_path / "mine.jsonl", lines)
    _import(tmp_path, "mine", source, "--field", "instance=item.id", "--field", "response=outputs.texts")
    _import(tmp_path, "ours", _write_jsonl(tmp_path / "ours.jsonl", rows))
    assert [(r["k"], r["pass_at_k"], r["maj_at_k"]) for r in _report(tmp_path, "mine", "pass-at-k")] == [
        (r["k"], r["pass_at_k"], r["maj_at_k"]) for r in _report(tmp_path, "ours", "pass-at-k")]


def test_a_bad_field_or_format_is_one_line(tmp_path: Path) -> None:
    source = _write_jsonl(tmp_path / "x.jsonl", [{"a": 1}])
    for extra, says in ((["--field", "answer=a"], "--field answer=a: NAME is one of instance, response"),
                        (["--field", "response"], "--field response: write NAME=PATH"),
                        (["--from", "helm"], "--from helm: one of samples, lm-eval, inspect")):  # fmt: skip
        done = _import(tmp_path, "x", source, *extra, check=2)
        assert done.stderr.strip().splitlines() == [f"error: {done.stderr.strip().removeprefix('error: ')}"]
        assert says in done.stderr, done.stderr
    assert parse_fields(["instance=doc.id"]) == {"instance": "doc.id"}
    assert at({"resps": [["a", "b"]]}, "resps.0.1") == "b" and at({"a": [1]}, "a.5") is None
    assert json.loads(json.dumps(at({"doc": {"x": {"y": 3}}}, "doc.x"))) == {"y": 3}


def test_a_real_inspect_ai_log_imports_with_its_own_reader(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A real inspect_ai task (generate, 2 epochs) against the scripted server writes the log; `--from inspect`
    reads it with inspect_ai's `read_eval_log`: one sample per (sample, epoch), the sample id as the instance."""
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.scorer import match
    from inspect_ai.solver import generate

    from tests.scripted_server import ScriptedServer

    answers = {"901": "Answer: (4 * 5) + (10 - 6) = 24", "902": "Answer: 1 + 1 + 1 + 1 = 24"}  # 901 is 4 5 6 10

    def reply(messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
        return next((a for k, a in answers.items() if f"Puzzle {k}" in messages[-1]["content"]), "no")

    with ScriptedServer(reply=reply) as server:
        task = Task(dataset=[Sample(input=f"Puzzle {k}: make 24", target="24", id=k) for k in answers],
                    solver=generate(), scorer=match(), epochs=2)  # fmt: skip
        monkeypatch.setenv("LOCAL_API_KEY", "sk-test")  # inspect's openai-api/local provider wants one
        (log,) = inspect_eval(task, model="openai-api/local/scripted", model_base_url=server.base_url,
                              log_dir=str(tmp_path / "logs"), display="none")  # fmt: skip
    assert log.status == "success"
    done = _import(tmp_path, "insp", Path(log.location), "--from", "inspect")
    assert "imported 4 sample(s) of 2 instance(s) as model 'openai-api/local/scripted'" in done.stdout
    report = {r["k"]: r for r in _report(tmp_path, "insp", "pass-at-k")}
    truth = {"901": [True, True], "902": [False, False]}  # direct: the sound verifier on each answer
    for k in (1, 2):
        direct = sum(1 - comb(2 - sum(v), k) / comb(2, k) for v in truth.values()) / len(truth)
        assert report[k]["pass_at_k"] == pytest.approx(direct) and report[k]["maj_correct"] == 1
