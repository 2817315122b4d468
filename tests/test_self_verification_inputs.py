"""The self-verification study's verification inputs are its authors' files, read and judged as its code did:
the counts the paper prints come out exactly (000:212 Table 2, 000:617 Table A4), and the study's Game of 24
reader gives the feedback of the paper's transcript A.3.4 (000:916-949)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from critiquebench.domains import get_domain, load_instances
from critiquebench.domains.study_files import CandidateFileError, candidates
from tests.conftest import PUBLISHED

DATASETS = Path(__file__).resolve().parents[2] / "shared" / "datasets"
FILES = DATASETS / "self_verification"


def test_game24_table2_denominators_from_the_authors_files() -> None:
    """Puzzles 1-1000 x four kinds, and GPT-4's answers to puzzles 901-1000 only ("only 100 for the LLM case,
    as our generations were constrained in the main paper to instances 901-1000", 000:384): 1,029 valid and
    3,071 invalid, Table 2's F.N.R. and F.P.R. denominators (000:212)."""
    game24 = get_domain("game24")  # the study's reader: the answer's first line, before "="
    valid: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for instance in load_instances(game24, "1-1000", DATASETS):
        given = candidates(FILES / "game24_verification", instance.id)
        kinds = ["correct", "ablated_op", "ablated_number", "random"] + (["llm"] if int(instance.id) > 900 else [])
        for kind in kinds:
            total[kind] += 1
            valid[kind] += game24.verify(instance, given[kind]).valid
    assert sum(total.values()) == 4100
    assert dict(valid) == {"correct": 1000, "ablated_op": 7, "ablated_number": 0, "random": 9, "llm": 13}
    assert sum(valid.values()) == 1029 and sum(total.values()) - sum(valid.values()) == 3071
    llm_1_100 = sum(game24.verify(i, candidates(FILES / "game24_verification", i.id)["llm"]).valid
                    for i in load_instances(game24, "1-100", DATASETS))  # fmt: skip
    assert llm_1_100 != 13  # the other puzzles with GPT-4 answers would not give the paper's count


def test_coloring_table2_and_table_a4_columns_from_the_authors_files() -> None:
    """Graphs 1-100 x five kinds: 118 valid / 382 invalid (Table 2), and Table A4's "Coloring Errors" (broken
    edges: 0, 187, 0, 736, 240) and "Correct" (100, 0, 0, 0, 18) columns (000:606-617)."""
    coloring = get_domain("coloring")
    errors: Counter[str] = Counter()
    correct: Counter[str] = Counter()
    for instance in load_instances(coloring, "1-100", DATASETS):
        given = candidates(FILES / "color_verification", instance.id)
        assert set(given) == {"correct", "ablated", "non_optimal", "random", "llm"}
        for kind, text in given.items():
            verdict = coloring.verify(instance, text)
            correct[kind] += verdict.valid
            errors[kind] += sum("despite being connected by an edge" in e for e in verdict.errors)
    kinds = ["correct", "ablated", "non_optimal", "random", "llm"]
    assert [errors[k] for k in kinds] == [0, 187, 0, 736, 240]
    assert [correct[k] for k in kinds] == [100, 0, 0, 0, 18]
    assert sum(correct.values()) == 118


def test_study_ablation_breaks_every_edge_to_the_copied_colour() -> None:
    """Our generator for new graphs ablates as the study's script did: about as many broken edges per colouring
    as the study's files hold (1.87 on graphs 1-100), not exactly one."""
    coloring = get_domain("coloring")
    import random

    broken = [sum("despite" in e for e in coloring.verify(i, coloring.candidate(i, "ablated", random.Random(i.id)))
                  .errors) for i in load_instances(coloring, "1-100", DATASETS)]  # fmt: skip
    assert min(broken) >= 1 and max(broken) > 1 and 1.3 < sum(broken) / len(broken) < 2.6


# A.3.4: each answer and the feedback the study's sound verifier gave it (000:916-949, extraction mended).
TRANSCRIPT = [
    ("((6 / (1 - 1/4)) = 24[ANSWER END]", "This expression is malformed."),
    ("((6 / (1 - 1)) * 4 = 24 [ANSWER END]", "This expression is malformed."),
    ("((6 / (1 - 1)) * 4) is undefined because it involves division by zero. A correct solution could be:\n\n"
     "(6 / (1 / 4)) * 1 = 24[ANSWER END]", "This expression is malformed."),
    ("(6 / (1 / 4)) = 24[ANSWER END]",
     "This expression consists of the numbers 6, 1, 4, but it has to consist of only and exactly "
     "['1', '1', '4', '6']."),
    ("(6 - 1) * (4 - 1) = 24[ANSWER END]", "This expression evaluates to 15 instead of 24."),
    ("(6 / (1 / (4 - 1))) = 24 [ANSWER END]", "This expression evaluates to 18 instead of 24."),
    ("(6 * (4 - 1)) - 1 = 24[ANSWER END]", "This expression evaluates to 17 instead of 24."),
]
END = ("Using the numbers 1 1 4 6 please provide a correct expression that evaluates to 24. Write your answer "
       "first. At the end of your answer, write [ANSWER END]\nAnswer: ")


@pytest.mark.parametrize(("answer", "reason"), TRANSCRIPT)
def test_study_reader_gives_the_transcripts_feedback(answer: str, reason: str) -> None:
    game24 = get_domain("game24")
    instance = load_instances(game24, "1", DATASETS)[0]
    assert instance.data["numbers"] == [1, 1, 4, 6]
    verdict = game24.verify(instance, answer)
    assert not verdict.valid
    backprompt = game24.backprompt(instance, game24.feedback(instance, verdict, "first"))
    assert backprompt == f"Feedback: This is not correct. {reason} {END}"


