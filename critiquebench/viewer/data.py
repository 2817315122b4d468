"""What the viewer shows, read from the store (read-only): studies, a study's tables, its runs, a run's rounds.

Every payload is JSON-ready and addressed by a path (`index`, `study/KEY`, `runs/KEY`, `search/KEY`, `run/ROWID`;
KEY is a study's position in the index), the same path the page asks for whether a live server answers it or a
static export wrote it to a file. In a PlanBench plan-verification (t3) domain the model under test is the
verifier: `fp`/`fn` are its own verdicts against the plan's truth.

Run flags answer the papers' questions:
- `fp` (false positive): some round's answer was judged valid by the LLM verifier and invalid by the sound one;
- `fn` (false negative): some round's answer was judged invalid by the LLM verifier and valid by the sound one;
- `worse` (a critique made it worse): a sound-valid answer was followed by a sound-invalid one in the next round;
- `critic` (stopped by the critic): the run stopped on a round the LLM verifier called valid.
A run of an iterative scheme also carries its class in the stops table (`stop`: accepted_correct, accepted_wrong,
exhausted_correct, exhausted_wrong; `critiquebench.reports.stops`) and `lost_at`, the round its last correct answer
was generated at when it ended wrong; the page lists a class's runs from these.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from pathlib import Path
from typing import Any

import sqlite_utils

from critiquebench.reports.export import list_studies
from critiquebench.reports.metrics import budget_curve, row_dict, table1, table2
from critiquebench.reports.paired import compare_rows
from critiquebench.reports.planbench import is_task_study, task_rows
from critiquebench.reports.stops import classify, stop_rows
from critiquebench.store.db import query_only, table_names
from critiquebench.store.reads import (
    call_timings,
    calls_answered_with,
    calls_by_key,
    round_calls,
    round_texts,
    run_by_id,
    run_flags,
    run_rounds,
    runs_with_ids,
    study_call_keys,
    study_progress,
    study_rounds,
)
from critiquebench.studies.config import NAME_RE
from critiquebench.studies.define import study_config
from critiquebench.studies.threads import spec_of
from critiquebench.viewer import filters

FLAGS = ("fp", "fn", "worse", "critic")

RUN_COLUMNS = ("id", "domain", "scheme", "instance", "trial", "status", "correct", "rounds", "tokens", "calls",
               "hits", "answer", *FLAGS, "scheme_name", "seconds", "stop", "lost_at")  # fmt: skip
SNIPPET = 160  # characters of a run's final answer (or error) in the run list
SEARCH_CHARS = 4000  # characters of each round's texts that the search covers


class StoreMissing(FileNotFoundError):
    """The store file to view does not exist."""


def open_readonly(path: Path, live: bool = True) -> sqlite_utils.Database:
    """The store, opened so that nothing the viewer does can write to it (`query_only`; `live` for the served
    viewer); a store of any earlier layout reads as it is (its missing tables are empty). A path that is no
    store: StoreError, worded as for every command."""
    if not Path(path).exists():
        raise StoreMissing(f"no store at {path} (run a study first, or pass --store PATH)")
    return query_only(path, live)


def _clean(value: Any) -> Any:
    return None if isinstance(value, float) and math.isnan(value) else value


def valid_name(name: object) -> bool:
    """Is `name` a study name as `run` accepts it? Checked on every read too: a store written by something
    else (a shared store, a hand edit) may hold any text, and the viewer never trusts it."""
    return isinstance(name, str) and bool(NAME_RE.match(name))


def index(db: sqlite_utils.Database, names: list[str]) -> dict[str, Any]:
    """The studies of the store (only `names` if given, in that order) with their model and progress.

    Each study has a `key`, its position here: pages and exported files are addressed by it, never by the
    stored name. Studies whose stored name is not a valid name are left out and listed in `skipped`."""
    if bad := [n for n in names if not valid_name(n)]:
        raise LookupError(f"not a valid study name: {', '.join(map(repr, bad))} (letters, digits, '_', '.', '-')")
    studies = {s["name"]: s for s in list_studies(db)}
    skipped = [n for n in studies if not valid_name(n)]
    unknown = [n for n in names if n not in studies]
    if unknown:
        known = ", ".join(n for n in studies if valid_name(n)) or "none"
        raise LookupError(f"no study named {', '.join(unknown)} in this store; known studies: {known}")
    out = []
    for key, name in enumerate(names or [n for n in studies if valid_name(n)]):
        config = study_config(db, name)
        out.append({**studies[name], "key": key, "model": config.get("model"), "recorded": bool(config.get("replay"))})
    return {"studies": out, "skipped": skipped}


def study_name(db: sqlite_utils.Database, names: list[str], key: str) -> str:
    """The name of the study with `key` (see `index`); LookupError when there is none."""
    studies = index(db, names)["studies"]
    if not key.isdigit() or int(key) >= len(studies):
        raise LookupError(f"no study {key}")
    return str(studies[int(key)]["name"])


def study(db: sqlite_utils.Database, name: str) -> dict[str, Any]:
    """A study's definition and report tables (Table 1 with intervals, Table 2, Figure 2 points)."""
    config = shown_config(study_config(db, name))
    progress = study_progress(db, name)
    if config.get("kind") == "verify":
        from critiquebench.reports.catalog import report_rows

        return {"name": name, "kind": "verify", "config": config, "progress": progress,
                "verify": [row_dict(r) for r in report_rows(db, name, "1")]}  # fmt: skip
    return {
        "name": name,
        "kind": config.get("kind", "loop"),
        "config": config,
        "progress": progress,
        "table1": [row_dict(r) for r in table1(db, name)],
        "table2": [row_dict(r) for r in table2(db, name)],
        "figure": [row_dict(r) for r in budget_curve(db, name)],
        # paired comparisons of its schemes, and why each loop stopped (reports.paired, reports.stops)
        "compare": [row_dict(r) for r in compare_rows(db, name)],
        "stops": [row_dict(r) for r in stop_rows(db, name)],
        # PlanBench tasks: accuracy per task and, for plan verification (t3), the model as verifier
        "tasks": [row_dict(r) for r in task_rows(db, name)] if is_task_study(config) else [],
    }


