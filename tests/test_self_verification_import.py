"""The self-verification study's 2023 colouring protocol and `import self-verification`.

Expected prompt texts come from the study's own data and the paper, never from our output: GPT-4's recorded
colouring runs (kstechly/gpt-and-i @ada66fc6, `../shared/datasets/self_verification/recorded/`: what its code
sent) and 000's appendix A.4.3 (000:1098-1126). Fixtures under tests/fixtures/gpt_and_i/ are trimmed from
gpt-and-i's history: `2023/...backprompting-first` = graphs 11 and 13 of `llm-csp/responses/graph_coloring/
gpt-4_chat/backprompting-first/responses.json@ada66fc6`; `2024/...` = puzzles 1-2 of `llm-csp/responses/game24/
gpt-3.5-turbo_chat/backprompting-first/responses.json@1e63de57`.
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from critiquebench.domains import get_domain, load_instances
from critiquebench.importers.self_verification import (
    SelfVerificationError,
    import_files,
    kind_of,
    traces,
)
from tests.conftest import GPT4_COLOURING, PUBLISHED, copied_store
from tests.test_study_cli import DATASETS, invoke

RECORDED = DATASETS / "self_verification/recorded/gpt-and-i@ada66fc6/llm-csp/responses"
LOOPS = RECORDED / "graph_coloring/gpt-4_chat"
FIXTURES = Path(__file__).parent / "fixtures" / "gpt_and_i"
PAPER = DATASETS.parent / "papers" / "000_7dad9bd10bc7f316.txt"


def _recorded(variant: str) -> dict:
    folder = LOOPS if variant == "standard" else LOOPS / f"backprompting-{variant}"
    return json.loads((folder / "responses.json").read_text())


def _coloring(ids: str = "1-100"):
    domain = get_domain("coloring", form="transcript", protocol="2023")
    return domain, {i.id: i for i in load_instances(domain, ids, DATASETS)}


def _words(text: str) -> list[str]:
    return re.sub(r"\s+", " ", text).strip().split(" ")


def test_the_2023_generation_prompt_is_what_the_study_sent_for_every_graph() -> None:
    domain, graphs = _coloring()
    recorded = _recorded("passfail")
    for ident, graph in graphs.items():
        [system, user] = domain.prompt(graph)
        assert system["content"] == "You are a constraint satisfaction solver that solves various CSP problems."
        assert user["content"] == recorded[ident]["query"]
    assert recorded["1"]["query"].endswith("Please do not provide anything else in your response.")


def test_the_2023_backprompts_are_the_papers_a43_examples() -> None:
    domain, graphs = _coloring("1")
    answer = _recorded("full")["1"]["response"]  # graph 1's first answer: A.4.3's backprompts are about it
    verdict = domain.verify(graphs["1"], answer)
    paper = PAPER.read_text().splitlines()
    appendix = "\n".join(paper[1097:1127])
    for level, title in (("binary", "(Pass/Fail)"), ("first", "(First)"), ("all", "(Full)")):
        ours = domain.backprompt(graphs["1"], domain.feedback(graphs["1"], verdict, level))
        printed = appendix.split(f"Backprompt Generated From Sound Verifier {title}", 1)[1]
        printed = printed.split("Backprompt Generated From", 1)[0].split("\n1297", 1)[0]
        assert _words(ours) == _words(printed)
        assert "Feedback: " not in ours and "[ANSWER END]" not in ours


def test_the_2023_loop_requests_equal_the_recorded_transcripts_byte_for_byte() -> None:
    """Every generation request of the sound loops (the transcript joined by newlines, no stop, no [ANSWER END])
    equals the one gpt-and-i's loop built from its trace (`response_generation.py@ada66fc6:132`)."""
    domain, graphs = _coloring("11,13")
    counts: list[int] = []
    for variant, level in (("passfail", "binary"), ("first", "first"), ("full", "all")):
        recorded = _recorded(variant)
        for ident, graph in graphs.items():
            trace = recorded[ident]
            first = domain.prompt(graph)
            turns: list[dict[str, str]] = []
            values = [trace["query"], trace["response"]]
            reply = trace["response"]
            n = 0
            while f"backprompt {n}" in trace:
                feedback = domain.feedback(graph, domain.verify(graph, reply), level)
                assert domain.backprompt(graph, feedback) == trace[f"backprompt {n}"], (variant, ident, n)
                turns += [{"role": "assistant", "content": reply},
                          {"role": "user", "content": domain.backprompt(graph, feedback)}]  # fmt: skip
                values.append(trace[f"backprompt {n}"])
                assert domain.conversation([*first, *turns])[1]["content"] == "\n".join(values)
                reply = trace[f"response {n}"]
                values.append(reply)
                n += 1
            counts.append(n)
    assert max(counts) == 15  # 16 answers: the loop's 1 + MAX_BACKPROMPT_LENGTH (response_generation.py@ada66fc6:12)


def test_a_reply_with_a_give_up_word_ends_the_2023_loop() -> None:
    domain, graphs = _coloring("1")
    assert domain.verify(graphs["1"], "I'm sorry, I cannot.").final
    assert domain.verify(graphs["1"], "0: Red\n(the constraints)").final
    assert not get_domain("coloring").verify(graphs["1"], "I'm sorry").final  # 2024 has no such rule


