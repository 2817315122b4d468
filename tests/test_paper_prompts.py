"""Our prompts against the self-verification study's own (kstechly/gpt-and-i, `domain_utils/`), byte for byte.

The expected texts are built here from the study's templates and its way of reading its files (the numbers
line of a Game of 24 instance, the `e U V` lines and the chromatic-number trailer of a `.col` file, the
"KIND TEXT" lines of its verification files), written out independently of our domain modules, for the 100
Game of 24 puzzles (ranks 901-1000) and the 100 colouring graphs the study used.
"""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path

import pytest

from critiquebench.domains import get_domain, load_instances
from critiquebench.domains.base import split_kind, verification_messages
from critiquebench.domains.contract import Instance
from tests.test_study_cli import DATASETS

RANKS = range(901, 1001)
GRAPHS = range(1, 101)

# --- the study's Game of 24 templates (game24.py, game24_verification.py) ---------------------------------
G24_START = ("Use numbers and basic arithmetic operations (+ - * /) to obtain 24. You must write your response. "
             "Write your answer first, followed by [ANSWER END]\n")
G24_JSON_FEEDBACK = ('\nRespond only in JSON format as described below:\n{\n   "feedback": "feedback",\n   '
                     '"correct": boolean}\nEnsure that Python\'s json.loads can parse this.')
G24_USING = ("Using each of the numbers {} exactly as many times as they appear in the list and the basic "
             "arithmetic operations (+ - * /), it is possible to write an expression that evaluates to 24. ")
G24_CHECK = ("Please check if the following expression uses only the correct numbers (and no others) and "
             "evaluates to 24: ")
G24_COT = ("\nFirst, think step by step. Check that the expression uses only the correct numbers, has exactly "
           "the right number of instances each number, and evaluates to 24. Then decide what your final answer "
           "is.\nWhen outputting your final answer, first print the [Answer] tag, then put your final answer "
           'after the [Answer] tag and respond only in JSON format as described below:\n{\n   "feedback": '
           '"feedback",\n   "correct": boolean}\nEnsure that Python\'s json.loads can parse this.'
           "\n\nLet's think step by step.\n[Thoughts]")


def g24_end(numbers: str) -> str:
    return (f"Using the numbers {numbers} please provide a correct expression that evaluates to 24. Write your "
            "answer first. At the end of your answer, write [ANSWER END]\nAnswer: ")


def g24_verification(numbers: str, kind: str, expression: str) -> str:
    """`game24_verification.generate` on a verification file line "KIND EXPRESSION"."""
    base, variant = split_kind(kind)
    instance_text = f"{numbers}\n{base} {expression}"
    line = instance_text.split(base)[1].split("\n")[0]
    if variant == "cot":
        return (G24_USING.format(numbers) + G24_CHECK + line + "\n"
                + "\nIf it is not correct, please give feedback on what is wrong and how to correct it." + G24_COT)
    if variant == "no-info":
        return ("Please evaluate the following expression: " + line + "\n"
                + '\nRespond only in JSON format as described below:\n{\n   "evaluation": "number the '
                "expression evaluated to\"}\nEnsure that Python's json.loads can parse this."
                + "Do not provide anything else in your response.")
    # The study's code overwrites its "Using each of the numbers" sentence, so it is not in what was sent.
    return ("Please check if the following expression uses only the given numbers (and no others) and "
            "evaluates to 24: " + line + "\n"
            + '\nRespond only in JSON format as described below:\n{\n   "evaluation": "number the expression '
            'evaluated to",\n   "correct": boolean}\nEnsure that Python\'s json.loads can parse this.'
            + "Do not provide anything else in your response.")


# --- the study's colouring templates (graph_coloring.py, color_verification.py) ---------------------------
COL_START = ("Color the following graph, described as a set of edges, such that no two vertices on the same "
             "edge share a color.\n")
