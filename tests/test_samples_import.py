"""`import samples` and the pass-at-k / labels reports on a generated log of Game of 24 samples.

The log is generated here (a right expression, a wrong one and a malformed answer drawn per sample, written as
"Answer: EXPR = 24" lines, read with `--domain-option reader=lenient`), with planted cases: an instance whose
majority ties, a label that disagrees with the sound verifier, and bad lines. Replaying the imported study
through the graphs must make 0 LLM calls and give the accuracies the pass-at-k table computes from the samples.
"""

from __future__ import annotations

import csv
import json
import random
from math import comb
from pathlib import Path
from typing import Any

import pytest

from critiquebench.domains import BUILTIN, get_domain, load_instances
from critiquebench.domains.arith import solve
from critiquebench.nodes.voting import pick_consistent
from tests.test_study_cli import DATASETS, invoke

IDS = [str(i) for i in range(901, 921)]
N = 6
KS = (1, 3, 6)
TIE = "907"  # its samples: wrong A, right B, right B, wrong A, then wrong C twice: maj@2 and maj@4 tie
PLANTED = ("905", 1)  # the source calls this sample valid; the sound verifier does not
LENIENT = ("--domain-option", "reader=lenient")


def _log() -> list[dict[str, Any]]:
    """The generated samples (with the source's labels, equal to the truth but for PLANTED)."""
    rng = random.Random(7)
    domain = get_domain("game24", reader="lenient")
    puzzles = {i.id: i for i in load_instances(domain, ",".join(IDS), DATASETS)}
    rows = []
    for ident in IDS:
        numbers = puzzles[ident].data["numbers"]
        right, wrong = solve(numbers), " + ".join(map(str, numbers))
        if ident == TIE:
            texts = [wrong, right, right, wrong, "1 + 1", "1 + 1"]
        else:
            texts = [rng.choice([right, wrong, wrong, None]) for _ in range(N)]
        for index, text in enumerate(texts):
            response = "I give up." if text is None else f"Answer: {text} = 24"
            truth = domain.verify(puzzles[ident], response).valid  # a wrong sum may still be 24
            label = (not truth) if (ident, index) == PLANTED else truth
            rows.append({"instance": ident, "sample": index, "response": response, "label": label,
                         "model": "batch-model", "temperature": 0.8,
                         "prompt": f"Use {numbers} to make 24."})  # fmt: skip
    return rows


def _write_jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


def _import(tmp_path: Path, name: str, source: Path, *extra: str, check: int | None = 0) -> Any:
    return invoke("import", "samples", str(source), "--domain", "game24", "--study", name, "--dataset",
                  str(DATASETS), "--store", str(tmp_path / "s.sqlite"), *LENIENT, *extra, check=check)  # fmt: skip


def _report(tmp_path: Path, name: str, table: str) -> list[dict[str, Any]]:
    out = invoke("report", name, "--table", table, "--format", "json", "--store", str(tmp_path / "s.sqlite"))
    return json.loads(out.stdout)


def _config(store: Path | str, name: str) -> dict[str, Any]:
    from critiquebench.store.db import opened
    from critiquebench.store.results import load_study

    with opened(store) as db:
        config = load_study(db, name)
    assert config is not None
    return config


def _truth(rows: list[dict[str, Any]]) -> dict[str, list[bool]]:
    domain = get_domain("game24", reader="lenient")
    instances = {i.id: i for i in load_instances(domain, ",".join(IDS), DATASETS)}
    out: dict[str, list[bool]] = {}
    for row in rows:
        out.setdefault(row["instance"], []).append(domain.verify(instances[row["instance"]], row["response"]).valid)
    return out


@pytest.fixture
def imported(tmp_path: Path) -> tuple[Path, list[dict[str, Any]]]:
    rows = _log()
    bad = ["not json", {"instance": "901", "model": "batch-model"}, {**rows[0]},  # sample 0 of 901 again
           {"instance": "99999", "response": "1 + 1", "model": "batch-model", "temperature": 0.8}]  # fmt: skip
    source = _write_jsonl(tmp_path / "log.jsonl", [*rows, *bad])
    result = _import(tmp_path, "log", source, "--k", ",".join(map(str, KS)), check=1)  # exit 1: lines skipped
    skipped = [line for line in result.stderr.splitlines() if line.startswith("skipped line")]
    first = len(rows) + 1
    assert [s.split(":")[0] for s in skipped] == [f"skipped line {first + i}" for i in range(4)], result.stderr
    assert "sample 0 of instance 901 is also line 1" in skipped[2] and "99999" in skipped[3]
    assert f"imported {len(rows)} sample(s) of {len(IDS)} instance(s)" in result.stdout
    return tmp_path, rows


