"""000's colouring numbers that GPT-4's own recorded runs check (`report --published`): Table 1's seven colouring
cells and Table 2's colouring row, from gpt-and-i's files at @ada66fc6 (`../shared/datasets/self_verification/
recorded/`), read as `critiquebench import self-verification` replays them (each run's last recorded answer,
judged by our sound verifier; `tests/test_self_verification_import.py` replays them with 0 calls and gets the
same counts). Nothing is called and no store is read.
"""

from __future__ import annotations

import json
from pathlib import Path

from critiquebench.domains import get_domain, load_instances
from critiquebench.importers.self_verification.reader import kind_of, traces
from critiquebench.nodes.voting import pick_consistent
from critiquebench.reports.tables import pct

RECORDED = Path("self_verification/recorded/gpt-and-i@ada66fc6/llm-csp/responses")
GRAPHS = "1-100"  # Table 1's colouring graphs

# (cell, file under graph_coloring/gpt-4_chat/, published, why ours differs or what it rests on)
CELLS = (
    ("S.P.", "responses.json", 16, ""),
    ("Sampling, k=15", "backprompting-15top1/responses.json", 40, "any of the 15 samples at temperature 1"),
    ("S.C., k=15", "backprompting-15top1/responses.json", 14,
     "the most common reply text of the 15; ties (28 graphs) go to the earliest here, to whichever `set` listed "
     "first in the study's `max(set(responses), key=responses.count)`, an order that moves with Python's hash "
     "seed: 7 graphs (9, 15, 55, 58, 70, 77, 97) tie right and wrong replies, so the study's own rule gives 12 to "
     "19 (at PYTHONHASHSEED 0-200: 13 at 38 seeds, 14 at 67, 15 at 66; ours, the earliest, is right on graph 15 "
     "alone of the seven: 13)"),
    ("LLM+LLM", "backprompting-llm/responses.json", 2,
     "the final answer of each recorded run (the study's `check_coloring` agrees on all 100); 1 is right. The "
     "printed 2% is not in the recording"),
    ("B.F.", "backprompting-passfail/responses.json", 38,
     "graphs 7 and 8 recorded the whole transcript as the reply, whose last colouring is right: read alone (as "
     "here and in 000's 38%), 38; the study's `check_coloring`, reading every \"N: C\" line (the prompt's "
     "'\"{VERTEX NUMBER}: {VERTEX COLOR ASSIGNMENT}\"' too, a fourth colour), 36"),
    ("F.E.F.", "backprompting-first/responses.json", 37,
     "the final answer of each recorded run (the study's `check_coloring` agrees on all 100); the printed 37% is "
     "not in the recording"),
    ("A.E.F.", "backprompting-full/responses.json", 34,
     "the final answer of each recorded run (the study's `check_coloring` agrees on all 100); the printed 34% is "
     "not in the recording"),
)


def _cell(root: Path, file: str, label: str) -> int:
    path = root / RECORDED / "graph_coloring/gpt-4_chat" / file
    kind = kind_of(path)
    domain = get_domain("coloring", form="transcript", protocol="2023")
    graphs = {i.id: i for i in load_instances(domain, GRAPHS, root)}
    read = [t for t in traces(path, kind)[0] if t.instance in graphs]
    if label.startswith("Sampling"):
        return sum(any(domain.verify(graphs[t.instance], s).valid for s in t.samples) for t in read)
    if label.startswith("S.C."):
        right = 0
        for t in read:
            rows = [{"round": n + 1, "answer": s, "canonical": None} for n, s in enumerate(t.samples)]
            right += domain.verify(graphs[t.instance], t.samples[pick_consistent(rows, "text") - 1]).valid
        return right
    return sum(domain.verify(graphs[t.instance], t.replies[-1]).valid for t in read)


Row = tuple[str, str, str, str, bool, str]  # a `reports.published.PublishedRow`'s fields, which that module builds


def recorded_coloring_rows(root: Path) -> list[Row]:
    """(paper, where, published, ours, agrees, reason) for each colouring number GPT-4's recorded runs check."""
    if not (root / RECORDED).is_dir():
        return []
    rows = []
    base = "GPT-4's recorded run (gpt-and-i@ada66fc6), graphs 1-100, replayed by `import self-verification`"
    for label, file, printed, why in CELLS:
        ours = _cell(root, file, label)
        rows.append(("000", f"Table 1, Graph Coloring, {label} (000:192)", f"{printed}%",
                     pct(ours, 100), ours == printed, base + (f"; {why}" if why else "")))  # fmt: skip
    domain = get_domain("coloring", form="transcript")
    graphs = {i.id: i for i in load_instances(domain, GRAPHS, root)}
    from critiquebench.domains.study_files import candidates

    right = fp = fn = total = 0
    for kind in ("correct", "ablated", "non-optimal", "random", "llm"):
        replies = json.loads((root / RECORDED / "color_verification/gpt-4_chat" / kind / "responses.json").read_text())
        for ident, record in replies.items():
            text = candidates(root / "self_verification/color_verification", ident)[kind.replace("-", "_")]
            valid = domain.verify(graphs[ident], text).valid
            said = domain.judge_reply(graphs[ident], "verify", text, record["response"]).verdict.says_valid
            total += 1
            right += said == valid
            fp += said and not valid
            fn += valid and not said
    ours = f"{right}/{total}, FP {fp}, FN {fn}"
    rows.append(("000", "Table 2, Graph Coloring (000:210)", "362/500, FP 25, FN 113", ours,
                 ours == "362/500, FP 25, FN 113",
                 "GPT-4's 500 recorded verification replies (gpt-and-i@ada66fc6 color_verification/"
                 "gpt-4_chat), whose queries are our prompts over the study's candidate files; "
                 "`import self-verification` replays them with 0 calls"))  # fmt: skip
    return rows
