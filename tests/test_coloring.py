"""Graph coloring: study files and DIMACS, the study's prompts and wording, parsing, verdicts, candidates."""

from __future__ import annotations

import random
from pathlib import Path

import networkx as nx
import pytest

from critiquebench.domains import get_domain, load_instances
from critiquebench.domains.coloring_graphs import color_graph, read_col
from critiquebench.domains.contract import Domain, Instance

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"
END = (
    "Please provide each vertex's color. Do not skip any vertices. Each color must be provided on a new "
    'line in the response and should be formatted as "{VERTEX NUMBER}: {VERTEX COLOR ASSIGNMENT}". Please do '
    "not provide anything else in your response, and end your response with '[ANSWER END]'"
)


@pytest.fixture(scope="module")
def coloring() -> Domain:
    return get_domain("coloring")


@pytest.fixture(scope="module")
def study(coloring: Domain) -> list[Instance]:
    return load_instances(coloring, "1-100", DATA)


@pytest.fixture(scope="module")
def small(coloring: Domain) -> Instance:
    return load_instances(coloring, "265", DATA / "graph_coloring")[0]  # e 0 1, e 0 4, e 1 3, e 2 3; k = 2


def edges_of(instance: Instance) -> list[tuple[int, int]]:
    return [(u, v) for u, v in instance.data["edges"]]


def test_loads_the_study_files(coloring: Domain, study: list[Instance], small: Instance) -> None:
    assert isinstance(coloring, Domain) and coloring.name == "coloring"
    assert [i.id for i in study] == [str(n) for n in range(1, 101)]
    assert small.data == {"n": 5, "edges": [[0, 1], [0, 4], [1, 3], [2, 3]], "k": 2}
    everything = load_instances(coloring, "all", DATA)
    assert len(everything) == 320 and everything[0].id == "1" and everything[-1].id == "320"
    one_file = load_instances(coloring, None, DATA / "graph_coloring" / "instance-7.col")
    assert [i.id for i in one_file] == ["7"]


def test_stored_chromatic_numbers_agree_with_exact_search(study: list[Instance]) -> None:
    for instance in study:
        n, k = instance.data["n"], instance.data["k"]
        assert color_graph(n, edges_of(instance), k) is not None
        assert color_graph(n, edges_of(instance), k - 1) is None


def test_prompt_is_byte_identical_to_the_study(coloring: Domain) -> None:
    instance = load_instances(coloring, "1", DATA)[0]
    edges = [(0, 7), (0, 8), (0, 9), (0, 11), (1, 13), (2, 9), (3, 8), (3, 11), (3, 12), (4, 12), (5, 11),
             (6, 9), (7, 10), (7, 13), (9, 11), (10, 13), (11, 13)]
    expected = (
        "Color the following graph, described as a set of edges, such that no two vertices on the same edge "
        "share a color.\nYou may use at most 3 colors.\n"
        + "".join(f"Vertex {u} is connected to vertex {v}.\n" for u, v in edges)
        + "There are a total of 14 vertices. Please label every vertex, even if it is disconnected from the "
        "rest of the graph." + END
    )
    assert coloring.prompt(instance) == [{"role": "user", "content": expected}]


def test_prompt_keeps_the_studys_vertex_count_when_vertex_0_is_isolated(coloring: Domain) -> None:
    instance = load_instances(coloring, "173", DATA)[0]  # labels 1..10, vertex 0 on no edge
    assert instance.data["n"] == 11 and instance.data["stated_n"] == 10
    assert "There are a total of 10 vertices." in coloring.prompt(instance)[0]["content"]


def test_reads_dimacs_and_names_bad_lines(coloring: Domain, tmp_path: Path) -> None:
    good = tmp_path / "wheel.col"
    good.write_text("c a 4-wheel\np edge 5 8\ne 1 2\ne 2 3\ne 3 4\ne 4 1\n"
                    "e 5 1\ne 5 2\ne 5 3\ne 5 4\ne 2 1\n")
    instance = read_col(good)
    assert instance.id == "wheel" and instance.data["n"] == 5 and instance.data["k"] == 3
    assert instance.data["edges"][:2] == [[0, 1], [1, 2]]
    assert len(instance.data["edges"]) == 8  # the duplicate edge is dropped
    assert [i.id for i in load_instances(coloring, "wheel", tmp_path)] == ["wheel"]
    cases = [("e 0 1\nx 3", ":2:"), ("e 0 one", ":1:"), ("e 0 1\nc OPTIMAL CHROMATIC NUMBER === z", ":2:"),
             ("p edge 3 1\ne 1 4\n", "outside"), ("e 2 2\n", "self-loop"), ("c none\n", "no vertices")]
    for text, where in cases:
        bad = tmp_path / "bad.col"
        bad.write_text(text)
        with pytest.raises(ValueError, match=rf"bad\.col.*{where}|{where}"):
            read_col(bad)
    with pytest.raises(ValueError, match="not in"):
        load_instances(coloring, "999", DATA)