def test_replay_makes_no_llm_call_and_agrees_with_the_pass_at_k_table(imported: tuple[Path, list[Any]]) -> None:
    tmp_path, _ = imported
    store = str(tmp_path / "s.sqlite")
    replay = invoke("resume", "log", "--replay", "--store", store)
    assert "LLM calls: 0 new" in replay.stderr and "0 failed" in replay.stderr, replay.stderr
    table1 = {r["scheme"]: r for r in _report(tmp_path, "log", "1")}
    assert set(table1) == {"standard", *(f"{s}:k={k}" for s in ("sampling", "self-consistency") for k in KS)}
    for row in _report(tmp_path, "log", "pass-at-k"):
        k = row["k"]
        assert table1[f"sampling:k={k}"]["correct"] == row["sampling_correct"]
        assert table1[f"self-consistency:k={k}"]["correct"] == row["maj_correct"]
    assert table1["standard"]["correct"] == table1["sampling:k=1"]["correct"]
    from critiquebench.store.cache import CallCache

    endpoint = _config(store, "log")["endpoint_id"]
    assert endpoint.startswith("recorded:samples:")  # keyed by where the answers came from (issue 45 item 0)
    with CallCache(store) as cache:  # the recorded prompt is what the replay sent (and its transcript shows)
        sent = {r.messages[0]["content"] for r in cache.recorded("batch-model", endpoint)}
    assert len(sent) == len(IDS) and all(text.startswith("Use [") for text in sent)


def test_pass_at_k_equals_a_direct_computation(imported: tuple[Path, list[Any]]) -> None:
    tmp_path, rows = imported
    truth = _truth(rows)
    report = {r["k"]: r for r in _report(tmp_path, "log", "pass-at-k")}
    assert sorted(report) == list(KS)
    for k in KS:
        direct = sum(1 - comb(N - sum(v), k) / comb(N, k) for v in truth.values()) / len(truth)
        assert report[k]["pass_at_k"] == pytest.approx(direct, abs=1e-12)
        assert report[k]["sampling_correct"] == sum(any(v[:k]) for v in truth.values())
        assert report[k]["pass_ci_low"] <= report[k]["pass_at_k"] <= report[k]["pass_ci_high"]
        assert report[k]["small_n"] is True  # 20 instances: fewer than SMALL_N, marked as Table 1 marks its cells
    shown = invoke("report", "log", "--table", "pass-at-k", "--format", "md", "--store", str(tmp_path / "s.sqlite"))
    assert f"| 1 | {len(IDS)} * |" in shown.stdout and "* fewer than 30 instances" in shown.stdout
    valid = sum(sum(v) for v in truth.values())
    assert report[1]["samples"] == len(rows) and report[1]["samples_valid"] == valid


