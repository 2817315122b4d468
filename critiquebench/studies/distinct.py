"""`run --check-distinct`: the guard on a study's generated sets (`gen:N:SEED`). Each set must hold N distinct
problems, none of them in its shot pool (the intrinsic self-critique paper's test sets are sets of 600 or 1000
problems, 001:81-83, and its exemplars come from a training set, 001:130). One line per generated domain says
what it found; a set that fails stops the study before any call.
"""

from __future__ import annotations

import json
from typing import Any

from critiquebench.domains.contract import Instance
from critiquebench.domains.datasets import Generated, parse_selection
from critiquebench.studies.config import StudyConfig


def check_generated(config: StudyConfig) -> list[tuple[bool, str]]:
    """(passed, one line) for every domain of `config` whose selection is generated."""
    from critiquebench.domains import get_domain

    out = []
    for name in config.domains:
        chosen = parse_selection(config.instances[name])
        if not isinstance(chosen, Generated):
            continue
        domain = get_domain(name, **dict(config.domain_options.get(name, {})))
        instances = domain.generate(chosen.n, chosen.seed)
        ok, line = check_instances(name, instances)
        out.append((ok, f"{config.instances[name]}: {line}"))
    return out


def check_instances(name: str, instances: list[Instance]) -> tuple[bool, str]:
    """Whether the instances are distinct problems none of which is in their shot pool, and one line saying so.
    Planning problems compare by `problem_key` (layout and order aside), other domains by their data."""
    from critiquebench.domains.planning.generators import check_distinct

    if all("problem" in i.data for i in instances):  # planning: the set and its shot pool
        pool = {e["id"]: e["problem"] for i in instances for e in i.data.get("train_pool", i.data.get("train", ()))}
        return check_distinct(name, [i.data["problem"] for i in instances], list(pool.values()))
    keys = [_key(i.data) for i in instances]
    if len(set(keys)) < len(keys):
        return False, f"{name}: only {len(set(keys))} distinct problems of the {len(keys)} asked for"
    return True, f"{name}: {len(keys)} distinct problems"


def _key(data: dict[str, Any]) -> str:
    kept = {k: v for k, v in data.items() if k not in ("examples", "train", "train_pool", "source")}
    return json.dumps(kept, sort_keys=True, default=str)
