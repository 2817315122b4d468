"""Problems read back from recorded PDDL prompts, for PlanBench runs whose problems no checkout holds.

PlanBench's obfuscated runs renamed the domain at random for every prompt (`prompt_generation.py:433`: six
random letters replace `obfuscated_randomized_blocksworld` in the query, `:452`), and some were run on domain
files no commit holds (the obfuscated Logistics run's domain has other predicates than the repository's). A zero-
shot PDDL prompt carries the whole domain and problem, so each instance is rebuilt from the query that was sent:
the domain once (its per-prompt names kept as the `domain_names` option), each problem as the file PlanBench's
builder re-wraps into exactly the recorded text. PlanBench's 2023 GPT-4 Logistics PDDL runs were sent an older
domain file than any commit holds (a line of one space where the repository's has none): `with_recorded_domain`
keeps the checkout's problems with the domain text the prompts show. Every rebuilt prompt is checked against the
recorded one by the importer (`planbench.styles.recognise`), so nothing is imported that does not replay byte
for byte.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from critiquebench.domains.planning import planbench_prompts as pp
from critiquebench.importers.planbench.checkout import write_folder
from critiquebench.importers.planbench.file import ImportError_

_NAME = re.compile(r"\(define\s*\(domain\s+([^\s()]+)")
_END = "\n\n[PLAN]"


@dataclass(frozen=True)
class Rebuilt:
    folder: Path  # a PDDL domain folder: domain.pddl, instances/instance-N.pddl
    domain_names: dict[str, str]  # instance id -> the name its prompt showed, where not domain.pddl's


def pddl_queries(queries: Mapping[int, str]) -> bool:
    """Whether every query is one of PlanBench's zero-shot PDDL prompts (which hold the whole domain and problem):
    HEAD's, or its 2023 pipeline's."""
    return bool(queries) and all(_split(q) is not None for q in queries.values())


def _split(query: str) -> tuple[str, str, bool] | None:
    """A zero-shot PDDL prompt's domain and problem text as sent, and whether it is the 2023 form (which writes
    the problem file stripped, then a blank line, `planbench_prompts.pddl_zero_shot_2023`)."""
    head = pp.PDDL_ZERO_SHOT_HEADER + "[DOMAIN]\n"
    if query.startswith(head) and query.endswith(_END):
        body, sep, problem = query[len(head) : -len(_END)].partition("\n\n[QUERY PROBLEM]\n")
        return (body, problem, False) if sep else None
    head = pp.PDDL_ZERO_SHOT_HEADER_2023 + "[DOMAIN]\n"
    if query.startswith(head) and query.endswith("\n\n"):
        body, sep, problem = query[len(head) :].partition("\n\n[QUERY PROBLEM]\n")
        return (body, problem.rstrip("\n"), True) if sep else None
    return None


def rebuild(path: Path, name: str, queries: Mapping[int, str], into: Path) -> Rebuilt:
    """The domain and problems of `queries` (instance id -> the zero-shot PDDL prompt sent) as a domain folder
    under `into`; ImportError_ naming the instance whose prompt cannot be read so. Where the prompts show
    different domain names, the folder's domain is called `name` (PlanBench's config name, which its builder
    replaced in each query) and each prompt's name is kept in `domain_names`."""
    parts: dict[int, tuple[str, str, str]] = {}  # id -> (domain name, domain text, problem text) as sent
    older = False
    for ident in sorted(queries):
        split = _split(queries[ident])
        body, problem, older = split if split is not None else ("", "", False)
        found = _NAME.match(body)
        if split is None or found is None:
            raise ImportError_(
                f"{path}: instance {ident}: the PDDL prompt has no '(define (domain NAME)' and [QUERY PROBLEM] parts"
            )
        parts[ident] = (found.group(1), body, problem)
    seen = {own for own, _, _ in parts.values()}
    canonical = seen.pop() if len(seen) == 1 else name
    first = min(parts)
    domain = _renamed(parts[first][1], parts[first][0], canonical)
    names: dict[str, str] = {}
    files: dict[str, str] = {"domain.pddl": domain + "\n"}
    for ident, (own, body, problem) in parts.items():
        where = f"{path}: instance {ident}"
        if _renamed(body, own, canonical) != domain:
            raise ImportError_(f"{where}: its domain differs from instance {first}'s by more than its name")
        if own != canonical:
            names[str(ident)] = own
        problem = _renamed(problem, own, canonical)
        if older:  # the 2023 form sent the problem file stripped
            files[f"instances/instance-{ident}.pddl"] = problem + "\n"
            continue
        for candidate in _problem_files(problem):
            if pp.pddl_zero_shot(domain, candidate).endswith("[QUERY PROBLEM]\n" + problem + _END):
                files[f"instances/instance-{ident}.pddl"] = candidate
                break
        else:
            raise ImportError_(f"{where}: the recorded problem is no re-wrapped problem file of PlanBench's builder")
    folder = write_folder(f"{name}-recorded", files, into, {"rebuilt_from": str(path)})
    return Rebuilt(folder, names)


