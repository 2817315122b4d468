"""Where a PlanBench results file's problems are in a PlanBench checkout, as a PDDL domain folder of ours.

PlanBench (karthikv792/LLMs-Planning) has two layouts, `llm_planning_analysis/` and `plan-bench/`, each with
`configs/NAME.yaml` (the domain's English templates and, in `domain_file`, `instance_dir` and
`generalized_instance_dir`, where its PDDL lives under `instances/`). A results file names its domain in a field
that changed over PlanBench's history ("blocksworld_zero_shot_3", "mystery/generated_basic", "blocksworld_new");
`planbench_name` maps those to the config's name, and `find_source` finds the config in the file's own layout
first. `materialize` lays the source out as the PDDL domain folder every planning domain of ours reads
(domain.pddl, config.yaml, instances/, generated/), once per distinct content, atomically: a folder is either
complete or absent.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from critiquebench.importers.planbench.file import ImportError_

LAYOUTS = ("llm_planning_analysis", "plan-bench")
# Names PlanBench's results files use for a config of another name.
ALIASES = {"mystery": "mystery_blocksworld", "blocksworld_new": "blocksworld_hard"}
# PlanBench configs that are a shipped domain on another problem set (the same PDDL and English templates; their
# 3-block problems are in a checkout's instances/*/generated_basic_3, given by --instances DIR or --planbench ROOT).
SHIPPED_AS = {"blocksworld_3": "blocksworld", "mystery_blocksworld_3": "mystery_blocksworld"}
# The English keys a config needs for natural-language prompts (`templates.REQUIRED_KEYS`).
NL_KEYS = ("domain_intro", "actions", "predicates", "encoded_objects")


@dataclass(frozen=True)
class Source:
    """One PlanBench domain configuration and its PDDL, inside a checkout."""

    name: str  # the config's name ("blocksworld_3")
    layout: Path  # the layout folder holding configs/ and instances/
    config_path: Path
    config: Mapping[str, Any]
    domain_file: Path
    instance_dir: Path
    generalized_dir: Path | None

    @property
    def has_nl(self) -> bool:
        return all(key in self.config for key in NL_KEYS)


def planbench_name(field: str) -> str:
    """The config name a results file's `domain` field stands for ("blocksworld_zero_shot_3" -> "blocksworld_3",
    "blocksworld/generated_basic_3" -> "blocksworld_3", "mystery/generated_basic" -> "mystery_blocksworld")."""
    head, _, rest = field.partition("/")
    head = ALIASES.get(head, head)
    suffix = "_3" if rest.endswith("_3") else ""
    head = head.replace("_zero_shot", "")
    return head if head.endswith(suffix) else head + suffix


def shipped_name(field: str) -> str:
    """The shipped domain (`domains.registry`) a results file's `domain` field runs on: "mystery/generated_basic"
    -> "mystery_blocksworld", "blocksworld_3" -> "blocksworld"; any other name as `planbench_name` gives it."""
    name = planbench_name(field)
    return SHIPPED_AS.get(name, name)


def layouts(root: Path) -> list[Path]:
    """The layout folders of checkout `root` (the repository, or one layout folder itself)."""
    root = Path(root)
    if (root / "configs").is_dir() and (root / "instances").is_dir():
        return [root]
    found = [root / name for name in LAYOUTS if (root / name / "configs").is_dir()]
    if not found:
        raise ImportError_(
            f"{root}: not a PlanBench checkout (no configs/ and instances/ here, nor in "
            f"{' or '.join(LAYOUTS)}/)"
        )
    return found


def checkout_above(results_file: Path) -> Path | None:
    """The PlanBench checkout layout (a folder with configs/ and instances/) a results file lies in, if any."""
    for parent in Path(results_file).resolve().parents:
        if (parent / "configs").is_dir() and (parent / "instances").is_dir():
            return parent
    return None


def find_source(root: Path, results_file: Path, domain_field: str, queries: Sequence[str] = ()) -> Source:
    """The config and PDDL of `results_file` (whose `domain` field is `domain_field`) in checkout `root`.

    The two layouts' configs of one name differ in wording (`plan-bench/configs/blocksworld_3.yaml` has the
    `domain_intro_cost` task 2 asks with, `llm_planning_analysis/`'s has not): the file's own layout comes first;
    a file copied out of the checkout takes first the layout whose config opens most of its recorded `queries`."""
    found = layouts(root)
    resolved = Path(results_file).resolve()
    names = [planbench_name(domain_field)]
    own = [lay for lay in found if lay.resolve() in resolved.parents]
    opened = {lay: _opens(lay / "configs" / f"{names[0]}.yaml", queries) for lay in found} if not own else {}
    found.sort(key=lambda lay: (0 if lay in own else 1, -opened.get(lay, 0)))
    for parent in list(resolved.parents)[:3]:  # results/DOMAIN/ENGINE/file.json, or results/DOMAIN/file.json
        names.append(planbench_name(parent.name))
    tried: list[str] = []
    for name in dict.fromkeys(names):
        for layout in found:
            path = layout / "configs" / f"{name}.yaml"
            if not path.is_file():
                continue
            tried.append(str(path))
            source = _source(name, layout, path)
            if source is not None:
                return source
    wanted = ", ".join(dict.fromkeys(names))
    raise ImportError_(
        f"{results_file}: PlanBench's checkout {root} has no problems for domain {domain_field!r} (looked for "
        f"configs named {wanted}" + (f"; {', '.join(tried)} name(s) no instance folder there" if tried else "")
        + ")"
    )


def _opens(config: Path, queries: Sequence[str]) -> int:
    """How many of `queries` open with one of `config`'s intros (its `domain_intro*` texts); 0 for a config that
    cannot be read (`_source` then says why)."""
    try:
        raw = yaml.safe_load(config.read_text(encoding="utf-8")) if config.is_file() else None
    except (OSError, yaml.YAMLError, UnicodeDecodeError):
        return 0
    if not isinstance(raw, dict):
        return 0
    intros = [v.strip() for k, v in raw.items() if str(k).startswith("domain_intro") and isinstance(v, str)]
    return sum(any(q.strip().startswith(i) for i in intros if i) for q in queries)


def _source(name: str, layout: Path, path: Path) -> Source | None:
    try:
        config = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError, UnicodeDecodeError) as exc:
        raise ImportError_(f"{path}: cannot read PlanBench's config: {exc}") from None
    if not isinstance(config, dict):
        raise ImportError_(f"{path}: not a PlanBench config (a YAML mapping)")
    keys = [config.get(k) for k in ("domain_file", "instance_dir")]
    if not all(isinstance(k, str) and ".." not in k for k in keys):
        return None
    instances = layout / "instances"
    domain_file, instance_dir = instances / keys[0], instances / keys[1]
    if not domain_file.is_file() or not instance_dir.is_dir():
        return None
    general = config.get("generalized_instance_dir")
    generalized = instances / general if isinstance(general, str) and ".." not in general else None
    if generalized is not None and not generalized.is_dir():
        generalized = None
    return Source(name, layout, path, config, domain_file, instance_dir, generalized)


def materialize(source: Source, into: Path) -> Path:
    """`source` as a PDDL domain folder under `into` (created once per content; an existing one is reused)."""
    files = {rel: path.read_bytes() for rel, path in _files(source).items()}
    note = {"planbench_config": str(source.config_path), "instances": str(source.instance_dir)}
    return write_folder(source.name, files, into, note)


def write_folder(name: str, files: Mapping[str, str | bytes], into: Path, note: Mapping[str, str]) -> Path:
    """`files` (relative path -> content) as the folder `into/NAME-DIGEST` of their content, written atomically
    (an existing one is reused); `note` (where they came from) goes to its SOURCE.json."""
    data = {rel: c.encode("utf-8") if isinstance(c, str) else c for rel, c in files.items()}
    digest = hashlib.sha256()
    for rel, content in sorted(data.items()):
        digest.update(rel.encode() + b"\0" + content + b"\0")
    target = Path(into) / f"{name}-{digest.hexdigest()[:12]}"
    if target.is_dir():
        return target
    Path(into).mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=into))
    try:
        for rel, content in data.items():
            dest = staging / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(content)
        (staging / "SOURCE.json").write_text(json.dumps(dict(note), indent=1))
        os.replace(staging, target)
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
        if not target.is_dir():  # another importer may have finished the same folder first
            raise
    return target


def _files(source: Source) -> dict[str, Path]:
    files = {"domain.pddl": source.domain_file}
    # PDDL-only configs (Sokoban, Blocksworld-hard) carry no English: they stay out, so prompts are PDDL
    files["config.yaml" if source.has_nl else "planbench_config.yaml"] = source.config_path
    for path in source.instance_dir.glob("*.pddl"):
        files[f"instances/{path.name}"] = path
    if source.generalized_dir is not None:
        for path in source.generalized_dir.glob("*.pddl"):
            files[f"generated/{path.name}"] = path
    # PlanBench's Fast Downward plans of the 4-5-block set (info.json beside generated_basic/)
    info = source.instance_dir.parent / "info.json"
    if source.instance_dir.name == "generated_basic" and info.is_file():
        files["optimal_plans.json"] = info
    return files


def domains_folder(store: Path | str) -> Path:
    """Where domain folders laid out from a PlanBench checkout live: beside a store file, else in the working
    directory (a Postgres store)."""
    text = str(store)
    base = Path.cwd() if "://" in text else Path(text).expanduser().resolve().parent
    return base / "planbench-domains"


def with_problems(shipped: Path, name: str, problems: Path, into: Path) -> Path | None:
    """A PlanBench set that does not ship (`blocksworld_3`) as the domain folder `into/NAME-DIGEST`: the shipped
    domain's PDDL and English config with the problems of `problems` (--instances DIR), laid out as a checkout's
    config is, so reports name the set (`reports.metrics.shown_domains`) rather than the shipped domain. None
    where `problems` holds no PDDL problem (the import then names that folder in its error)."""
    found = sorted(Path(problems).glob("*.pddl"))
    if not found:
        return None
    files: dict[str, str | bytes] = {
        rel: (shipped / rel).read_bytes() for rel in ("domain.pddl", "config.yaml") if (shipped / rel).is_file()
    }
    files.update({f"instances/{p.name}": p.read_bytes() for p in found})
    return write_folder(name, files, into, {"shipped": str(shipped), "instances": str(problems)})
