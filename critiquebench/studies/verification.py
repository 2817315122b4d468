"""Verification-only studies: how well does the LLM judge answers whose correctness we know?

For every instance, candidate answers of each kind the domain makes (`domain.candidate_kinds`: correct,
ablated, non-optimal, random, ...) and, with `--from-study`, answers an earlier study's LLM produced (kind
"llm": every distinct one, or `llm_per_instance` drawn at random from each instance's answers of every round,
as the study drew one of GPT-4's backprompting responses per puzzle; `llm_instances` narrows the instances)
go through the domain's LLM-verifier prompt (via the LLM client, so they are cached) and through the
sound verifier. Results live in `verify_results` (one row per judged answer; a rerun skips judged ones), and
`report NAME` shows accuracy / FPR / FNR per kind (Tables A2-A4 style) and, with `--table 2`, critique quality
(graph colouring: hallucinated edges and vertex colours; planning: does the critique name the real error).
"""

from __future__ import annotations

import json
import logging
import random
import threading
from collections import defaultdict
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlite_utils

from critiquebench.domains import call_options
from critiquebench.domains.base import judging, read_judgement, split_kind, verification_messages
from critiquebench.domains.contract import Domain, Instance, Judged, Messages, VerifyVariant, verify_purpose
from critiquebench.domains.datasets import default_root
from critiquebench.domains.study_files import candidates
from critiquebench.store.db import Store, connect, is_readonly, table_names
from critiquebench.store.reads import study_rounds
from critiquebench.store.results import load_study, save_study
from critiquebench.store.verify import ensure_verify_schema, judged_keys, save_verify_result
from critiquebench.studies.config import VERIFY, ConfigError, StudyConfig, split_list
from critiquebench.studies.critique_quality import classify_critique
from critiquebench.studies.estimate import Estimate, estimate_calls

log = logging.getLogger(__name__)

LLM_KIND = "llm"  # kind of answers taken from an earlier study's attempts

@dataclass(frozen=True)
class Item:
    domain: Domain
    instance: Instance
    kind: str  # as stored and reported: the candidate kind with the variant's suffix ("correct-no-info")
    idx: int
    source: str
    text: str
    variant: VerifyVariant = "default"


def ready_store(db: Store) -> None:
    """Make the tables a verification study uses (a read-only store stays as it is)."""
    if not is_readonly(db):
        ensure_verify_schema(db)


def study_kinds(config: StudyConfig, domain: Domain) -> list[tuple[str, str, VerifyVariant]]:
    """(stored kind, candidate kind, prompt variant) of every kind the study judges in `domain`; `--cot`
    turns unsuffixed kinds into their "-cot" variant."""
    out = []
    for kind in config.kinds_for(domain.name) or tuple(domain.candidate_kinds):
        base, variant = split_kind(kind)
        if config.cot and variant == "default":
            variant = "cot"
        out.append((base if variant == "default" else f"{base}-{variant}", base, variant))
    return out