def test_paths_name_domain_scheme_and_variant() -> None:
    assert kind_of(LOOPS / "backprompting-first/responses.json").schemes == ("sound-first:rounds=16",)
    assert kind_of(LOOPS / "backprompting-llm/responses.json").schemes == (
        "llm-llm:rounds=16,critique_last=false,resample=true",
    )
    top = kind_of(LOOPS / "backprompting-15top1/responses.json")
    assert top.schemes == ("sampling:k=15,temperature=1.0", "self-consistency:k=15,temperature=1.0,vote=text")
    assert kind_of(LOOPS / "responses.json").schemes == ("standard",)
    verify = kind_of(RECORDED / "color_verification/gpt-4_chat/ablated/responses.json")
    assert verify.verification == "ablated" and verify.model == "gpt-4"
    with pytest.raises(SelfVerificationError, match="pass --domain"):
        kind_of(Path("/tmp/x/responses.json"))


def test_both_formats_read_and_the_2023_fixture_imports_and_replays_with_no_call(tmp_path: Path) -> None:
    old = FIXTURES / "2023/graph_coloring/gpt-4_chat/backprompting-first/responses.json"
    read, bad = traces(old, kind_of(old))
    assert [len(t.replies) for t in read] == [16, 16] and not bad
    new = FIXTURES / "2024/game24/gpt-3.5-turbo_chat/backprompting-first/responses.json"
    read, bad = traces(new, kind_of(new, protocol="2024"))
    assert [t.instance for t in read] == ["1", "2"] and read[0].prompts[0].startswith("Use numbers") and not bad
    store = tmp_path / "s.sqlite"
    result = invoke("import", "self-verification", str(old), "--study", "sv", "--store", str(store),
                    "--dataset", str(DATASETS), "--replay", "--no-progress")  # fmt: skip
    assert "sound-first:rounds=16 on 2 coloring instance(s), 32 recorded call(s)" in result.output
    with sqlite3.connect(store) as db:
        assert db.execute("SELECT count(*) FROM llm_events WHERE kind = 'call'").fetchone()[0] == 0
        assert db.execute("SELECT count(*) FROM llm_events WHERE kind = 'hit'").fetchone()[0] == 32


def test_a_prompt_that_is_not_ours_is_one_error_naming_the_instance_and_line(tmp_path: Path) -> None:
    """The 2024 fixture's puzzles were asked c9a5d349's first prompt (`protocol = "2023"`, which every Game of 24
    file of the history sent), but their history by the transcript of the loop of 2023-11-07 (f6948676), each
    answer followed by "[ANSWER END]": the import says where ours departs, and stores nothing."""
    new = FIXTURES / "2024/game24/gpt-3.5-turbo_chat/backprompting-first/responses.json"
    with pytest.raises(SelfVerificationError, match=r"instance 1 call 2: .*line 4: recorded '\(6 / \(1 - 1/4\)\)\[ANS"):
        import_files([new], tmp_path / "s.sqlite", "g24", dataset=DATASETS)
    # unchecked, it is stored as recorded (the 2024 format: 10 calls of 2 puzzles) and says where it departs
    [done] = import_files([new], tmp_path / "s.sqlite", "g24", dataset=DATASETS, check=False)
    assert done.added == 10 and done.config.schemes == ("sound-first:rounds=16",)
    assert done.config.domain_options["game24"]["stop"] == ["[ANSWER END]"]
    assert "2 instance(s) sent other requests than ours" in done.notes[0]
    edited = json.loads((FIXTURES / "2023/graph_coloring/gpt-4_chat/backprompting-first/responses.json").read_text())
    edited["13"]["backprompt 2"] = edited["13"]["backprompt 2"].replace("Please recolor.", "Recolor.")
    path = tmp_path / "graph_coloring/gpt-4_chat/backprompting-first/responses.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(edited))
    store = tmp_path / "t.sqlite"
    result = invoke("import", "self-verification", str(path), "--study", "sv", "--store", str(store),
                    "--dataset", str(DATASETS), check=2)  # fmt: skip
    assert "instance 13 call 4: our request is not the recorded one: line 75" in result.stderr
    assert 'recorded "This is wrong. Recolor. Please' in result.stderr
    assert not store.exists() or sqlite3.connect(store).execute("SELECT count(*) FROM sqlite_master "
                                                               "WHERE name = 'llm_calls'").fetchone()[0] == 0