_SECRET_NAME = re.compile(r"api[_-]?key|secret|passw|authoriz|credential|^token$", re.IGNORECASE)


def shown_config(config: dict[str, Any]) -> dict[str, Any]:
    """A study's definition as the page may show it (its settings panel): a setting named like a secret is left
    out and every URL redacted (`redact_url`). The store already holds only redacted URLs and never a key; a
    store written by something else need not, and the page is no place to find out."""
    from critiquebench.llm.urls import redact_url

    def clean(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items() if not _SECRET_NAME.search(str(k))}
        if isinstance(value, list):
            return [clean(v) for v in value]
        return redact_url(value) if isinstance(value, str) and "://" in value else value

    return clean(config)  # type: ignore[no-any-return]


def verifier_tasks(config: dict[str, Any]) -> list[str]:
    """The study's domains that are PlanBench's plan verification task (t3)."""
    from critiquebench.reports.planbench import split_task

    return [d for d in config.get("domains", []) if (t := split_task(d, config)) and t[1] == "t3"]


def said_and_truth(canonical: str | None) -> tuple[bool | None, bool | None]:
    """(the verifier said valid, the plan is valid) of a t3 round's parsed answer; None where unknown."""
    try:
        parsed = json.loads(canonical or "")
        said, truth = parsed["said"]["valid"], parsed["truth"]["valid"]
    except (ValueError, TypeError, KeyError):
        return None, None
    return (said if isinstance(said, bool) else None), (truth if isinstance(truth, bool) else None)


def _words(valid: bool | None) -> str:
    return "no verdict" if valid is None else "valid" if valid else "invalid"


def _snippet(text: str | None) -> str:
    return " ".join((text or "").split())[:SNIPPET]


def runs(db: sqlite_utils.Database, name: str) -> dict[str, Any]:
    """Every run of a study as compact rows (`columns` names the fields), flags included.

    `fp`/`fn`: some round's LLM verdict was valid on a sound-invalid answer / invalid on a sound-valid one; in a
    plan verification (t3) domain, the model's own verdict against the plan's truth. `answer` is the start of
    the final answer (t3: "said X · truth Y"), or of the error of a failed run."""
    config = study_config(db, name)
    flags = run_flags(db, name)
    t3: dict[str, tuple[bool | None, bool | None]] = {}
    for domain in verifier_tasks(config):
        t3.update((a["thread_id"], said_and_truth(a["canonical"]))
                  for a in study_rounds(db, name, stopped_only=True, domain=domain))  # fmt: skip
    seconds = _run_seconds(db, name)
    stops = {s.thread_id: s for s in classify(db, name)[0]}
    rows = []
    for r in runs_with_ids(db, name, chars=4 * SNIPPET):
        fp, fn, worse, critic = flags.get(r["thread_id"], (0, 0, 0, 0))
        answer = _snippet(r["error"] if r["status"] == "failed" else r["final_answer"])
        if r["thread_id"] in t3:
            said, truth = t3[r["thread_id"]]
            fp, fn = int(said is True and truth is False), int(said is not True and truth is True)
            answer = f"said {_words(said)} · truth {_words(truth)}"
        rows.append([r["id"], r["domain"], spec_of(r), r["instance_id"], r["trial"], r["status"],
                     r["correct"], r["rounds"], r["prompt_tokens"] + r["completion_tokens"], r["llm_calls"],
                     r["cache_hits"], answer, fp, fn, worse, critic, spec_of(r).split(":", 1)[0],
                     seconds.get(r["thread_id"]), stop.stop if (stop := stops.get(r["thread_id"])) else None,
                     stop.lost_at if stop else None])  # fmt: skip
    # the filter box's fields and operators (`filters`): the page parses a filter against these only
    fields = [[f.name, f.column, f.type] for f in filters.FIELDS]
    return {"study": name, "columns": list(RUN_COLUMNS), "rows": rows, "verifier_domains": verifier_tasks(config),
            "fields": fields, "operators": [o.op for o in filters.OPERATORS],
            "filter_limits": {"chars": filters.MAX_CHARS, "depth": filters.MAX_DEPTH}}  # fmt: skip


