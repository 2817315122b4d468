"""Plan validation throughput: critiquebench's ground-STRIPS validator vs unified-planning's
SequentialPlanValidator, on the 500 GPT-4 Blocksworld plans of PlanBench's one-shot results, and on the
typed AutoPlanBench domains (every gold plan, and each with a step dropped, two swapped, the last cut).

Both sides parse every problem once and convert every plan once before timing; the timed loop is validation
only, over all 500 plans, measured in the same process: ours best of `--repeat` runs with its ground-action
memo cleared before each (cold cache), unified-planning's in one pass (it is slow enough to be stable).
Prints the time per plan for each and the ratio, and checks that both validators agree on every plan.

    .venv/bin/python benchmarks/bench_plan_validation.py [--repeat 5] [--data ../shared/datasets]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path
from typing import Any

from critiquebench.domains.planning import load_planning_domain
from critiquebench.domains.planning.instances import read_plan_file
from critiquebench.domains.planning.validator import check_plan

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.results import add_json_option, record, row  # noqa: E402

TYPED_DOMAINS = ("depot", "floortile", "goldminer", "gripper", "rovers", "satellite", "visitall")
DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"


def _steps(plan: list[str]) -> list[tuple[str, tuple[str, ...]]]:
    out = []
    for line in plan:
        words = line.strip().strip("()").lower().split()
        if words:
            out.append((words[0], tuple(words[1:])))
    return out


def _best(run: Any, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    add_json_option(parser)
    args = parser.parse_args()
    try:
        import unified_planning.shortcuts as up_shortcuts
        from unified_planning.io import PDDLReader
    except ImportError:
        print("unified-planning is not installed (pip install unified-planning); skipping the benchmark.")
        return

    bw = args.data / "planbench" / "blocksworld"
    records = json.loads((args.data / "planbench/reference/gpt-4_blocksworld_one_shot.json").read_text())
    plans = [(str(r["instance_id"]), r["extracted_llm_plan"]) for r in records["instances"]]

    domain = load_planning_domain("blocksworld")
    instances = {i.id: i for i in domain.load(",".join(sorted({p[0] for p in plans})), path=bw)}

    up_shortcuts.get_environment().credits_stream = None
    up_shortcuts.get_environment().error_used_name = False  # floortile: an action and a predicate "up"
    reader = PDDLReader()
    domain_text = (bw / "domain.pddl").read_text()
    cases = [
        (domain.task(instances[i]), _steps(plan), domain_text, instances[i].data["problem"], plan) for i, plan in plans
    ]
    rows = _compare(f"PlanBench Blocksworld, {len(cases)} GPT-4 plans", cases, reader, args.repeat)

    typed: list[tuple[Any, ...]] = []
    for name in TYPED_DOMAINS:
        folder = args.data / "autoplanbench" / name
        apb = load_planning_domain(folder, "pddl")
        text = (folder / "domain.pddl").read_text()
        for inst in apb.load(None):
            gold = read_plan_file(folder / "orig_gold_plans" / f"instance-{inst.id}_gold_plan.txt")
            # The gold plan and three broken ones (a step dropped, two swapped, the last cut).
            k = len(gold) // 2
            variants = [
                gold,
                gold[:k] + gold[k + 1 :],
                gold[:k] + gold[k + 1 : k + 2] + gold[k : k + 1] + gold[k + 2 :],
                gold[:-1],
            ]
            typed += [(apb.task(inst), _steps(v), text, inst.data["problem"], v) for v in variants]
    rows += _compare(
        f"AutoPlanBench typed domains ({', '.join(TYPED_DOMAINS)}), gold and broken plans", typed, reader, args.repeat
    )
    record("bench_plan_validation", rows, path=args.json, notes=f"ours: best of {args.repeat}")


def _compare(label: str, cases: list[tuple[Any, ...]], reader: Any, repeat: int) -> list[dict[str, Any]]:
    """Times both validators on `cases` of (our task, our steps, domain PDDL, problem PDDL, plan lines); returns
    the results' rows."""
    from unified_planning.engines.plan_validator import SequentialPlanValidator
    from unified_planning.engines.results import ValidationResultStatus
    from unified_planning.plans import SequentialPlan

    problems: dict[tuple[str, str], Any] = {}
    theirs = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for *_ours, dom, prob, plan in cases:
            if (dom, prob) not in problems:
                problems[(dom, prob)] = reader.parse_problem_string(dom, prob)
            problem = problems[(dom, prob)]
            text = "\n".join(plan)
            theirs.append((problem, reader.parse_plan_string(problem, text) if text else SequentialPlan([])))
    validator = SequentialPlanValidator()
    ours = [(task, steps) for task, steps, *_rest in cases]
    our_verdicts = [check_plan(task, steps).valid for task, steps in ours]

    def run_ours() -> None:
        for task, _ in ours:
            task._cache.clear()  # cold grounding memo: every run grounds its actions again
        for task, steps in ours:
            check_plan(task, steps)

    t_ours = _best(run_ours, repeat)
    # unified-planning takes tens of milliseconds per plan, so one timed pass (which also collects its
    # verdicts) keeps the benchmark short; its run-to-run spread is small next to the ratio.
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        up_verdicts = [validator.validate(p, plan).status == ValidationResultStatus.VALID for p, plan in theirs]
    t_up = time.perf_counter() - start
    n = len(cases)
    agree = sum(a == b for a, b in zip(our_verdicts, up_verdicts, strict=True))
    print(f"== {label}")
    print(f"plans: {n} (valid by ours: {sum(our_verdicts)}, agreement with unified-planning: {agree}/{n})")
    print(f"critiquebench check_plan (cold):          {t_ours / n * 1e6:9.1f} us/plan")
    print(f"unified-planning SequentialPlanValidator: {t_up / n * 1e6:9.1f} us/plan")
    print(f"speed-up: {t_up / t_ours:.1f}x (target >= 20x)")
    return [
        row(f"validation time per plan, {label}: check_plan (cold)", t_ours / n * 1e6, "µs/plan",
            baseline=("unified-planning SequentialPlanValidator", t_up / n * 1e6), ratio=t_up / t_ours,
            target="speed-up >= 20x", met=t_up / t_ours >= 20, note=f"{sum(our_verdicts)} valid by ours"),
        row(f"verdicts that agree with unified-planning, {label}", agree, f"of {n}", target="all agree",
            met=agree == n),
    ]  # fmt: skip


if __name__ == "__main__":
    main()