@pytest.mark.parametrize(("response", "expected"), [
    ("0: Color1\n1: Color2", {"0": "Color1", "1": "Color2"}),
    ("Here is my coloring:\nVertex 0: Color 1\n**Vertex 1**: Color 2.\n- 2 = red\n"
     "3. Vertex 3: blue (no conflicts)",
     {"0": "Color 1", "1": "Color 2", "2": "red", "3": "blue"}),
    ("0: A\n1: B\nWait, fix it:\n1: C\n[ANSWER END]\n0: Z", {"0": "A", "1": "C"}),
    ("Step 1: look at vertex 0.\nNo coloring here.", None),
])
def test_parses_colorings_from_free_text(coloring: Domain, small: Instance, response: str,
                                         expected: dict[str, str] | None) -> None:
    assert coloring.parse(small, response) == expected


def test_verdicts_in_the_study_wording(coloring: Domain, small: Instance) -> None:
    assert coloring.verify(small, "0: Color 1\n1: Color 2\n2: Color 2\n3: color1\n4: Color 2").valid
    missing = coloring.verify(small, "0: Color 1\n1: Color 2")
    assert missing.status == "invalid"
    assert missing.errors == ("Vertex 4 was not given a value in the coloring.",
                              "Vertex 3 was not given a value in the coloring.",
                              "Vertex 2 was not given a value in the coloring.")
    clash = coloring.verify(small, "0: Color1\n1: Color1\n2: Color2\n3: Color2\n4: Color2")
    assert clash.errors == (
        "Vertex 0 and vertex 1 were both colored Color1 despite being connected by an edge.",
        "Vertex 2 and vertex 3 were both colored Color2 despite being connected by an edge.",
    )
    many = coloring.verify(small, "0: a\n1: b\n2: b\n3: c\n4: b\n99: z")
    assert many.errors == (
        "This coloring is not optimal. It uses 3 colors, when only 2 are necessary.\n Please recolor.",)
    nothing = coloring.verify(small, "I could not do it.")
    assert nothing.status == "malformed" and nothing.answer is None
    assert nothing.errors[0] == "Vertex 0 was not given a value in the coloring."


def test_feedback_levels_and_backprompts(coloring: Domain, small: Instance) -> None:
    verdict = coloring.verify(small, "0: Color1\n1: Color1\n2: Color2\n3: Color2\n4: Color2")
    binary = "This is not correct. Using the previously provided graph, please provide a correct coloring."
    assert coloring.feedback(small, verdict, "binary") == binary
    assert coloring.feedback(small, verdict, "first") == verdict.errors[0]
    assert coloring.feedback(small, verdict, "all") == " ".join(verdict.errors)
    assert coloring.feedback(small, coloring.verify(small, "0: a\n1: b\n2: b\n3: a\n4: b"), "first") == ""
    assert coloring.backprompt(small, binary) == f"Feedback: {binary} {END}"
    sound = coloring.feedback(small, verdict, "all")
    assert coloring.backprompt(small, sound) == f"Feedback: {sound}\nThis is wrong. Please recolor. {END}"
    assert coloring.backprompt(small, "Vertices 0 and 1 clash.") == (
        "This is incorrect. Feedback:\nVertices 0 and 1 clash.\n\nUsing this feedback, please try again. "
        + END)


def test_verifier_prompts_are_the_studys(coloring: Domain, small: Instance) -> None:
    graph = ("Vertex 0 is connected to vertex 1.\nVertex 0 is connected to vertex 4.\n"
             "Vertex 1 is connected to vertex 3.\nVertex 2 is connected to vertex 3.\n")
    answer = "0: a\n1: b\n2: a\n3: b\n4: b"
    assert coloring.judge_prompt(small, "critique", answer)[0]["content"] == (
        "The following graph, described as a set of edges, has an optimal coloring number of 2:\n" + graph
        + "Please check if this coloring is correct:" + answer
        + "\nIf it is, say 'Verifier confirmed success.' Do not provide anything else in your response. If "
        "it is incorrect, please point out which same-color vertices share an edge."
    )
    cot = coloring.judge_prompt(small, "critique-cot", answer)[0]["content"]
    assert cot.startswith("\n[Instructions]\nWhen outputting your final answer, first print the [Answer] tag")
    intro = "The following graph, described as a set of edges, has an optimal coloring number of 2:\n"
    assert f"[Graph]\n{intro}{graph}" in cot
    assert cot.endswith(f"Please check if this coloring is correct: {answer}\n\nLet's think step by step. "
                        "Remember to output your final answer in the format described in the instructions."
                        "\n[Thoughts]")