def _run_seconds(db: sqlite_utils.Database, name: str) -> dict[str, float]:
    """thread id -> seconds its recorded calls took when they were made (a cache hit counts the seconds of the
    call it reuses); runs with no timed call (none recorded, or all imported from others' records) are left out."""
    keys = study_call_keys(db, name)
    timings = call_timings(db, [k for ks in keys.values() for k in ks])
    out = {}
    for tid, ks in keys.items():
        timed = [s for k in ks if k in timings and (s := timings[k][0]) is not None]
        if timed:
            out[tid] = round(sum(timed), 3)
    return out


def search(db: sqlite_utils.Database, name: str) -> dict[str, Any]:
    """What the run list's filter searches (its `text` field): per run, the start (`SEARCH_CHARS`) of each
    round's answer, parsed answer, critique and feedback and of the run's error; every distinct text once
    (`texts`), and per run the indices of its texts (`runs`: [[run id, [index, ...]], ...])."""
    study_config(db, name)
    texts: dict[str, int] = {}
    per_run: dict[int, list[int]] = {}
    for rowid, *found in round_texts(db, name, SEARCH_CHARS):
        mine = per_run.setdefault(rowid, [])
        for text in found:
            if text:
                index = texts.setdefault(text, len(texts))
                if index not in mine:
                    mine.append(index)
    return {"texts": list(texts), "runs": [[k, v] for k, v in per_run.items()]}


Messages = list[dict[str, str]]
Prompts = dict[str, list[Messages]]  # answer text -> message lists of the cached calls that returned it


MAX_ROWID = 2**63 - 1  # SQLite's
# A text longer than LONG goes out as its first HEAD characters and a reference (`{"long": REF, "head": ...,
# "length": N}`); the page loads the whole text (`text/REF`) when asked. A 5 MB answer then costs a transcript
# 2,000 characters, not 5 MB in every round and every later prompt that repeats it.
LONG, HEAD = 20_000, 2_000
_TEXT_FIELDS = ("answer", "canonical", "feedback", "llm_critique", "sound_reason")


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def run(db: sqlite_utils.Database, rowid: int, prompts: Prompts | None = None, studies: list[str] | None = None,
        texts: dict[str, str] | None = None, full: bool = False) -> dict[str, Any]:  # fmt: skip
    """One run with its rounds in order: each round's answer, parsed answer, verdicts, feedback, the sound
    verifier's reason, and every LLM call its graph nodes made (`calls`: node, messages, reply) when recorded;
    else the generator's messages found by its answer (`prompts`: answer text -> messages, looked up when not
    given). With `studies`, only a run of one of them is shown.

    Texts longer than `LONG` are cut (see `LONG`): their reference is `ROWID/DIGEST`, or with `texts` (the static
    export) `DIGEST`, the whole text being added to `texts`. `full` keeps every text whole."""
    row = run_by_id(db, rowid) if rowid <= MAX_ROWID else None
    if row is None or (studies is not None and row["study"] not in studies):
        raise LookupError(f"no run {rowid}")
    rounds = run_rounds(db, row["thread_id"])
    steps = _round_calls(db, row["thread_id"])
    missing = [a["answer"] for a in rounds
               if a["answer"] and not any(c["node"] == "generator" for c in steps.get(a["round"], {}).get("calls", []))]
    if prompts is None:
        prompts = prompts_for(db, missing) if missing and has_cache(db) else {}
    earlier: list[str] = []
    for attempt in rounds:
        step = steps.get(attempt["round"], {})
        attempt["calls"] = calls = step.get("calls", [])
        attempt["sound_reason"] = step.get("reason")
        mine = next((c["messages"] for c in calls if c["node"] == "generator" and c["messages"]), None)
        attempt["prompt"] = mine or _best_prompt(prompts.get(attempt["answer"] or "", []), earlier)
        earlier.append(attempt["answer"] or "")  # a run that failed before its first round has none
    info = {k: _clean(v) for k, v in row.items()}
    info["scheme"] = spec_of(row)
    # the model under test is a plan verifier: the page shows its verdict against the truth
    info["verifier_task"] = row["domain"] in verifier_tasks(study_config(db, row["study"]))
    out = {"run": info, "rounds": rounds}
    return out if full else _shorten(out, rowid, texts)