def make_items(config: StudyConfig, db: sqlite_utils.Database, pending_ok: bool = False) -> list[Item]:
    """Every answer the study judges: generated candidates, then the earlier study's answers.

    With `pending_ok` (a dry run) and an earlier study that is not in the store yet, each of its answers to
    come (`llm_per_instance` per instance) is an item with an empty text and source "pending:STUDY"."""
    from critiquebench.domains import get_domain, load_instances

    earlier: dict[str, dict[tuple[str, str], list[str]]] = {}  # per earlier study: its answers, read once
    items: list[Item] = []
    used: set[str] = set()  # a kind one domain cannot make or ask (e.g. coloring no-info) is left to the others
    for name in config.domains:
        try:
            domain = get_domain(name, **config.domain_options.get(name, {}))
            dataset = Path(config.dataset) if config.dataset else None
            instances = load_instances(domain, config.instances[name], dataset)
            llm_selection = config.llm_instances.get(name)
            llm_instances = load_instances(domain, llm_selection, dataset) if llm_selection else instances
        except (ValueError, OSError, LookupError, TypeError) as exc:
            raise ConfigError(f"domain {name!r}: {exc}") from exc
        kinds = [k for k in study_kinds(config, domain) if _asks(domain, instances, *k[1:])]
        used.update(kind for kind, _, _ in kinds)
        files = _candidate_files(config, name)
        for inst in instances:
            given = candidates(files, inst.id) if files else {}
            made: dict[tuple[str, int], str] = {}  # (kind, idx) -> its candidate, made once for all its variants
            for kind, base, variant in kinds:
                if base == LLM_KIND:
                    continue
                for idx in range(config.per_kind):
                    if base in given and idx == 0:  # the study's own candidate
                        items.append(Item(domain, inst, kind, idx, f"file:{files.name}", given[base], variant))
                        continue
                    # The same candidate for every variant of a kind, as in the study's files: drawn once.
                    text = made.get((base, idx))
                    if text is None:
                        rng = random.Random(f"{config.seed}/{domain.name}/{inst.id}/{base}/{idx}")
                        text = made[base, idx] = domain.candidate(inst, base, rng)
                    items.append(Item(domain, inst, kind, idx, "candidate", text, variant))
        if files and not config.from_study_for(name) and any(base == LLM_KIND for _, base, _ in kinds):
            # The study's llm answers, from its files: one per instance that has one.
            for inst in llm_instances:
                text = candidates(files, inst.id).get(LLM_KIND)
                for variant in (_llm_variants(config.kinds_for(name), kinds) if text is not None else []):
                    kind = LLM_KIND if variant == "default" else f"{LLM_KIND}-{variant}"
                    items.append(Item(domain, inst, kind, 0, f"file:{files.name}", text, variant))
        if not (from_study := config.from_study_for(name)):
            continue
        pending = from_study not in earlier and load_study(db, from_study) is None
        if pending and not (pending_ok and config.llm_per_instance > 0):
            raise ConfigError(f"--from-study {from_study!r}: no such study in this store (run it first)")
        if pending and config.llm_instances and name not in config.llm_instances and isinstance(
                config.from_study, str):  # fmt: skip
            continue  # an earlier study still to run is expected to answer the domains llm_instances names
        if not pending and from_study not in earlier:
            earlier[from_study] = _earlier_answers(db, from_study)
        llm_variants = _llm_variants(config.kinds_for(name), kinds)
        for inst in llm_instances:
            if pending:
                texts, source = [""] * config.llm_per_instance, f"pending:{from_study}"
            else:
                answers = earlier[from_study].get((domain.name, inst.id), [])
                texts, source = _pick_answers(config, from_study, domain.name, inst.id, answers)
            for idx, text in enumerate(texts):
                for variant in llm_variants:
                    kind = LLM_KIND if variant == "default" else f"{LLM_KIND}-{variant}"
                    items.append(Item(domain, inst, kind, idx, source, text, variant))
    asked = {kind for d in config.domains for kind, _, _ in study_kinds(config, get_domain(d))}
    if unused := sorted(asked - used):
        raise ConfigError(f"no domain of the study makes or can ask the kind(s) {', '.join(unused)}; kinds are "
                          "a domain's candidate kinds (or llm) with an optional -cot or -no-info suffix")  # fmt: skip
    return items


def _candidate_files(config: StudyConfig, domain: str) -> Path | None:
    """The study's candidate files for `domain` (`candidate_files`, relative to the dataset root), or None."""
    given = config.candidate_files.get(domain)
    if not given:
        return None
    path = Path(given).expanduser()
    if not path.is_absolute():
        path = (Path(config.dataset) if config.dataset else default_root()) / path
    if not path.exists():
        raise ConfigError(f"candidate_files for {domain}: {path} does not exist")
    return path


def _llm_variants(given: tuple[str, ...], kinds: list[tuple[str, str, VerifyVariant]]) -> list[VerifyVariant]:
    """The prompts an earlier study's answers go through: those of the llm kinds ("llm", "llm-cot") among the
    kinds `given` for the domain when it names any, else every prompt the study uses there."""
    named = [variant for _, base, variant in kinds if base == LLM_KIND]
    if any(split_kind(k)[0] == LLM_KIND for k in given):
        return list(dict.fromkeys(named))
    return list(dict.fromkeys(v for _, _, v in kinds)) or ["default"]


def _pick_answers(config: StudyConfig, from_study: str, domain: str, instance_id: str, answers: list[str]
                  ) -> tuple[list[str], str]:  # fmt: skip
    """An instance's earlier answers (of study `from_study`) to judge: every distinct one, or `llm_per_instance`
    drawn at random (with the study's seed) from the answers of every round, repeats included, as the study
    drew one response."""
    source = f"study:{from_study}"
    if config.llm_per_instance <= 0 or not answers:
        return list(dict.fromkeys(answers)), source
    rng = random.Random(f"{config.seed}/{domain}/{instance_id}/{LLM_KIND}")
    return [rng.choice(answers) for _ in range(config.llm_per_instance)], source