@pytest.mark.parametrize(("reply", "valid", "parsed"), [
    ("Verifier confirmed success.", True, True),
    ("Vertex 0 and vertex 1 share Color1.", False, True),
    ("[Thoughts] fine\n[Answer]\nWrong Edges: []\nAll Vertices Colored: true\nOptimal Or Less: true\n"
     "Correct: true",
     True, True),
    ("[Answer]\n**Wrong Edges:** [(0, 1)]\n**All Vertices Colored:** true\n**Correct:** False", False, True),
    ("[Thoughts] it looks fine\n[Answer]\nI think so.", False, False),
    ("", False, False),
])
def test_llm_verdicts(coloring: Domain, small: Instance, reply: str, valid: bool, parsed: bool) -> None:
    verdict = coloring.judge_reply(small, "critique", "", reply).verdict
    assert (verdict.says_valid, verdict.parsed, verdict.critique) == (valid, parsed, reply)


def test_canonical_form_ignores_color_names(coloring: Domain, small: Instance) -> None:
    a = coloring.canonical(small, "0: red\n1: blue\n2: red\n3: blue\n4: blue")
    b = coloring.canonical(small, "Vertex 4: Color 2\nVertex 3: Color 2\nVertex 2: Color 1\n"
                                  "Vertex 1: Color 2\n0: Color 1")
    assert a == b == "0:1,1:2,2:1,3:2,4:2"
    assert coloring.canonical(small, "0: red\n1: red") != coloring.canonical(small, "0: red\n1: blue")
    assert coloring.canonical(small, "nothing") is None


def test_candidates_follow_the_studys_kinds(coloring: Domain, study: list[Instance]) -> None:
    rng = random.Random(3)
    for instance in study:
        k = instance.data["k"]
        assert coloring.verify(instance, coloring.candidate(instance, "correct", rng)).valid
        ablated = coloring.verify(instance, coloring.candidate(instance, "ablated", rng))
        assert ablated.status == "invalid" and "despite being connected by an edge" in ablated.errors[0]
        text = coloring.candidate(instance, "non_optimal", rng)
        assert coloring.verify(instance, text).errors == (
            f"This coloring is not optimal. It uses {k + 1} colors, when only {k} are necessary.\n"
            " Please recolor.",)
        colors = set(coloring.parse(instance, coloring.candidate(instance, "random", rng)).values())
        assert len(colors) <= k
    with pytest.raises(ValueError, match="unknown coloring candidate kind"):
        coloring.candidate(study[0], "nonsense", rng)


def test_generated_graphs_are_planar_seeded_and_exact(coloring: Domain) -> None:
    graphs = load_instances(coloring, "gen:6:11", None)
    assert [g.id for g in graphs] == [f"gen-11-{i}" for i in range(1, 7)]
    assert [g.data for g in coloring.generate(2, 11)] == [g.data for g in graphs[:2]]
    for instance in graphs:
        n, k = instance.data["n"], instance.data["k"]
        graph = nx.Graph(edges_of(instance))
        assert 10 <= n <= 13 and nx.check_planarity(graph)[0] and k <= 4
        assert color_graph(n, edges_of(instance), k) is not None
        assert color_graph(n, edges_of(instance), k - 1) is None
        assert coloring.verify(instance, coloring.candidate(instance, "correct", random.Random(0))).valid
    assert get_domain("coloring", vertices=(5, 6)).generate(1, 1)[0].data["n"] in (5, 6)
    with pytest.raises(ValueError, match="no options"):
        get_domain("coloring", colours=3)


def test_long_hostile_replies_are_read_in_linear_time(coloring: Domain, small: Instance) -> None:
    """A regex that backtracks would turn these into minutes; linear reading takes milliseconds."""
    n = 20_000
    for text in ("0" + " " * n + "x", "\n" * n + "x", "Vertex" + " " * n + "1", "0:\n" * n, "1 *\n  \t" * n,
                 "Correct" + " " * n + "x", "Vertex 1 and vertex 2 were both colored " * n):
        assert not coloring.verify(small, text).valid
        assert not coloring.judge_reply(small, "critique", "", text).verdict.says_valid
        assert coloring.backprompt(small, text).startswith("This is incorrect. Feedback:")
