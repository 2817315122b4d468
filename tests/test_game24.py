"""Game of 24: loading, selections, safe parsing and verification, study wording, prompts, candidates."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from critiquebench.domains import get_domain, load_instances
from critiquebench.domains.arith import MalformedExpression, evaluate, parse_expression, solve
from critiquebench.domains.contract import Domain, Instance
from critiquebench.domains.datasets import DatasetNotFound, parse_selection

PROJECT = Path(__file__).resolve().parents[1]
DATA = PROJECT.parent / "shared" / "datasets"


@pytest.fixture(scope="module")
def game24() -> Domain:
    """Our lenient reader (an option); the study's first-line reader is tested below."""
    return get_domain("game24", reader="lenient")


@pytest.fixture(scope="module")
def study(game24: Domain) -> list[Instance]:
    return load_instances(game24, "901-1000", DATA)


def puzzle(*numbers: int) -> Instance:
    return Instance("game24", "t", {"numbers": list(numbers)})


def test_registry_builds_a_protocol_conforming_domain(game24: Domain) -> None:
    assert isinstance(game24, Domain) and game24.name == "game24"
    with pytest.raises(ValueError, match="unknown domain 'chess'.*game24, coloring"):
        get_domain("chess")


def test_loads_the_study_ranks_by_id(study: list[Instance]) -> None:
    assert [i.id for i in study] == [str(r) for r in range(901, 1001)]
    assert study[0].data == {"numbers": [4, 5, 6, 10]}


@pytest.mark.parametrize("path", [DATA, DATA / "game24", DATA / "game24" / "24.csv"])
def test_dataset_path_may_be_the_root_the_folder_or_the_file(game24: Domain, path: Path) -> None:
    chosen = load_instances(game24, "1,5,9-11", path)
    assert [i.id for i in chosen] == ["1", "5", "9", "10", "11"]
    assert chosen[0].data["numbers"] == [1, 1, 4, 6]