def _asks(domain: Domain, instances: list[Instance], base: str, variant: VerifyVariant) -> bool:
    """Does `domain` make candidates of kind `base` and have a prompt for `variant`?"""
    if base not in (*domain.candidate_kinds, LLM_KIND):
        return False
    try:
        if instances:
            verification_messages(domain, instances[0], "", variant)
    except ValueError:
        return False
    return True


def estimate_verify(db: sqlite_utils.Database, config: StudyConfig, store: Path) -> Estimate:
    """What judging the study's answers not judged yet costs (see `critiquebench.studies.estimate`)."""
    from critiquebench.llm.client import LLMSettings

    settings = LLMSettings(model=config.model, base_url=config.base_url, temperature=config.temperature,
                           max_tokens=config.max_tokens, endpoint_id=config.endpoint_id)  # fmt: skip
    done = judged_keys(db, config.name) if "verify_results" in table_names(db) else set()
    items = make_items(config, db, pending_ok=True)
    todo = [i for i in items if (i.domain.name, i.instance.id, i.kind, i.idx) not in done]
    # once per domain: a capability check (`isinstance` on a Protocol) per answer was a tenth of a dry run
    options = {key: call_options(domain) for key, domain in {id(i.domain): i.domain for i in todo}.items()}
    asked = [i for i in todo if not _pending(i)]
    known = zip(_messages(asked), (options[id(i.domain)] for i in asked), strict=True)
    unknown = _messages([i for i in todo if _pending(i)])
    return estimate_calls(known, config.model, settings.endpoint(), settings.sampling_params(), store,
                          len(items), len(items) - len(todo), unknown, answer_counts(items))  # fmt: skip


def _messages(items: list[Item]) -> Iterator[Messages]:
    """`verification_messages` of each item, the domain's ability to judge under the item's variant checked once
    per domain and variant (`judging`)."""
    judges: dict[tuple[int, str], Judged] = {}  # the items hold their domains: an id is not reused meanwhile
    for i in items:
        judge = judges.get((id(i.domain), i.variant))
        if judge is None:
            judge = judges[id(i.domain), i.variant] = judging(i.domain, i.variant)
        yield judge.judge_prompt(i.instance, verify_purpose(i.variant), i.text)


def _pending(item: Item) -> bool:
    return item.source.startswith("pending:")


