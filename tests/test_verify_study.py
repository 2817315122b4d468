"""Verification-only studies: candidates of known correctness judged by a scripted LLM, through the CLI (its Typer
app, run in this process: what is tested is the study, not the program's start-up)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from critiquebench.domains import get_domain, load_instances
from critiquebench.store.db import connect
from critiquebench.studies.critique_quality import claimed_colors, claimed_edges, coloring_hallucinations
from tests.scripted_server import ScriptedServer
from tests.test_study_cli import DATASETS, game24_reply, invoke, run_args

BAD_CRITIQUE = "Vertex 0 and vertex 1 were both colored Color 0 despite being connected by an edge."


def verifier_reply(messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
    """Accepts every Game of 24 expression; rejects every colouring with a fixed critique and every plan by
    blaming its first step."""
    last = messages[-1]["content"]
    if "Verify whether the above plan is valid" in last:
        first_step = last.rsplit("[PLAN]\n", 1)[1].split("\n", 1)[0]
        return f"Plan is invalid. The first action fails: {first_step}"
    if "Please check if this coloring is correct" in last:
        return BAD_CRITIQUE
    if "Please check if the following expression" in last:
        return json.dumps({"feedback": "all good", "correct": True})
    return game24_reply(messages, params)


@pytest.fixture(scope="module")
def coloring_1() -> Any:
    domain = get_domain("coloring")
    return load_instances(domain, "1", DATASETS)[0]


def test_critique_claims_are_read_from_free_text() -> None:
    text = "Vertices 3 and 5 are both colored Color 2. Also the edge (4, 9) is wrong; vertex 7 is colored red."
    assert claimed_edges(text) == {(3, 5), (4, 9)}
    assert claimed_colors(text) == {(3, "color2"), (5, "color2"), (7, "red")}
    assert claimed_edges("x" * 100_000 + "vertex 1 and vertex 2") == set()  # bounded input


@pytest.mark.parametrize(
    ("critique", "label"),
    [
        ("Vertex 1 and vertex 13 were both colored Color 0 despite being connected by an edge.", "none"),
        ("Vertex 2 and vertex 9 share an edge.", "none"),
        ("Vertex 0 and vertex 1 are connected.", "edge"),
        ("Vertex 7 is colored Color 2.", "color"),
        ("Vertex 0 and vertex 1 were both colored Color 0 despite being connected by an edge.", "both"),
        ("The coloring looks wrong to me.", "none"),
    ],
)
def test_coloring_critique_hallucinations(coloring_1: Any, critique: str, label: str) -> None:
    # instance-1 has edges 1-13 and 2-9 but no edge 0-1; the critiqued colouring gives 0 Color 1, 1, 7 and
    # 13 Color 0.
    answer = {"0": "Color 1", "1": "Color 0", "2": "Color 0", "7": "Color 0", "9": "Color 2", "13": "Color 0"}
    assert coloring_hallucinations(coloring_1, answer, critique).label == label


def test_verify_study_reports_rates_per_kind_and_critique_quality(tmp_path: Path) -> None:
    store = tmp_path / "store.sqlite"
    args = ["verify-study", "v", "--domains", "game24,coloring,blocksworld",
            "--instances", "game24=901-902,coloring=1-2,blocksworld=2",
            "--model", "scripted", "--dataset", str(DATASETS), "--store", str(store)]  # fmt: skip
    with ScriptedServer(reply=verifier_reply) as server:
        first = invoke(*args, "--base-url", server.base_url)
        assert "LLM verifier by answer kind" in first.stdout and "Critique quality" in first.stdout
        calls = server.requests
        again = invoke(*args, "--base-url", server.base_url)
        assert server.requests == calls and "0 judged now, 20 before" in again.stderr

    db = connect(store)
    assert db.execute("SELECT COUNT(*) FROM verify_results WHERE study = 'v'").fetchone()[0] == 20
    rows = json.loads(invoke("report", "v", "--store", str(store), "--format", "json").stdout)
    by_kind = {(r["domain"], r["kind"]): r for r in rows}
    # The scripted LLM accepts every expression: no false negatives, every wrong expression a false positive.
    assert by_kind[("game24", "correct")]["fnr"] == 0.0 and by_kind[("game24", "correct")]["n"] == 2
    assert by_kind[("game24", "ablated_op")]["fpr"] == 1.0
    # ... and rejects every colouring: correct colourings are false negatives.
    assert by_kind[("coloring", "correct")]["fnr"] == 1.0
    assert by_kind[("coloring", "all")]["said_valid"] == 0 and by_kind[("coloring", "all")]["n"] == 8

    critiques = json.loads(
        invoke("report", "v", "--store", str(store), "--format", "json", "--table", "critique").stdout
    )
    totals = [r for r in critiques if r["domain"] == "coloring" and r["kind"] == "all"]
    assert sum(r["count"] for r in totals) == 8 and {r["critiques"] for r in totals} == {8}
    labels = db.execute(
        "SELECT DISTINCT quality FROM verify_results WHERE study = 'v' AND domain = 'coloring' AND instance_id = '1'"
    ).fetchall()
    assert {label for (label,) in labels} <= {"edge", "both"}  # instance-1 has no edge 0-1
    listed = json.loads(invoke("studies", "--json", "--store", str(store)).stdout)
    assert listed[0]["kind"] == "verify" and listed[0]["done"] == 20
    plans = {r["kind"]: r["label"] for r in critiques if r["domain"] == "blocksworld" and r["kind"] != "all"}
    # Blaming the first step names the action that fails (but none of its preconditions) for the
    # inexecutable plan; for the plan that runs but misses the goal it names nothing that is wrong.
    assert plans["inexecutable"] == "partial" and plans["non_goal_reaching"] == "wrong"
    assert "correct" not in plans  # a valid plan has no error to name


def test_verify_study_judges_answers_from_an_earlier_study(tmp_path: Path) -> None:
    store = tmp_path / "store.sqlite"
    with ScriptedServer(reply=verifier_reply) as server:
        invoke(*run_args("loop", store, server, "901-903", "standard,sound-first:rounds=3"))
        invoke("verify-study", "fromloop", "--from-study", "loop", "--kinds", "correct",
               "--model", "scripted", "--base-url", server.base_url, "--store", str(store))  # fmt: skip
        clash = invoke("verify-study", "loop", "--from-study", "loop", "--base-url", server.base_url,
                       "--store", str(store), check=2)  # fmt: skip
        assert "not a verification-only study" in clash.stderr
    db = connect(store)
    answers = db.execute(
        "SELECT COUNT(DISTINCT r.instance_id || '|' || a.answer) "
        "FROM attempts a JOIN runs r USING (thread_id) WHERE r.study = 'loop'"
    ).fetchone()[0]
    judged = db.execute("SELECT COUNT(*) FROM verify_results WHERE study = 'fromloop' AND kind = 'llm'").fetchone()[0]
    assert judged == answers and answers >= 3
    rows = json.loads(invoke("report", "fromloop", "--store", str(store), "--format", "json").stdout)
    assert {r["kind"] for r in rows} == {"correct", "llm", "all"}


def table2_reply(messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
    """Game of 24: accepts (claiming 24) exactly the expressions with a '*', else claims 1; no-info: always 24.
    Colouring: accepts exactly the prompts of even length."""
    last = messages[-1]["content"]
    if last.startswith("Please evaluate the following expression"):
        return '{"evaluation": "24"}'
    if "uses only the given numbers" in last:
        expression = last.split("24: ", 1)[1].split("\n", 1)[0]
        return json.dumps({"evaluation": "24", "correct": True} if "*" in expression
                          else {"evaluation": "1", "correct": False})  # fmt: skip
    return "Verifier confirmed success." if len(last) % 2 == 0 else "Vertex 0 and vertex 1 share a colour."


def test_table2_of_a_verification_study_has_the_papers_rows_and_counts(tmp_path: Path) -> None:
    from fractions import Fraction

    from critiquebench.domains.arith import MalformedExpression, evaluate, parse_expression
    from critiquebench.domains.base import split_kind, verification_messages

    store = tmp_path / "store.sqlite"
    with ScriptedServer(reply=table2_reply) as server:
        # game24 has no non_optimal/ablated, coloring no ablated_op: each domain is given its own kinds.
        for domain, sel, kind_list in (
            ("game24", "901-905", "correct,ablated_op,ablated_number,random,correct-no-info,random-no-info"),
            ("coloring", "1-3", "correct,ablated,non_optimal,random,correct-cot"),
        ):
            invoke("verify-study", f"t2{domain}", "--domains", domain, "--instances", sel, "--kinds", kind_list,
                   "--model", "scripted", "--dataset", str(DATASETS), "--store", str(store),
                   "--base-url", server.base_url)  # fmt: skip
        bad = invoke("verify-study", "bad", "--domains", "coloring", "--instances", "1", "--kinds",
                     "correct-no-info", "--model", "scripted", "--store", str(store), "--dataset", str(DATASETS),
                     "--base-url", server.base_url, check=2)  # fmt: skip
        assert "can ask the kind(s) correct-no-info" in bad.stderr
    db = connect(store)
    for domain in ("game24", "coloring"):
        study = f"t2{domain}"
        dom = get_domain(domain)
        instances = {i.id: i for i in load_instances(dom, "901-905" if domain == "game24" else "1-3", DATASETS)}
        hand: dict[str, dict[str, int]] = {}
        for kind, instance_id, text in db.execute(
            "SELECT kind, instance_id, candidate FROM verify_results WHERE study = ?", [study]
        ).fetchall():
            variant = split_kind(kind)[1]
            instance = instances[instance_id]
            reply = table2_reply([{"content": verification_messages(dom, instance, text, variant)[0]["content"]}], {})
            said = ('"correct": true' in reply or reply.startswith("Verifier") or
                    (variant == "no-info"))  # the no-info reply always states 24  # fmt: skip
            valid = dom.verify(instance, text).valid
            c = hand.setdefault(variant, dict.fromkeys(
                ("verifications", "agree", "false_pos", "sound_invalid", "false_neg", "sound_valid",
                 "evaluation_correct", "evaluations"), 0))  # fmt: skip
            c["verifications"] += 1
            c["agree"] += said == valid
            c["false_pos"] += said and not valid
            c["sound_invalid"] += not valid
            c["false_neg"] += valid and not said
            c["sound_valid"] += valid
            if domain == "game24" and variant != "cot":
                try:
                    value: Fraction | None = evaluate(parse_expression(text))
                except MalformedExpression:
                    value = None
                c["evaluations"] += 1
                c["evaluation_correct"] += value == (24 if said or variant == "no-info" else 1)
        rows = json.loads(invoke("report", study, "--table", "2", "--format", "json", "--store", str(store)).stdout)
        got = {r["prompt"]: {k: r[k] for k in hand["default"]} for r in rows}
        assert got == hand
        assert {r["table"] for r in rows} == {"2"} and {r["domain"] for r in rows} == {domain}
    # The paper's denominators: every instance x kind of the verification set, per prompt.
    totals = json.loads(invoke("report", "t2game24", "--table", "2", "--format", "json", "--store", str(store)).stdout)
    assert {r["prompt"]: r["verifications"] for r in totals} == {"default": 20, "no-info": 10}
    text = invoke("report", "t2coloring", "--table", "2", "--store", str(store)).stdout
    assert "Table 2: the LLM as verifier" in text


def round_reply(messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
    """Game of 24 loop: a different wrong answer each round (the round is the number of earlier answers);
    verifier prompts: every expression accepted."""
    if "Please check if the following expression" in messages[-1]["content"]:
        return json.dumps({"evaluation": "24", "correct": True})
    done = sum(m["role"] == "assistant" for m in messages)
    return f"(1+{done})*1 [ANSWER END]"


def test_llm_answers_drawn_one_per_instance_as_the_study_drew_them(tmp_path: Path) -> None:
    store = tmp_path / "store.sqlite"
    verify = ["--kinds", "correct,llm", "--from-study", "loop", "--llm-instances", "game24=901-902",
              "--llm-per-instance", "1", "--model", "scripted", "--store", str(store)]  # fmt: skip
    with ScriptedServer(reply=round_reply) as server:
        # Before the loop exists, a dry run counts the answers still to come; a real run says to run it first.
        dry = invoke("verify-study", "v", "--domains", "game24", "--instances", "901-903", *verify,
                     "--base-url", server.base_url, "--dataset", str(DATASETS), "--dry-run").stdout  # fmt: skip
        assert "answers to judge: 5 (0 finished before" in dry
        assert ("game24, default prompt: 5 answers (correct 3, llm 2); the llm answers come from study loop, "
                "not in the store yet") in dry  # fmt: skip
        missing = invoke("verify-study", "v", "--domains", "game24", "--instances", "901-903", *verify,
                         "--base-url", server.base_url, "--dataset", str(DATASETS), check=2)  # fmt: skip
        assert "no such study in this store (run it first)" in missing.stderr
        invoke(*run_args("loop", store, server, "901-903", "sound-binary:rounds=3"))
        for name in ("v", "twin"):
            invoke("verify-study", name, "--domains", "game24", "--instances", "901-903", *verify,
                   "--base-url", server.base_url, "--dataset", str(DATASETS))  # fmt: skip
    db = connect(store)
    answers: dict[str, list[str]] = {}
    for instance_id, answer in db.execute("SELECT r.instance_id, a.answer FROM attempts a JOIN runs r "
                                          "USING (thread_id) WHERE r.study = 'loop'").fetchall():  # fmt: skip
        answers.setdefault(instance_id, []).append(answer)
    assert all(len(set(a)) == 3 for a in answers.values())  # three different answers to draw from
    picked = {study: dict(db.execute("SELECT instance_id, candidate FROM verify_results WHERE study = ? AND "
                                     "kind = 'llm'", [study]).fetchall()) for study in ("v", "twin")}  # fmt: skip
    assert set(picked["v"]) == {"901", "902"}  # one answer each, for the selected puzzles only
    assert all(text in answers[i] for i, text in picked["v"].items())
    assert picked["twin"] == picked["v"]  # the draw is the study's seed, not chance


def test_each_domain_judges_its_own_kinds_and_earlier_study(tmp_path: Path) -> None:
    """`kinds` and `from_study` as tables per domain: Blocksworld judges only GPT-4's recorded one-shot plans (the
    PlanBench file, imported and replayed: 0 calls), Game of 24 only its candidates, in one study."""
    store = tmp_path / "store.sqlite"
    recorded = DATASETS / "planbench" / "reference" / "gpt-4_blocksworld_one_shot.json"
    invoke("import", "planbench", str(recorded), "--study", "gpt4-oneshot", "--store", str(store))
    invoke("resume", "gpt4-oneshot", "--replay", "--store", str(store))
    toml = tmp_path / "v.toml"
    toml.write_text(
        f'domains = ["game24", "blocksworld"]\ndataset = "{DATASETS}"\nllm_per_instance = 1\n'
        '[kinds]\ngame24 = ["correct", "random"]\nblocksworld = ["llm"]\n'
        '[from_study]\nblocksworld = "gpt4-oneshot"\n'
        '[instances]\ngame24 = "901-903"\nblocksworld = "2-501"\n'
    )
    out = invoke("verify-study", "v", "--config", str(toml), "--dry-run", "--store", str(store)).stdout
    assert "game24, default prompt: 6 answers (correct 3, random 3): 3 invalid / 3 valid\n" in out
    # every recorded plan, none still to come; PlanBench's labels say 157 of the 500 are correct
    assert "blocksworld, default prompt: 500 answers (llm 500): 343 invalid / 157 valid\n" in out
    with connect(store) as db:
        answers = {r["instance_id"]: r["answer"] for r in db.query(
            "SELECT r.instance_id, a.answer FROM attempts a JOIN runs r USING (thread_id) WHERE r.study = ?",
            ["gpt4-oneshot"])}  # fmt: skip
    raw = {str(i["instance_id"]): i["llm_raw_response"] for i in json.loads(recorded.read_text())["instances"]}
    assert answers == raw  # the plans judged are GPT-4's, as recorded
    bad = tmp_path / "bad.toml"
    bad.write_text(toml.read_text().replace("[from_study]\n", '[from_study]\nlogistics = "x"\n'))
    refused = invoke("verify-study", "w", "--config", str(bad), "--dry-run", "--store", str(store), check=2)
    assert "from_study for logistics, which is not among the study's domains" in refused.stderr