def test_lenient_reader_stays_an_option() -> None:
    """Our reader finds the corrected expression in the third answer; the study's does not."""
    lenient = get_domain("game24", reader="lenient")
    instance = load_instances(lenient, "1", DATASETS)[0]
    assert lenient.verify(instance, TRANSCRIPT[2][0]).valid
    with pytest.raises(ValueError, match="reader must be one of study, lenient"):
        get_domain("game24", reader="sympy")


def test_a_folder_without_the_studys_files_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(CandidateFileError, match="not a folder of the study's"):
        candidates(tmp_path, "1")
    bad = tmp_path / "results.json"
    bad.write_text("{}")
    with pytest.raises(CandidateFileError, match="not a PlanBench results file"):
        candidates(bad, "1")


@pytest.mark.xdist_group(PUBLISHED)  # the report is computed once for the tests reading it
def test_report_published_sets_every_checkable_number_beside_the_data(published_report: str) -> None:
    """`report --published` needs no study and no store: the papers' numbers beside the recorded data, each
    mismatch with its reason, the main job's 41/50 named for what it is."""
    rows = json.loads(published_report)  # report --published --dataset DATASETS --format json
    by = {r["where"]: r for r in rows}
    assert all(r["table"] == "published" and r["reason"] for r in rows)
    assert by["Table 1, Blocksworld, S.P. (000:193)"]["ours"] == "40.0% (40/100)"
    assert by["Table 1, Generator LLM only w/o BP (002:63)"]["agrees"]
    assert by["Table 1, Blocksw. 3-5, No-Critique, quoted from 000 (001:158)"]["agrees"]
    mystery = by["Table 1, Mystery Blocksworld, S.P. (000:194)"]
    assert mystery["ours"] == "3.0% (3/100)" and not mystery["agrees"] and "Table A6" in mystery["reason"]
    assert by["Table A6, LLM row: correct / inexecutable / non-goal-reaching (000:1931-1936)"]["ours"] == "3 / 91 / 6"
    denominators = {r["where"].split(",")[1].split(":")[0].strip(): r["ours"] for r in rows
                    if "denominators" in r["where"]}  # fmt: skip
    assert denominators == {"Game of 24": "3071 / 1029", "Graph Coloring": "382 / 118", "Blocksworld": "360 / 140",
                            "Mystery Blocksworld": "397 / 103"}  # fmt: skip
    assert by["Table A4, Coloring Errors: correct, ablated, non-optimal, random, LLM (000:612-621)"]["agrees"]
    recorded = by["Table 1, Blocksworld, F.E.F. (000:193)"]
    assert recorded["ours"].startswith("82.0% (41/50)")
    assert "the first 50 instances GPT-4 failed one-shot (ids 4-85)" in recorded["reason"]
    arithmetic = by["Table 2 / A2, Blocksworld: accuracy = all - FP - FN (000:211)"]
    assert (arithmetic["published"], arithmetic["ours"], arithmetic["agrees"]) == ("359/500", "412/500", False)


def test_main_job_summary_says_what_the_recorded_backprompting_set_is(tmp_path: Path) -> None:
    """PlanBench ran its first-error backprompting on the first 50 instances GPT-4 failed one-shot; the summary
    says so beside its 41/50, so nobody compares it with the papers' 87% / 88%."""
    from critiquebench.reports.findings import selection_notes
    from critiquebench.store.db import connect
    from tests.test_study_cli import invoke

    store = tmp_path / "s.sqlite"
    for study, file in (("gpt4-oneshot", "gpt-4_blocksworld_one_shot.json"),
                        ("gpt4-backprompt", "gpt-4_blocksworld_backprompting_first_error.json")):  # fmt: skip
        invoke("import", "planbench", str(DATASETS / "planbench" / "reference" / file), "--study", study,
               "--store", str(store))  # fmt: skip
        invoke("resume", study, "--replay", "--store", str(store))
    with connect(store) as db:
        notes = selection_notes(db, ["gpt4-oneshot", "gpt4-backprompt"])
    assert len(notes) == 1 and notes[0].startswith(
        "gpt4-backprompt's 50 instances are the first 50 that gpt4-oneshot got wrong (ids 4-85)")


def test_mystery_example_plans_are_planbench_s_and_the_recorded_one_shot_run_replays(tmp_path: Path) -> None:
    """Mystery Blocksworld's example plans are Blocksworld's optimal plans renamed, as in every one of
    PlanBench's 500 recorded Mystery one-shot prompts (byte for byte), so the recorded run replays 500/500."""
    from critiquebench.store.db import connect
    from tests.test_study_cli import invoke

    mystery = get_domain("mystery_blocksworld")
    recorded = DATASETS / "planbench" / "reference" / "gpt-4_mystery_one_shot.json"
    queries = {str(r["instance_id"]): r["query"] for r in json.loads(recorded.read_text())["instances"]}
    instances = load_instances(mystery, "2-501", DATASETS)
    assert [i.id for i in instances if mystery.prompt(i)[-1]["content"] != queries[i.id]] == []
    store = tmp_path / "m.sqlite"
    invoke("import", "planbench", str(recorded), "--study", "m", "--store", str(store))
    invoke("resume", "m", "--replay", "--store", str(store))
    with connect(store) as db:
        done = db.execute("SELECT COUNT(*), SUM(correct), SUM(cache_hits) FROM runs WHERE study = 'm' AND "
                          "status = 'done'").fetchone()  # fmt: skip
    assert tuple(done) == (500, 18, 500)  # PlanBench's 18 correct, every call from the recording