def test_default_dataset_from_env_then_cwd_else_a_clear_error(game24: Domain, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CRITIQUEBENCH_DATA", str(DATA))
    monkeypatch.chdir(tmp_path)
    assert len(load_instances(game24, "all", None)) == 1362
    monkeypatch.delenv("CRITIQUEBENCH_DATA")
    monkeypatch.chdir(PROJECT)  # ../shared/datasets exists from here
    assert load_instances(game24, "7", None)[0].id == "7"
    monkeypatch.chdir(tmp_path)
    with pytest.raises(DatasetNotFound, match="--dataset.*gen:"):
        load_instances(game24, "1", None)


def test_selection_errors_name_the_problem(game24: Domain) -> None:
    with pytest.raises(ValueError, match="2 instance.*not in .*1363, 1364"):
        load_instances(game24, "1362-1364", DATA)
    for bad in ("5-3", "1,,2", "gen:5"):
        with pytest.raises(ValueError):
            parse_selection(bad)
    assert parse_selection("3,1-2,3") == ["3", "1", "2"]
    assert parse_selection("all") is None


def test_generated_puzzles_are_solvable_seeded_and_prefix_stable(game24: Domain) -> None:
    ten = load_instances(game24, "gen:10:4", None)
    assert [i.id for i in ten] == [f"gen-4-{k}" for k in range(1, 11)]
    assert [i.data for i in game24.generate(3, 4)] == [i.data for i in ten[:3]]
    assert [i.data for i in game24.generate(3, 5)] != [i.data for i in ten[:3]]
    for instance in ten:
        assert all(1 <= n <= 13 for n in instance.data["numbers"]) and len(instance.data["numbers"]) == 4
        assert game24.verify(instance, game24.candidate(instance, "correct", random.Random(0))).valid


def test_the_unsolvable_list_is_the_puzzles_24_csv_lacks_and_solve_finds_none() -> None:
    """domains/data/game24_unsolvable.txt (what `generate` skips) against the dataset, which holds every solvable
    puzzle, and against the solver on a sample (all 1820 multisets take the solver seconds)."""
    from itertools import combinations_with_replacement

    from critiquebench.domains.game24 import SOLVABLE_PUZZLES, read_puzzles, unsolvable

    every = set(combinations_with_replacement(range(1, 14), 4))
    in_csv = {tuple(sorted(i.data["numbers"])) for i in read_puzzles(DATA / "game24" / "24.csv").values()}
    assert unsolvable() <= every
    assert every - unsolvable() == in_csv and len(in_csv) == SOLVABLE_PUZZLES
    rng = random.Random(24)
    for numbers in rng.sample(sorted(unsolvable()), 25):
        assert solve(list(numbers)) is None
    for numbers in rng.sample(sorted(in_csv), 25):
        assert solve(list(numbers)) is not None


def test_generated_sets_are_the_ones_the_solver_picked(game24: Domain) -> None:
    """`generate` skips the listed unsolvable draws where it called `solve` on each draw: the same puzzles."""
    for seed in (1, 4):
        rng, seen, picked = random.Random(seed), set(), []
        while len(picked) < 20:
            numbers = sorted(rng.randint(1, 13) for _ in range(4))
            if tuple(numbers) not in seen and solve(numbers):
                seen.add(tuple(numbers))
                picked.append(numbers)
        assert [i.data["numbers"] for i in game24.generate(20, seed)] == picked


def test_solver_is_exact(study: list[Instance]) -> None:
    assert solve([1, 1, 1, 1]) is None
    assert evaluate(parse_expression(solve([3, 3, 8, 8]))) == 24  # needs 8/(3-8/3)
    for instance in study:
        text = solve(instance.data["numbers"])
        assert evaluate(parse_expression(text)) == 24
        assert sorted(int(t) for t in text.replace("(", " ").replace(")", " ").replace("*", " ").replace(
            "/", " ").replace("+", " ").replace("-", " ").split()) == sorted(instance.data["numbers"])


@pytest.mark.parametrize(("response", "expected"), [
    ("(6 - 1) * 4 + 4 = 24", "(6 - 1) * 4 + 4"),
    ("The answer is (6-1)*4+4 = 24.", "(6-1)*4+4"),
    ("```\n(6 − 1) × 4 + 4 = 24\n```", "(6 - 1) * 4 + 4"),
    ("**Answer:** `(6-1)*4+4`", "(6-1)*4+4"),
    ("\\( (6-1) \\times 4 + 4 = 24 \\)", "(6-1) * 4 + 4"),
    ("4 x 6 x 1 x 1 = 24", "4*6*1*1"),
    ("8 ÷ (3 − 8 ÷ 3) = 24", "8 / (3 - 8 / 3)"),
    ("[(6-1)*4]+4", "((6-1)*4)+4"),
    ("Input: 1 1 4 6\nAnswer: (1+1)*(4+6)", "(1+1)*(4+6)"),
    ("(6-1)*4+4 = 5*4+4 = 24", "(6-1)*4+4"),
    ("Step 1. 6-1 = 5\nStep 2: 5*4 = 20\nSo (6-1)*4+4 = 24", "(6-1)*4+4"),
    ("1*1*4*6 = 24 [ANSWER END]\nOr also (1+1)*(4+6)... no", "1*1*4*6"),
    ("First try: (1+1)*4*6 = 48. Oops.\nThe answer is: 1*1*4*6", "1*1*4*6"),
    ("- (1+1)*(4+6)", "(1+1)*(4+6)"),
    ("(answer: (6-1)*4+4)", "(6-1)*4+4"),
    ("((6-1)*4+4", "((6-1)*4+4"),
    ("I cannot find a solution.", None),
    ("", None),
])
def test_extracts_the_committed_expression(game24: Domain, response: str, expected: str | None) -> None:
    assert game24.parse(puzzle(1, 1, 4, 6), response) == expected


def test_verdicts_in_the_study_wording(game24: Domain) -> None:
    instance = puzzle(1, 1, 4, 6)
    assert game24.verify(instance, "Answer: (1+1)*(4+6) = 24") == game24.verify(instance, "(1+1)*(4+6)")
    ok = game24.verify(instance, "The answer is 6*4*(1*1) = 24")
    assert ok.valid and ok.errors == () and ok.answer == "6*4*(1*1)"
    wrong = game24.verify(instance, "(6-1)*4 + 6")
    assert wrong.status == "invalid"
    assert wrong.errors == (
        "This expression consists of the numbers 6, 1, 4, 6, but it has to consist of only and exactly "
        "['1', '1', '4', '6'].",
        "This expression evaluates to 26 instead of 24.",
    )
    assert game24.verify(instance, "(1+1+6)/(4+1-1)*1").errors[0].startswith("This expression consists")
    for text, value in [("(6-1)*4 + 1", "21"), ("1/4 + 1 + 6", "29/4"), ("1-1-4-6", "-10")]:
        expected = f"This expression evaluates to {value} instead of 24."
        assert game24.verify(instance, text).errors == (expected,)


@pytest.mark.parametrize("text", [
    "6/(1-1)*4", "(6+1*4+1", "6**1*4*1", "6//1*4*1", "6.0*4*1*1", "-1+1*4*6", "abs(-24)", "6 4 1 1",
    "1+" * 150 + "1", "(" * 300 + "1" + ")" * 300,
])
def test_malformed_expressions(game24: Domain, text: str) -> None:
    verdict = game24.verify(puzzle(1, 1, 4, 6), text)
    assert verdict.status == "malformed" and verdict.errors[-1] == "This expression is malformed."


def test_hostile_input_is_rejected_without_side_effects(game24: Domain, tmp_path: Path) -> None:
    marker = tmp_path / "x"
    shared = Path("/tmp/x")  # another process on the machine may own it: only check we did not create it
    existed = shared.exists()
    for text in ("__import__('os').system('touch /tmp/x')", f"__import__('os').system('touch {marker}')",
                 "9**9**9**9", "(9**9**9**9)*1*1*1"):
        assert game24.verify(puzzle(1, 1, 4, 6), text).status == "malformed"
        for bad in (text, text.replace("'", "")):
            with pytest.raises(MalformedExpression):
                parse_expression(bad)
    assert not marker.exists() and shared.exists() == existed


def test_feedback_levels_and_backprompts(game24: Domain) -> None:
    instance = puzzle(1, 1, 4, 6)
    verdict = game24.verify(instance, "(6-1)*4 + 6")
    assert game24.feedback(instance, verdict, "binary") == "This is not correct."
    assert game24.feedback(instance, verdict, "first") == verdict.errors[0]
    assert game24.feedback(instance, verdict, "all") == " ".join(verdict.errors)
    assert game24.feedback(instance, game24.verify(instance, "1*1*4*6"), "all") == ""
    end = ("Using the numbers 1 1 4 6 please provide a correct expression that evaluates to 24. Write your "
           "answer first. At the end of your answer, write [ANSWER END]\nAnswer: ")
    assert game24.backprompt(instance, "This is not correct.") == f"Feedback: This is not correct. {end}"
    sound = game24.feedback(instance, verdict, "all")
    assert game24.backprompt(instance, sound) == f"Feedback: This is not correct. {sound} {end}"
    assert game24.backprompt(instance, "You used 1 twice.") == (
        f"Feedback: This is not correct.\nYou used 1 twice.\n\nWith this feedback, please try again. {end}")


def test_prompts_are_the_studys(game24: Domain) -> None:
    instance = puzzle(1, 1, 4, 6)
    assert game24.prompt(instance) == [{"role": "user", "content": (
        "Use numbers and basic arithmetic operations (+ - * /) to obtain 24. You must write your response. "
        "Write your answer first, followed by [ANSWER END]\nInput: 1 1 4 6\nAnswer: ")}]
    check = game24.judge_prompt(instance, "critique", "(6-1)*4+4")[0]["content"]
    assert check == (
        "Using each of the numbers 1 1 4 6 exactly as many times as they appear in the list and the basic "
        "arithmetic operations (+ - * /), it is possible to write an expression that evaluates to 24. Please "
        "check if the following expression uses only the correct numbers (and no others) and evaluates to "
        "24: (6-1)*4+4\nIf it is not correct, please give feedback on what is wrong and how to correct it."
        '\nRespond only in JSON format as described below:\n{\n   "feedback": "feedback",\n   "correct": '
        "boolean}\nEnsure that Python's json.loads can parse this."
    )
    cot = game24.judge_prompt(instance, "critique-cot", "(6-1)*4+4")[0]["content"]
    assert "First, think step by step." in cot and cot.endswith("Let's think step by step.\n[Thoughts]")


@pytest.mark.parametrize(("reply", "valid", "critique", "parsed"), [
    ('{"feedback": "Correct use.", "correct": true}', True, "Correct use.", True),
    ('```json\n{"feedback": "It uses 5.", "correct": false}\n```', False, "It uses 5.", True),
    ("Sure! {'feedback': 'Uses 5', 'correct': False} Hope that helps.", False, "Uses 5", True),
    ('[Thoughts] {"correct": false}\n[Answer]\n{"feedback": "fine", "correct": "True",}', True, "fine", True),
    ('Verdict: "correct": true, "feedback": "ok"', True, "ok", True),
    ("The expression is incorrect: true story", False, "The expression is incorrect: true story", False),
    ("", False, "", False),
])
def test_llm_verdicts_are_read_robustly(game24: Domain, reply: str, valid: bool, critique: str,
                                        parsed: bool) -> None:
    verdict = game24.judge_reply(puzzle(1, 1, 4, 6), "critique", "", reply).verdict
    assert (verdict.says_valid, verdict.critique, verdict.parsed) == (valid, critique, parsed)


def test_canonical_form_identifies_equal_answers(game24: Domain) -> None:
    instance = puzzle(1, 1, 4, 6)
    same = ["(6-1)*4+4", "4 + 4*(6 - 1)", "Answer: ((6-1)*4)+4 = 24", "4+(6-1)*4"]
    assert len({game24.canonical(instance, s) for s in same}) == 1
    assert game24.canonical(instance, "(1+1)*(4+6)") != game24.canonical(instance, "(1+1)*(4-6)")
    assert game24.canonical(instance, "6-4-1") == game24.canonical(instance, "6-(4+1)")
    assert game24.canonical(instance, "6/(1-1)") is not None  # well-formed text, even if it fails to evaluate
    assert game24.canonical(instance, "no idea") is None


def test_candidates_follow_the_studys_kinds(game24: Domain, study: list[Instance]) -> None:
    rng = random.Random(7)
    statuses: dict[str, set[bool]] = {kind: set() for kind in game24.candidate_kinds}
    for instance in study:
        for kind in game24.candidate_kinds:
            verdict = game24.verify(instance, game24.candidate(instance, kind, rng))
            assert verdict.status in ("valid", "invalid", "malformed")
            statuses[kind].add(verdict.valid)
        numbers = instance.data["numbers"]
        assert "consists of the numbers" in game24.verify(
            instance, game24.candidate(instance, "ablated_number", rng)).errors[0]
        random_text = game24.candidate(instance, "random", rng)
        digits = "".join(c if c.isdigit() else " " for c in random_text)
        assert sorted(map(int, digits.split())) == sorted(numbers)
    assert statuses["correct"] == {True} and statuses["ablated_number"] == {False}
    assert statuses["ablated_op"] == {False}
    with pytest.raises(ValueError, match="no solution"):
        game24.candidate(puzzle(1, 1, 1, 1), "correct", rng)
    with pytest.raises(ValueError, match="unknown game24 candidate kind"):
        game24.candidate(study[0], "nonsense", rng)


def test_long_hostile_replies_are_read_in_linear_time(game24: Domain) -> None:
    """A regex that backtracks would turn these into minutes; linear reading takes milliseconds."""
    instance = puzzle(1, 1, 4, 6)
    n = 20_000
    for text in ("1" + " " * n + "x", "\n" * n + "x", "- \n" * n, "answer: " * n, "1 *\n  \t" * n,
                 '{"correct": ' * n, "This expression is malformed. " * n + "!"):
        assert game24.verify(instance, text).status in ("invalid", "malformed")
        assert not game24.judge_reply(instance, "critique", "", text).verdict.says_valid
        assert game24.backprompt(instance, text).startswith("Feedback: This is not correct.")