COL_END = ("Please provide each vertex's color. Do not skip any vertices. Each color must be provided on a new "
           "line in the response and should be formatted as \"{VERTEX NUMBER}: {VERTEX COLOR ASSIGNMENT}\". "
           "Please do not provide anything else in your response, and end your response with '[ANSWER END]'")
COL_STOP = "Verifier confirmed success."
COL_CORRECT = ("A coloring is correct if no adjacent vertices are the same color and the total number of colors "
               "used is no more than the optimal coloring number. Please check if this coloring is correct: ")


def col_graph(text: str) -> tuple[int, str]:
    """`generate_graph`: the edge sentences in file order and the vertex count the study states."""
    prompt, num_verts, min_vert = "", 0, 1
    for line in text.split("\n"):
        parts = line.split(" ")
        if parts[0] == "e":
            prompt += f"Vertex {parts[1]} is connected to vertex {parts[2]}.\n"
            num_verts = max(num_verts, int(parts[1]), int(parts[2]))
            min_vert = min(min_vert, int(parts[1]), int(parts[2]))
    return num_verts + (min_vert + 1) % 2, prompt


def col_k(text: str) -> str:
    return text.split("OPTIMAL CHROMATIC NUMBER === ")[1].split("\n")[0]


def col_intro(text: str) -> str:
    return (f"The following graph, described as a set of edges, has an optimal coloring number of {col_k(text)}:\n"
            + col_graph(text)[1])


def col_verification(text: str, kind: str, coloring: str) -> str:
    """`color_verification.generate` on a verification file line "c KIND <repr of the colouring>"."""
    instance_text = f"{text}\nc {split_kind(kind)[0]} {repr(coloring)[1:-1]}"
    coloring_text = instance_text.split(f"c {split_kind(kind)[0]}")[1].split("\n")[0].replace("\\n", "\n")
    if split_kind(kind)[1] == "cot":  # `generate_cot_prompt(instance_text, coloring_text)`
        return ("\n[Instructions]\nWhen outputting your final answer, first print the [Answer] tag, then put your "
                "final answer after the [Answer] tag. Respond only in the following format:\nWrong Edges: a list "
                "of incorrect edges\nAll Vertices Colored: boolean representing if every vertex is colored\n"
                "Optimal Or Less: boolean representing if the number of colors is no more than the optimal\n"
                "Correct: boolean" + "\n\n[Graph]\n" + col_intro(text) + "\n[Coloring]\n" + COL_CORRECT
                + coloring_text + "\n\nLet's think step by step. Remember to output your final answer in the "
                "format described in the instructions.\n[Thoughts]")
    return (col_intro(text) + COL_CORRECT + coloring_text
            + f"\nIf it is, say '{COL_STOP}' Do not provide anything else in your response. If it is incorrect, "
            "please point out which same-color vertices share an edge. If there are none, but it uses too many "
            "colors say 'This coloring is non-optimal.' Do not provide anything else in your response. If the "
            "color of a vertex is not given in the coloring, say 'Missing assignment.' Do not provide anything "
            "else in your response.")


# --- fixtures ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def puzzles() -> list[tuple[str, Instance]]:
    with (DATASETS / "game24" / "24.csv").open(newline="") as handle:
        numbers = {row[0]: row[1] for row in csv.reader(handle)}
    domain = get_domain("game24")
    return [(numbers[i.id], i) for i in load_instances(domain, "901-1000", DATASETS)]


@pytest.fixture(scope="module")
def graphs() -> list[tuple[str, Instance]]:
    domain = get_domain("coloring")
    folder = DATASETS / "graph_coloring"
    return [(Path(folder / f"instance-{i.id}.col").read_text(), i) for i in load_instances(domain, "1-100", DATASETS)]


def only(messages: list[dict[str, str]]) -> str:
    assert len(messages) == 1 and messages[0]["role"] == "user"
    return messages[0]["content"]