def answer_counts(items: list[Item]) -> list[str]:
    """One line per domain and prompt: how many answers of each kind it judges (the paper's Table 2 rows and
    their denominators), naming an earlier study whose answers are still to come."""
    by_row: dict[tuple[str, str], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    valid: dict[tuple[str, str], int] = defaultdict(int)
    waiting: dict[tuple[str, str], str] = {}
    sound: dict[tuple[str, str, str], bool] = {}  # every variant judges the same texts: verify each once
    for item in items:
        row = (item.domain.name, item.variant)
        by_row[row][split_kind(item.kind)[0]] += 1
        if _pending(item):
            waiting[row] = item.source.removeprefix("pending:")
            continue
        key = (item.domain.name, item.instance.id, item.text)
        if key not in sound:
            sound[key] = item.domain.verify(item.instance, item.text).valid
        valid[row] += sound[key]
    lines = []
    for (domain, variant), kinds in by_row.items():
        parts = ", ".join(f"{kind} {n}" for kind, n in kinds.items())
        total = sum(kinds.values())
        note = f"; the {LLM_KIND} answers come from study {waiting[(domain, variant)]}, not in the store yet" if (
            (domain, variant) in waiting) else ""  # fmt: skip
        split = "" if note else f": {total - valid[(domain, variant)]} invalid / {valid[(domain, variant)]} valid"
        lines.append(f"{domain}, {variant} prompt: {total} answers ({parts}){split}{note}")
    return lines


def _earlier_answers(db: sqlite_utils.Database, study: str) -> dict[tuple[str, str], list[str]]:
    """Every answer of every round of `study`, per (domain, instance), in run and round order."""
    out: dict[tuple[str, str], list[str]] = defaultdict(list)
    for row in study_rounds(db, study, answered=True):  # by thread id: a run's rounds stay in order
        out[(row["domain"], row["instance_id"])].append(row["answer"])
    return out


def judge(item: Item, llm: Any) -> dict[str, Any]:
    """One answer through the LLM verifier and the sound verifier; the row to store."""
    sound = item.domain.assess(item.instance, item.text)[0]
    row: dict[str, Any] = {
        "candidate": item.text,
        "sound_status": sound.status,
        "sound_valid": int(sound.valid),
    }
    messages = verification_messages(item.domain, item.instance, item.text, item.variant)
    done = llm.complete(messages, **call_options(item.domain))  # the domain's stop sequences, if it has any
    judgement = read_judgement(item.domain, item.instance, item.text, done.text, item.variant)
    said = judgement.verdict
    right = judgement.evaluation_correct
    row.update(
        evaluation_correct=None if right is None else int(right),
        llm_verdict=int(said.says_valid),
        llm_parsed=int(said.parsed),
        critique=said.critique or done.text,
        prompt_tokens=done.prompt_tokens,
        completion_tokens=done.completion_tokens,
        cached=int(done.cached),
        error=None,
    )
    if not said.says_valid:
        quality = classify_critique(item.domain, item.instance, item.text, sound, row["critique"])
        if quality is not None:
            row.update(quality=quality.label, quality_details=json.dumps(quality.details, sort_keys=True))
    return row


def run_verify(store_path: Path, config: StudyConfig, llm: Any, stop: threading.Event) -> dict[str, int]:
    """Judge every item not judged yet; returns counts of judged, skipped, failed and not started."""
    db = connect(store_path)
    ensure_verify_schema(db)
    done = judged_keys(db, config.name)
    items = [i for i in make_items(config, db) if (i.domain.name, i.instance.id, i.kind, i.idx) not in done]
    counts = {"judged": 0, "skipped": len(done), "failed": 0, "not_started": 0}
    lock = threading.Lock()

    def work(item: Item) -> None:
        if stop.is_set():
            with lock:
                counts["not_started"] += 1
            return
        try:
            row = judge(item, llm)
            key = "judged"
        except Exception as exc:  # recorded and retried by the next run, never fatal for the study
            log.warning("verifying %s/%s failed: %s", item.instance.id, item.kind, exc)
            row, key = {"candidate": item.text, "error": f"{type(exc).__name__}: {exc}"}, "failed"
        ident = dict(study=config.name, domain=item.domain.name, instance_id=item.instance.id,
                     kind=item.kind, idx=item.idx, source=item.source)  # fmt: skip
        with lock:  # one connection for the study; the lock keeps each write's cursor to one thread
            save_verify_result(db, {**ident, **row})
            counts[key] += 1

    try:
        with ThreadPoolExecutor(max_workers=config.concurrency, thread_name_prefix="verify") as pool:
            list(pool.map(work, items))
    finally:
        db.conn.close()
    return counts


def stored_verify_config(db: sqlite_utils.Database, name: str) -> StudyConfig | None:
    data = load_study(db, name)
    if data is None:
        return None
    if data.get("kind") != VERIFY:
        raise ConfigError(f"study {name!r} exists and is not a verification-only study; choose another name")
    return StudyConfig.from_dict(data)


def resolve_config(db: sqlite_utils.Database, config: StudyConfig) -> StudyConfig:
    """Check `config` against a stored study of that name: the same definition resumes; another fails."""
    stored = stored_verify_config(db, config.name)
    if stored is not None and (diff := config.differences(stored)):
        raise ConfigError(f"verification study {config.name!r} exists with a different definition:\n  "
                          + "\n  ".join(diff) + "\nchoose another name")  # fmt: skip
    save_study(db, config.name, config.to_dict())
    return config


def from_study_defaults(db: sqlite_utils.Database, given: dict[str, Any], pending_ok: bool = False
                        ) -> dict[str, Any]:  # fmt: skip
    """What a study judging an earlier study's answers (`from_study` in `given`, the settings given so far)
    takes from that study when not given: its domains, and its instance selections and dataset. With
    `pending_ok` (a dry run) an earlier study not in the store yet gives nothing (its answers are counted as
    still to come)."""
    if not isinstance(given.get("from_study"), str) or not given["from_study"]:
        return {}  # several earlier studies (a table per domain): the study names its own domains
    source = load_study(db, given["from_study"])
    if source is None and pending_ok:
        return {}
    if source is None:
        raise ConfigError(f"--from-study {given['from_study']!r}: no such study in this store (run it first)")
    domains = given.get("domains") or source["domains"]
    if given.get("instances"):
        return {"domains": source["domains"]}
    out: dict[str, Any] = {"domains": source["domains"], "dataset": source.get("dataset")}
    chosen = split_list(domains) if isinstance(domains, str) else domains
    out["instances"] = {d: source["instances"][d] for d in chosen if d in source["instances"]}
    return {k: v for k, v in out.items() if v is not None}