def _problem_files(problem: str) -> list[str]:
    """The problem files PlanBench's builder re-wraps into `problem` ("(define" + all after it but the file's
    last character + "\n)", `prompt_generation.py:445`): a file ending in a newline got one parenthesis more than
    it closes, a file ending in its last parenthesis none."""
    if problem.count("(") < problem.count(")") and problem.endswith("\n)"):
        return [problem[: -len("\n)")] + "\n"]
    return [problem]


def _renamed(text: str, old: str, new: str) -> str:
    """`text` with the domain name `old` as `new` (where a prompt named the domain: its header, `(:domain ...)`)."""
    return text if old == new else re.sub(rf"(?<![\w-]){re.escape(old)}(?![\w-])", new, text)


_PDDL_HEADERS = (pp.PDDL_ZERO_SHOT_HEADER, pp.PDDL_ZERO_SHOT_HEADER_2023, pp.PDDL_ONE_SHOT_HEADER)


def recorded_domain(queries: Mapping[int, str]) -> str | None:
    """The domain text every PDDL prompt of `queries` showed under [DOMAIN] (one text for all), else None."""
    found: set[str] = set()
    for query in queries.values():
        head = next((h for h in _PDDL_HEADERS if query.startswith(h + "[DOMAIN]\n")), None)
        if head is None:
            return None
        body = query[len(head) + len("[DOMAIN]\n") :]
        ends = [e for e in (body.find("\n\n[PROBLEM]\n"), body.find("\n\n[QUERY PROBLEM]\n")) if e >= 0]
        if not ends:
            return None
        found.add(body[: min(ends)])
    return found.pop() if len(found) == 1 else None


def with_recorded_domain(folder: Path, domain: str, into: Path) -> Path | None:
    """Domain folder `folder` (laid out from a checkout) with the domain text the prompts showed, when that is
    not its domain.pddl's (None: the same text, nothing to try)."""
    current = (folder / "domain.pddl").read_text(encoding="utf-8")
    if current.strip() == domain.strip():
        return None
    files: dict[str, str | bytes] = {
        str(path.relative_to(folder)): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and path.name != "SOURCE.json"
    }
    files["domain.pddl"] = domain + "\n"
    name = folder.name.rsplit("-", 1)[0]
    note = {"domain_from": "the recorded prompts", "rest": str(folder)}
    return write_folder(f"{name}-recorded-domain", files, into, note)


_STATEMENT = re.compile(
    r"\[STATEMENT\]\nAs initial conditions I have that, (?P<init>[^\n]*)\.\nMy goal is to have that (?P<goal>[^\n]*)\."
)