# --- Game of 24 -------------------------------------------------------------------------------------------
def test_game24_generation_and_loop_prompts(puzzles: list[tuple[str, Instance]]) -> None:
    game24 = get_domain("game24")
    assert len(puzzles) == len(RANKS)
    for numbers, instance in puzzles:
        assert only(game24.prompt(instance)) == G24_START + f"Input: {numbers}\nAnswer: "
        answer = game24.candidate(instance, "random", random.Random(instance.id))
        loop = G24_USING.format(numbers) + G24_CHECK + answer + (
            "\nIf it is not correct, please give feedback on what is wrong and how to correct it.")
        assert only(game24.judge_prompt(instance, "critique", answer)) == loop + G24_JSON_FEEDBACK
        assert only(game24.judge_prompt(instance, "critique-cot", answer)) == loop + G24_COT


@pytest.mark.parametrize("variant", ["", "-cot", "-no-info"])
def test_game24_verification_prompts(puzzles: list[tuple[str, Instance]], variant: str) -> None:
    game24 = get_domain("game24")
    for numbers, instance in puzzles:
        for kind in game24.candidate_kinds:
            expression = game24.candidate(instance, kind, random.Random(f"{instance.id}/{kind}"))
            sent = only(verification_messages(game24, instance, expression, split_kind(kind + variant)[1]))
            assert sent == g24_verification(numbers, kind + variant, expression)


def test_game24_backprompts(puzzles: list[tuple[str, Instance]]) -> None:
    game24 = get_domain("game24")
    for numbers, instance in puzzles:
        end = g24_end(numbers)
        wrong = game24.candidate(instance, "ablated_number", random.Random(instance.id))
        verdict = game24.verify(instance, wrong)
        assert game24.backprompt(instance, game24.feedback(instance, verdict, "binary")) == (
            f"Feedback: This is not correct. {end}")  # backprompt_type "passfail"
        reason = verdict.errors[0]  # check_answer's one reason; backprompt_type "evaluate"
        assert game24.backprompt(instance, game24.feedback(instance, verdict, "first")) == (
            f"Feedback: This is not correct. {reason} {end}")
        critique = f"The expression {wrong} uses the wrong numbers."  # backprompt_type "llm"
        assert game24.backprompt(instance, critique) == (
            f"Feedback: This is not correct.\n{critique}\n\nWith this feedback, please try again. {end}")


# --- graph colouring --------------------------------------------------------------------------------------
def test_coloring_generation_and_loop_prompts(graphs: list[tuple[str, Instance]]) -> None:
    coloring = get_domain("coloring")
    assert len(graphs) == len(GRAPHS)
    for text, instance in graphs:
        count, edges = col_graph(text)
        assert only(coloring.prompt(instance)) == (
            COL_START + f"You may use at most {col_k(text)} colors.\n" + edges + f"There are a total of {count} "
            "vertices. Please label every vertex, even if it is disconnected from the rest of the graph." + COL_END)
        answer = coloring.candidate(instance, "ablated", random.Random(instance.id))
        assert only(coloring.judge_prompt(instance, "critique", answer)) == (  # backprompt_type "llm", odd turns
            col_intro(text) + "Please check if this coloring is correct:" + answer
            + f"\nIf it is, say '{COL_STOP}' Do not provide anything else in your response. If it is incorrect, "
            "please point out which same-color vertices share an edge.")


@pytest.mark.parametrize("variant", ["", "-cot"])
def test_coloring_verification_prompts(graphs: list[tuple[str, Instance]], variant: str) -> None:
    coloring = get_domain("coloring")
    for text, instance in graphs:
        for kind in coloring.candidate_kinds:
            answer = coloring.candidate(instance, kind, random.Random(f"{instance.id}/{kind}"))
            sent = only(verification_messages(coloring, instance, answer, split_kind(kind + variant)[1]))
            assert sent == col_verification(text, kind + variant, answer)
    with pytest.raises(ValueError, match="no no-info"):
        verification_messages(coloring, graphs[0][1], "0: Color 0\n", "no-info")