def test_a_truncated_file_is_one_line(tmp_path: Path) -> None:
    text = (FIXTURES / "2023/graph_coloring/gpt-4_chat/backprompting-first/responses.json").read_text()
    path = tmp_path / "graph_coloring/gpt-4_chat/backprompting-first/responses.json"
    path.parent.mkdir(parents=True)
    path.write_text(text[: len(text) // 2])
    result = invoke("import", "self-verification", str(path), "--study", "sv", "--store", str(tmp_path / "s"),
                    check=2)  # fmt: skip
    assert "not JSON (truncated?)" in result.stderr and len(result.stderr.strip().splitlines()) == 1


@pytest.mark.xdist_group(GPT4_COLOURING)  # its store is tests/test_reports_paired.py's too
def test_gpt4s_colouring_runs_replay_with_no_call_and_give_table_1s_colouring_row(
    tmp_path: Path, gpt4_colouring_loops: tuple[Path, Any]
) -> None:
    """GPT-4's recorded colouring loops (gpt-and-i@ada66fc6), imported and replayed: 0 new calls; graphs 1-100
    give S.P. 16, k=15 40, LLM+LLM 1, B.F. 38, F.E.F. 38, A.E.F. 35 (000:192: 16/40/14/2/38/37/34). B.F.: the
    recordings of graphs 7 and 8 hold the whole transcript as the reply, its last colouring right: the study's
    check_coloring, reading every "N: C" line (the prompt's '"{VERTEX NUMBER}: {VERTEX COLOR ASSIGNMENT}"' too),
    says 36. S.C. 13: our vote takes the earliest of tied replies; the study's `max(set(...))` takes its set's
    first, which moves with the hash seed (12-19 over graphs 9, 15, 55, 58, 70, 77, 97; 14 in the paper)."""
    # `critiquebench import self-verification LOOPS --study gpt4 --replay` (the session's fixture)
    imported, result = gpt4_colouring_loops
    store = copied_store(imported, tmp_path)
    assert "LLM calls: 0 new" in result.stderr and " new (" not in result.stderr.replace("0 new (", "")
    with sqlite3.connect(store) as db:
        assert db.execute("SELECT count(*) FROM llm_events WHERE kind = 'call'").fetchone()[0] == 0
        rows = db.execute("SELECT study, scheme, sum(correct), count(*) FROM runs WHERE CAST(instance_id AS INT) "
                          "<= 100 AND status = 'done' GROUP BY 1, 2").fetchall()  # fmt: skip
    cells = {(study, scheme.split(":")[0]): (right, n) for study, scheme, right, n in rows}
    assert cells == {
        ("gpt4-standard", "standard"): (16, 100),
        ("gpt4-15top1", "sampling"): (40, 100),
        ("gpt4-15top1", "self-consistency"): (13, 100),
        ("gpt4-llm", "llm-llm"): (1, 100),
        ("gpt4-passfail", "sound-binary"): (38, 100),
        ("gpt4-first", "sound-first"): (38, 100),
        ("gpt4-full", "sound-all"): (35, 100),
    }


def test_gpt4s_verification_replies_replay_as_table_2s_colouring_row(tmp_path: Path) -> None:
    """GPT-4's 500 recorded colouring verification replies (gpt-and-i@ada66fc6 color_verification/gpt-4_chat,
    whose queries are our prompts over the study's candidate files): 362/500, FP 25/382, FN 113/118 (000:210)."""
    store = tmp_path / "s.sqlite"
    result = invoke("import", "self-verification", str(RECORDED / "color_verification"), "--study", "gv",
                    "--store", str(store), "--dataset", str(DATASETS), "--replay")  # fmt: skip
    assert "verification of ablated, correct, llm, non_optimal, random on 100 coloring" in result.stdout
    assert "500 judged now" in result.stderr and "LLM calls 0 new, 500 from the cache" in result.stderr
    row = next(line for line in result.stdout.splitlines() if "│ all " in line and "coloring" in line)
    assert "72.4% (362/500)" in row and "6.5% (25/382)" in row and "95.8% (113/118)" in row


@pytest.mark.xdist_group(PUBLISHED)  # the report is computed once for the tests reading it
def test_report_published_sets_the_recorded_colouring_cells_beside_000s(published_report: str) -> None:
    rows = json.loads(published_report)  # report --published --dataset DATASETS --format json
    cells = {r["where"]: (r["published"], r["ours"], r["agrees"]) for r in rows if "Graph Coloring" in r["where"]
             and ("Table 1" in r["where"] or r["where"].startswith("Table 2, "))}  # fmt: skip
    assert cells == {
        "Table 1, Graph Coloring, S.P. (000:192)": ("16%", "16.0% (16/100)", True),
        "Table 1, Graph Coloring, Sampling, k=15 (000:192)": ("40%", "40.0% (40/100)", True),
        "Table 1, Graph Coloring, S.C., k=15 (000:192)": ("14%", "13.0% (13/100)", False),
        "Table 1, Graph Coloring, LLM+LLM (000:192)": ("2%", "1.0% (1/100)", False),
        "Table 1, Graph Coloring, B.F. (000:192)": ("38%", "38.0% (38/100)", True),
        "Table 1, Graph Coloring, F.E.F. (000:192)": ("37%", "38.0% (38/100)", False),
        "Table 1, Graph Coloring, A.E.F. (000:192)": ("34%", "35.0% (35/100)", False),
        "Table 2, Graph Coloring (000:210)": ("362/500, FP 25, FN 113", "362/500, FP 25, FN 113", True),
    }
    bf = next(r for r in rows if r["where"] == "Table 1, Graph Coloring, B.F. (000:192)")
    assert "graphs 7 and 8" in bf["reason"] and "36" in bf["reason"]