def stated_twice(queries: Mapping[int, str]) -> dict[int, str]:
    """The English zero-shot prompts whose initial conditions name one fact twice (instance id -> why), which no
    problem renders: a state is a set (PlanBench's come from tarski's `init.as_atoms()`, `pddl_to_text.py:42`),
    so such a prompt cannot be rebuilt. A goal may state a fact twice (a formula: gpt-4o-mini's unsolvable
    Blocksworld run, instance 39, "the red block is on top of the blue block" twice): its problem keeps it so
    (`Task.stated_goal`)."""
    found: dict[int, str] = {}
    for ident, query in queries.items():
        statement = list(_STATEMENT.finditer(query))
        if not statement:
            continue
        clauses = [c.strip() for c in re.split(r", | and ", statement[-1].group("init")) if c.strip()]
        twice = next((c for k, c in enumerate(clauses) if c in clauses[:k]), None)
        if twice is not None:
            found[ident] = (
                f"its prompt states {twice!r} twice in its initial conditions, which a state (a set of facts) "
                "cannot, so the prompt cannot be rebuilt"
            )
    return found


def with_stated_problems(path: Path, folder: Path, queries: Mapping[int, str], into: Path) -> Path | None:
    """Domain folder `folder` (laid out from a checkout, with English templates) with each instance's problem
    read back from the English statement its zero-shot prompt showed (the last `[STATEMENT]`: initial conditions
    and goal, fact by fact through the config's templates), for runs sent problems the checkout lacks (the
    3-block unsolvable Blocksworld runs); None where a prompt states no problem so."""
    from critiquebench.domains import get_domain
    from critiquebench.domains.planning.strips import Task
    from critiquebench.domains.planning.tasks.states import StateReader

    try:
        domain = get_domain(str(folder))
    except (ValueError, OSError):
        return None
    cfg, model = getattr(domain, "cfg", None), getattr(domain, "model", None)
    if cfg is None or model is None or not cfg.encoded_objects:
        return None
    statements = [found[-1] for q in queries.values() if (found := list(_STATEMENT.finditer(q)))]
    objects = _named_objects(cfg.encoded_objects, [m.group(0) for m in statements])
    universe = Task(model, "stated", {o: frozenset() for o in objects}, frozenset(), frozenset())
    reader = StateReader(cfg, universe)
    files: dict[str, str | bytes] = {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != "SOURCE.json" and p.parent.name != "instances"
    }
    for ident, query in queries.items():
        found = list(_STATEMENT.finditer(query))
        if not found:
            return None
        # a goal stating a fact twice is kept so (its PDDL listed it twice): rendered twice, judged as a set
        init, goal = reader.read(found[-1].group("init")), reader.read(found[-1].group("goal"), repeated=True)
        if not init or not goal:
            return None
        objects = sorted({o for fact in (*init, *goal) for o in fact[1:]})
        lines = [f"(define (problem stated-{ident})", f"(:domain {model.name})", f"(:objects {' '.join(objects)} )",
                 "(:init", *(f"({' '.join(f)})" for f in init), ")", "(:goal", "(and",
                 *(f"({' '.join(f)})" for f in goal), ")", ")", ")"]
        files[f"instances/instance-{ident}.pddl"] = "\n".join(lines) + "\n"
    name = folder.name.rsplit("-", 1)[0]
    return write_folder(f"{name}-stated", files, into, {"problems_from": str(path), "rest": str(folder)})


def _named_objects(encoded: Mapping[str, str], texts: list[str]) -> list[str]:
    """The objects a config's `encoded_objects` can name in `texts`: each whole-name key ("a" -> "red block"),
    and for a numbered template ("o" -> "object_{}", PlanBench's obfuscated configs, `obfuscator.py:111`) every
    number the texts give it, as PlanBench wrote it (`pddl_to_text.py:18`: "o1" -> "object_1")."""
    found: set[str] = set()
    for key, template in encoded.items():
        if "{}" not in template:
            found.add(key)
            continue
        pattern = re.compile(r"(?<!\w)" + r"(\d+)".join(map(re.escape, template.split("{}"))) + r"(?!\w)")
        found.update(key + "".join(m.groups()) for text in texts for m in pattern.finditer(text))
    return sorted(found)