def test_coloring_backprompts(graphs: list[tuple[str, Instance]]) -> None:
    coloring = get_domain("coloring")
    for _, instance in graphs:
        verdict = coloring.verify(instance, coloring.candidate(instance, "ablated", random.Random(instance.id)))
        assert verdict.errors  # an ablated colouring breaks at least one edge (the study's ablation)
        reasons = list(verdict.errors)
        assert coloring.backprompt(instance, coloring.feedback(instance, verdict, "binary")) == (
            "Feedback: This is not correct. Using the previously provided graph, please provide a correct "
            f"coloring. {COL_END}")  # backprompt_type "passfail"
        assert coloring.backprompt(instance, coloring.feedback(instance, verdict, "first")) == (
            f"Feedback: {reasons[0]}\nThis is wrong. Please recolor. {COL_END}")
        random_colors = coloring.verify(instance, coloring.candidate(instance, "random", random.Random(1)))
        if random_colors.errors:
            assert coloring.backprompt(instance, coloring.feedback(instance, random_colors, "all")) == (
                "Feedback: " + " ".join(random_colors.errors) + f"\nThis is wrong. Please recolor. {COL_END}")
        critique = "Vertex 3 and vertex 4 share a colour."
        assert coloring.backprompt(instance, critique) == (
            f"This is incorrect. Feedback:\n{critique}\n\nUsing this feedback, please try again. {COL_END}")


def test_prompt_command_prints_the_exact_messages(puzzles: list[tuple[str, Instance]],
                                                   graphs: list[tuple[str, Instance]]) -> None:
    from tests.test_study_cli import invoke

    data = ("--dataset", str(DATASETS))
    numbers = puzzles[0][0]
    shown = json.loads(invoke("prompt", "--domain", "game24", "--instance", "901", "--purpose", "generate",
                              "--format", "json", *data).stdout)
    assert shown == [{"role": "user", "content": G24_START + f"Input: {numbers}\nAnswer: "}]
    for purpose, kind in (("verify", "correct"), ("verify-cot", "correct-cot"), ("verify-no-info", "correct-no-info")):
        shown = json.loads(invoke("prompt", "--domain", "game24", "--instance", "901", "--purpose", purpose,
                                  "--answer", "(10-4)*(6-5)", "--format", "json", *data).stdout)
        assert shown[0]["content"] == g24_verification(numbers, kind, "(10-4)*(6-5)")
    text = invoke("prompt", "--domain", "coloring", "--instance", "1", "--purpose", "verify", "--answer",
                  "0: Color 0\n", *data).stdout
    assert text == "--- user ---\n" + col_verification(graphs[0][0], "correct", "0: Color 0\n") + "\n"
    planning = json.loads(invoke("prompt", "--domain", "blocksworld", "--instance", "2", "--format", "json",
                                 *data).stdout)
    assert [m["role"] for m in planning] == ["system", "user"]
    for purpose in ("verify-cot", "critique-cot"):  # no CoT prompt for PDDL plans: one error line, no prompt
        refused = invoke("prompt", "--domain", "blocksworld", "--instance", "2", "--purpose", purpose,
                         "--style", "pddl", *data, check=2)  # fmt: skip
        assert refused.stdout == "" and refused.stderr == (
            "error: no published chain-of-thought verification prompt for plans in PDDL; use a natural-language "
            "prompt style (nl), or the default verification prompt\n")
    bad = invoke("prompt", "--domain", "coloring", "--instance", "1", "--purpose", "verify-no-info", *data, check=2)
    assert bad.stderr.startswith("error: ") and "no-info" in bad.stderr
    assert "error:" in invoke("prompt", "--domain", "game24", "--instance", "1-3", *data, check=2).stderr
