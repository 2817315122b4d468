"""Our validator against the real VAL (KCL-Planning/VAL's `Validate`, `domains.planning.val_binary`), instance by
instance on recorded data.

- `recorded_replies`: the refinement study's (004) recorded replies, each read by `refine`'s default (our VAL
  reading of the raw reply, `PlanningDomain.assess_val`) and by the real VAL run as the study ran it (no option, the
  raw reply as the plan file), compared on the verdict and on the request the loop sends after it;
- `recorded_oracle`: the same replies' critique from 001's Oracle (our repair advice against `Validate -v`'s on the
  plan we read);
- `planbench_plans`: PlanBench's GPT-4 one-shot Blocksworld plans (`reference/gpt-4_blocksworld_one_shot.json`),
  each written as PlanBench wrote its plan file, compared on the verdict (ours, VAL's and PlanBench's recorded
  label) and on the Oracle's critique of 001 (our `val_advice` against `Validate -v`'s repair advice).

`python -m critiquebench.reports.val_agreement CHECKOUT DATASETS` prints the counts and every disagreement, CHECKOUT
being a checkout of Singh8899/LLM-Planning-Leonardo (its `problem_dataset/problems_blocksworlds` and
`generated_plans/plans`), DATASETS `../shared/datasets`. Needs the `val` extra.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

from critiquebench.domains import get_domain, load_instances


@dataclass(frozen=True)
class Compared:
    """One reply or plan: the verdicts and texts of ours and of the real VAL (and PlanBench's label)."""

    source: str
    ours_valid: bool
    val_valid: bool
    ours: str  # the request sent after it (recorded replies) or the Oracle's critique (PlanBench plans)
    val: str
    label: bool | None = None

    @property
    def agrees(self) -> bool:
        return self.ours_valid == self.val_valid and self.ours == self.val and self.label in (None, self.val_valid)


def recorded_replies(problems: Path, outputs: Path) -> list[Compared]:
    """Every `*_temp{i}.txt` reply under `outputs/model_outputs_*/blocksworld/` against its problem in
    `problems/blocksworld/` (the study's layout)."""
    from critiquebench.domains.planning.val_binary import validate

    folder = problems / "blocksworld"
    domain = get_domain(str(folder))
    instances = {i.id: i for i in load_instances(domain, "all", folder)}
    texts = domain.prompts["validator_refinement"]
    out = []
    for model in sorted(outputs.glob("model_outputs_*")):
        for path in sorted((model / "blocksworld").glob("*_temp*.txt")):
            instance = instances[path.name.rsplit("_temp", 1)[0]]
            reply = path.read_text(encoding="utf-8", errors="replace")
            ours = domain.assess_val(instance, reply)[0]
            val = validate(domain.domain_pddl, instance.data["problem"], reply)
            sent = "" if val.valid else texts.render("request", reason=val.reason or "")
            out.append(Compared(f"{model.name}/{path.name}", ours.valid, val.valid,
                                "" if ours.valid else ours.sent or "", sent))  # fmt: skip
    return out


def recorded_oracle(problems: Path, outputs: Path) -> list[Compared]:
    """The same replies read as 001's Oracle reads a plan: our validator's repair advice (`val_advice`) against
    `Validate -v`'s on the plan we read from the reply (`binary_advice`)."""
    folder = problems / "blocksworld"
    domain = get_domain(str(folder))
    instances = {i.id: i for i in load_instances(domain, "all", folder)}
    out = []
    for model in sorted(outputs.glob("model_outputs_*")):
        for path in sorted((model / "blocksworld").glob("*_temp*.txt")):
            instance = instances[path.name.rsplit("_temp", 1)[0]]
            reply = path.read_text(encoding="utf-8", errors="replace")
            ours, val = domain.val_advice(instance, reply), domain.binary_advice(instance, reply)
            out.append(Compared(f"{model.name}/{path.name}", not ours, not val, ours, val))
    return out


def planbench_plans(datasets: Path, first: int | None = None) -> list[Compared]:
    """GPT-4's one-shot Blocksworld plans as PlanBench extracted them (the `first` ones, or all 500)."""
    from critiquebench.domains.planning.val_binary import repair_advice, validate

    records = json.loads((datasets / "planbench" / "reference" / "gpt-4_blocksworld_one_shot.json").read_text())
    records = records["instances"][:first]
    domain = get_domain("blocksworld")
    instances = {i.id: i for i in load_instances(domain, ",".join(str(r["instance_id"]) for r in records), datasets)}
    out = []
    for record in records:
        instance = instances[str(record["instance_id"])]
        plan = record["extracted_llm_plan"]  # a list of "(action args)" lines
        text = "".join(f"{line}\n" for line in (plan.splitlines() if isinstance(plan, str) else plan))
        val = validate(domain.domain_pddl, instance.data["problem"], text, verbose=True)
        ours = domain.assess(instance, text)[0]
        out.append(Compared(f"planbench/blocksworld/{instance.id}", ours.valid, val.valid,
                            domain.val_advice(instance, text), repair_advice(val.stdout),
                            str(record["correct"]) == "True"))  # fmt: skip
    return out


def summary(name: str, rows: list[Compared]) -> str:
    verdicts = sum(r.ours_valid == r.val_valid for r in rows)
    texts = sum(r.ours == r.val for r in rows)
    lines = [f"{name}: {len(rows)} compared; verdicts agree {verdicts}, texts agree {texts}"]
    lines += [f"  differs {r.source}: ours {r.ours_valid} {r.ours!r} / VAL {r.val_valid} {r.val!r}"
              for r in rows if not r.agrees]  # fmt: skip
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    checkout, datasets = Path(argv[0]), Path(argv[1])
    print(summary("refinement study's recorded replies", recorded_replies(
        checkout / "problem_dataset" / "problems_blocksworlds", checkout / "generated_plans" / "plans")))
    print(summary("the same replies' Oracle critique (001)", recorded_oracle(
        checkout / "problem_dataset" / "problems_blocksworlds", checkout / "generated_plans" / "plans")))
    print(summary("PlanBench GPT-4 one-shot Blocksworld plans", planbench_plans(datasets)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