def test_majority_ties_go_to_the_earliest_answer_as_the_study_vote(tmp_path: Path) -> None:
    rows = [r for r in _log() if r["instance"] == TIE]
    source = _write_jsonl(tmp_path / "tie.jsonl", rows)
    _import(tmp_path, "tie", source, "--k", "1,2,3,4,6")
    maj = {r["k"]: r["maj_correct"] for r in _report(tmp_path, "tie", "pass-at-k")}
    domain = get_domain("game24", reader="lenient")
    (instance,) = load_instances(domain, TIE, DATASETS)
    judged = [{"round": i + 1, "canonical": domain.canonical(instance, r["response"]),
               "valid": domain.verify(instance, r["response"]).valid} for i, r in enumerate(rows)]  # fmt: skip
    for k, got in maj.items():
        chosen = pick_consistent(judged[:k])
        assert got == int(judged[chosen - 1]["valid"]), k
    assert maj == {1: 0, 2: 0, 3: 1, 4: 0, 6: 0}  # 2 and 4 tie: the wrong answer came first
    invoke("resume", "tie", "--replay", "--store", str(tmp_path / "s.sqlite"))
    table1 = {r["scheme"]: r["correct"] for r in _report(tmp_path, "tie", "1")}
    assert {k: table1[f"self-consistency:k={k}"] for k in maj} == maj
    # vote=text (the study's code): "2 * (5 + 8) - 2" and "(5 + 8) * 2 - 2" would be two answers; here the
    # texts repeat exactly, so the picks are the same, and the replayed self-consistency:vote=text agrees
    _import(tmp_path, "tie-text", source, "--k", "1,2,3,4,6", "--vote", "text")
    texts = {r["k"]: r["maj_correct"] for r in _report(tmp_path, "tie-text", "pass-at-k")}
    invoke("resume", "tie-text", "--replay", "--store", str(tmp_path / "s.sqlite"))
    table1 = {r["scheme"]: r["correct"] for r in _report(tmp_path, "tie-text", "1")}
    assert texts == {k: table1[f"self-consistency:k={k},vote=text"] for k in texts} == maj


