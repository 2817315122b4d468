"""A domain written outside the package: the core contract plus one capability (Judged). Add two numbers."""

from __future__ import annotations

import random
import re
from pathlib import Path

from critiquebench.domains.contract import Instance, Judgement, LLMVerdict, Verdict


class Sums:
    name = "sums"
    # Judged: the purposes it has a prompt for (None) and why it lacks the others
    purposes = {"critique": None, "critique-cot": "the toy study published no chain-of-thought prompt"}

    def load(self, selection: str | None = None, path: Path | None = None) -> list[Instance]:
        return self.generate(3, 0)

    def generate(self, n: int, seed: int) -> list[Instance]:
        rng = random.Random(seed)
        return [Instance(self.name, f"s{seed}-{i}", {"a": rng.randint(1, 99), "b": rng.randint(1, 99)})
                for i in range(n)]  # fmt: skip

    def prompt(self, instance: Instance, style: str | None = None, shots: int | None = None) -> list[dict[str, str]]:
        return [{"role": "user", "content": f"What is {instance.data['a']} + {instance.data['b']}? Answer: "}]

    def assess(self, instance: Instance, text: str) -> tuple[Verdict, str | None]:
        found = re.findall(r"-?\d+", text or "")
        if not found:
            return Verdict("malformed", ("No number.",)), None
        total = instance.data["a"] + instance.data["b"]
        errors = () if int(found[-1]) == total else (f"{found[-1]} is not the sum.",)
        return Verdict("invalid" if errors else "valid", errors, int(found[-1])), found[-1]

    def feedback(self, instance: Instance, verdict: Verdict, level: str) -> str:
        return "" if verdict.valid else ("Wrong." if level == "binary" else " ".join(verdict.errors))

    def backprompt(self, instance: Instance, critique: str) -> str:
        return f"{critique} Try again. Answer: "

    def judge_prompt(self, instance: Instance, purpose: str, answer: str) -> list[dict[str, str]]:
        sum_ = f"{instance.data['a']} + {instance.data['b']}"
        return [{"role": "user", "content": f"Is {answer} the sum {sum_}? Say CORRECT or WRONG, and why."}]

    def judge_reply(self, instance: Instance, purpose: str, answer: str, reply: str) -> Judgement:
        return Judgement(LLMVerdict("CORRECT" in (reply or ""), reply or "", parsed=bool(reply)))


def make_sums(**options: object) -> Sums:
    return Sums()


class FlakySums(Sums):
    """Sums whose sound check meets an error of the interpreter itself (as python/cpython#106905's race gave
    Game of 24's parse) the first `faults[instance id]` times it checks that instance's answer."""

    faults: dict[str, int] = {}

    def assess(self, instance: Instance, text: str) -> tuple[Verdict, str | None]:
        if self.faults.get(instance.id, 0) > 0:
            self.faults[instance.id] -= 1
            raise SystemError("AST constructor recursion depth mismatch (before=60, after=52)")
        return super().assess(instance, text)


def make_flaky_sums(**options: object) -> FlakySums:
    return FlakySums()