def _round_calls(db: sqlite_utils.Database, thread_id: str) -> dict[int, dict[str, Any]]:
    """round -> {"calls": [{"node", "messages", "reply", "seconds", "prompt_tokens", "completion_tokens"} of
    every call, in order], "reason": the sound verifier's reason}; a call that left the cache has None there.
    `seconds` is how long the call took when it was made (a replayed or reused call keeps the recorded one's)."""
    rows = round_calls(db, thread_id)
    keys = [k for _, _, calls, _ in rows for k in json.loads(calls)]
    cached: dict[str, tuple[Any, str]] = {}
    if keys and has_cache(db):
        cached.update((k, (m, r)) for k, m, r in calls_by_key(db, keys))
    timings = call_timings(db, keys) if keys else {}
    out: dict[int, dict[str, Any]] = {}
    for round_, node, calls, reason in rows:
        step = out.setdefault(round_, {"calls": [], "reason": None})
        for key in json.loads(calls):
            messages, reply = cached.get(key, (None, None))
            seconds, prompt_tokens, completion_tokens = timings.get(key, (None, None, None))
            step["calls"].append({"node": node, "messages": messages, "reply": reply, "seconds": seconds,
                                  "prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens})  # fmt: skip
        step["reason"] = step["reason"] or reason
    return out


def _shorten(payload: dict[str, Any], rowid: int, texts: dict[str, str] | None) -> dict[str, Any]:
    def cut(text: Any) -> Any:
        if not isinstance(text, str) or len(text) <= LONG:
            return text
        key = digest(text)
        if texts is not None:
            texts[key] = text
        return {"long": key if texts is not None else f"{rowid}/{key}", "head": text[:HEAD], "length": len(text)}

    def cut_messages(messages: Messages | None) -> Any:
        return None if messages is None else [{**m, "content": cut(m.get("content"))} for m in messages]

    info = payload["run"]
    info["final_answer"], info["error"] = cut(info.get("final_answer")), cut(info.get("error"))
    for attempt in payload["rounds"]:
        for name in _TEXT_FIELDS:
            attempt[name] = cut(attempt.get(name))
        attempt["prompt"] = cut_messages(attempt.get("prompt"))
        for call in attempt["calls"]:
            call["messages"], call["reply"] = cut_messages(call["messages"]), cut(call["reply"])
    return payload


def text(db: sqlite_utils.Database, rowid: int, key: str, studies: list[str] | None = None) -> str:
    """The whole text of run `rowid` whose digest is `key` (what `run` cut)."""
    payload = run(db, rowid, studies=studies, full=True)
    for attempt in payload["rounds"]:
        candidates = [attempt.get(name) for name in _TEXT_FIELDS] + [payload["run"].get("error")]
        for messages in [attempt.get("prompt") or [], *[c["messages"] or [] for c in attempt["calls"]]]:
            candidates += [m.get("content") for m in messages]
        candidates += [c["reply"] for c in attempt["calls"]]
        for found in candidates:
            if isinstance(found, str) and len(found) > LONG and digest(found) == key:
                return found
    raise LookupError(f"no text {key} in run {rowid}")


def _best_prompt(candidates: list[Messages], earlier: list[str]) -> Messages | None:
    """Of the cached calls that returned a round's answer, the one whose history is the run's earlier answers.

    Two rounds (or runs) can return the same text from different prompts; the round's own call carries the
    run's earlier answers as its assistant turns (all of them, or only the last with history=last)."""
    def fit(messages: Messages) -> tuple[bool, bool, int]:
        said = [m["content"] for m in messages if m.get("role") == "assistant"]
        return (said == earlier, bool(said) and said == earlier[-1:], -abs(len(said) - len(earlier)))

    return max(candidates, key=fit) if candidates else None


def prompts_for(db: sqlite_utils.Database, answers: list[str]) -> Prompts:
    """Message lists of cached calls whose response is one of `answers` (the generation calls of those rounds)."""
    out: Prompts = {}
    for response, messages in calls_answered_with(db, answers):
        out.setdefault(response, []).append(messages)
    return out


def has_cache(db: sqlite_utils.Database) -> bool:
    return "llm_calls" in table_names(db)