def test_the_labels_table_lists_the_planted_disagreement(imported: tuple[Path, list[Any]],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.setenv("CRITIQUEBENCH_COLUMNS", "160")  # the reason whole on one line (80: tests/test_narrow_output)
    tmp_path, rows = imported
    labels = _report(tmp_path, "log", "labels")
    (summary,) = [r for r in labels if r["kind"] == "summary"]
    assert summary["labelled"] == len(rows) and summary["agree"] == len(rows) - 1
    (wrong,) = [r for r in labels if r["kind"] == "disagreement"]
    assert (wrong["instance"], wrong["sample"]) == PLANTED and wrong["reason"]
    text = invoke("report", "log", "--table", "labels", "--store", str(tmp_path / "s.sqlite")).stdout
    assert "Disagreements" in text and wrong["reason"][:20] in text


def test_a_csv_a_parquet_file_and_a_dataframe_import_the_same_study(imported: tuple[Path, list[Any]]) -> None:
    import pandas  # the analysis extra, which scripts/setup.sh installs: this test never skips

    import critiquebench as cb

    tmp_path, rows = imported
    path = tmp_path / "log.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    _import(tmp_path, "from-csv", path, "--k", ",".join(map(str, KS)))
    done = cb.import_samples(pandas.DataFrame(rows), domain="game24", study="from-frame", k=KS,
                             store=tmp_path / "s.sqlite", dataset=DATASETS,
                             domain_options={"reader": "lenient"})  # fmt: skip
    assert done["samples"] == len(rows) and not done["skipped"]
    pandas.DataFrame(rows).to_parquet(tmp_path / "log.parquet")
    _import(tmp_path, "from-parquet", tmp_path / "log.parquet", "--k", ",".join(map(str, KS)))
    expected = _report(tmp_path, "log", "pass-at-k")
    assert _report(tmp_path, "from-csv", "pass-at-k") == expected
    assert _report(tmp_path, "from-parquet", "pass-at-k") == expected
    assert _report(tmp_path, "from-frame", "pass-at-k") == expected
    assert _report(tmp_path, "from-frame", "labels") == _report(tmp_path, "log", "labels")


def test_nothing_is_stored_when_no_line_imports_and_extra_schemes_say_why(tmp_path: Path) -> None:
    source = _write_jsonl(tmp_path / "bad.jsonl", ["{", {"instance": "901"}])
    result = _import(tmp_path, "bad", source, check=2)
    assert result.stderr.startswith("error: no sample could be imported: line 1: bad JSON")
    assert not (tmp_path / "s.sqlite").exists()  # nothing was written, not even an empty store
    good = _write_jsonl(tmp_path / "good.jsonl", _log()[:N])
    result = _import(tmp_path, "more", good, "--schemes", "llm-llm:rounds=2")
    assert "llm-llm:rounds=2 needs new LLM calls" in result.stderr and "left out" in result.stderr
    missing = invoke("report", "more", "--table", "pass-at-k", "--store", str(tmp_path / "nothing.sqlite"), check=2)
    assert missing.stderr.startswith("error:")


BUILTIN_CASES = [(name, "gen:2:1" if spec.generated else "1,2" if name == "coloring" else "2,3", not spec.generated)
                 for name, spec in BUILTIN.items()]  # fmt: skip


@pytest.mark.parametrize(("name", "selection", "from_dataset"), [
    *BUILTIN_CASES, (str(DATASETS / "autoplanbench" / "gripper"), "1,2", False)])  # fmt: skip
def test_every_builtin_domain_and_a_pddl_folder(tmp_path: Path, name: str, selection: str, from_dataset: bool) -> None:
    """A wrong answer (plan) then a right one per instance: pass@1 = 0.5, and both found by k = 2."""
    domain = get_domain(name)
    rows = [{"instance": instance.id, "response": domain.candidate(instance, kind, random.Random(0))}
            for instance in load_instances(domain, selection, DATASETS if from_dataset else None)
            for kind in ("random", "correct")]  # fmt: skip
    source = _write_jsonl(tmp_path / "samples.jsonl", rows)
    store = tmp_path / "p.sqlite"
    args = ["--dataset", str(DATASETS)] if from_dataset else []
    invoke("import", "samples", str(source), "--domain", name, "--study", "s", "--store", str(store), *args)
    report = {r["k"]: r for r in _report_at(store, "s")}
    assert report[1]["sampling_correct"] == 0 and report[2]["sampling_correct"] == 2, name
    assert report[2]["pass_at_k"] == 1.0 and report[1]["pass_at_k"] == 0.5


def _report_at(store: Path, name: str) -> list[dict[str, Any]]:
    return json.loads(invoke("report", name, "--table", "pass-at-k", "--format", "json", "--store", str(store)).stdout)


def test_store_copy_and_delete_carry_the_samples(imported: tuple[Path, list[Any]]) -> None:
    tmp_path, _ = imported
    invoke("store", "copy", str(tmp_path / "s.sqlite"), str(tmp_path / "copy.sqlite"))
    assert _report_at(tmp_path / "copy.sqlite", "log") == _report(tmp_path, "log", "pass-at-k")
    invoke("studies", "delete", "log", "--store", str(tmp_path / "copy.sqlite"))
    gone = invoke("report", "log", "--table", "pass-at-k", "--store", str(tmp_path / "copy.sqlite"), check=2)
    assert gone.stderr.startswith("error:")
    from critiquebench.store.db import opened

    with opened(tmp_path / "copy.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM recorded_samples").fetchone()[0] == 0


def test_a_postgres_store_imports_and_reports_the_same(imported: tuple[Path, list[Any]], pg_store: str) -> None:
    tmp_path, rows = imported
    source = _write_jsonl(tmp_path / "clean.jsonl", rows)
    invoke("import", "samples", str(source), "--domain", "game24", "--study", "log", "--dataset", str(DATASETS),
           "--store", pg_store, *LENIENT, "--k", ",".join(map(str, KS)))  # fmt: skip
    out = invoke("report", "log", "--table", "pass-at-k", "--format", "json", "--store", pg_store).stdout
    assert json.loads(out) == _report(tmp_path, "log", "pass-at-k")


def test_vote_text_counts_reply_texts_as_the_study_code(tmp_path: Path) -> None:
    """One right expression written three ways, one wrong one twice (tests/test_self_consistency_vote.py)."""
    from tests.test_self_consistency_vote import REPLIES

    source = _write_jsonl(tmp_path / "901.jsonl", [{"instance": "901", "response": r} for r in REPLIES])
    for name, vote, right in (("by-answer", "answer", 1), ("by-text", "text", 0)):
        # the study's server cut each reply at its stop, so its code compared the texts before "[ANSWER END]"
        _import(tmp_path, name, source, "--k", "5", "--vote", vote, "--domain-option", "stop=[ANSWER END]")
        (row,) = _report(tmp_path, name, "pass-at-k")
        assert (row["vote"], row["maj_correct"]) == (vote, right)
        invoke("resume", name, "--replay", "--store", str(tmp_path / "s.sqlite"))
        table1 = {r["scheme"]: r["correct"] for r in _report(tmp_path, name, "1")}
        assert table1[f"self-consistency:k=5{',vote=text' if vote == 'text' else ''}"] == right
