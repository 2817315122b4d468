"""The verification inputs a study published, read as the study's code read them.

- The self-verification study's candidate files (kstechly/gpt-and-i `data/instances/game24_verification/`,
  `color_verification/`, copied to `../shared/datasets/self_verification/`): a Game of 24 file
  `instance-N.txt` is the puzzle's numbers, then one `KIND TEXT` line per kind; a colouring file
  `instance-N.col` is the graph with `c KIND TEXT` comment lines, each colouring with a literal `\\n` between
  vertices. `game24_verification.generate` / `color_verification.generate` take the text after the kind's
  name and its first line only, so that is what `candidates` returns (the single space after the name is
  the prompts' to add, as they do).
- PlanBench's results files (karthikv792/LLMs-Planning `results/*/gpt-4_chat/task_1_plan_generation.json`,
  copied to `../shared/datasets/planbench/reference/`): GPT-4's raw one-shot answer per instance is the
  `llm` kind of the self-verification study's planning set (000:1947, Tables A5/A6).

Kind names are ours: the colouring files' `non-optimal` is `non_optimal`.
"""

from __future__ import annotations

import json
import threading
from functools import lru_cache
from pathlib import Path

_KIND_NAMES = {"non-optimal": "non_optimal"}
_lock = threading.Lock()


class CandidateFileError(ValueError):
    """A candidate file or folder that cannot be read as the study's format; the message names it."""


def candidates(path: Path, instance_id: str) -> dict[str, str]:
    """{kind: text} of instance `instance_id` in the study's files at `path` (a folder of instance files, or a
    PlanBench results JSON file): empty when the instance has none."""
    with _lock:  # the verification study reads from several threads; the caches are filled once
        return dict(_read(path.resolve()).get(str(instance_id), {}))


@lru_cache(maxsize=16)
def _read(path: Path) -> dict[str, dict[str, str]]:
    if path.is_file() and path.suffix == ".json":
        return _planbench_results(path)
    if path.is_dir():
        out = {}
        for file in sorted(path.glob("instance-*")):
            number = file.stem.removeprefix("instance-")
            if number.isdigit() and file.suffix in (".txt", ".col"):
                out[number] = _instance_file(file)
        if out:
            return out
    raise CandidateFileError(f"{path}: not a folder of the study's instance-N.txt / instance-N.col candidate "
                             "files nor a PlanBench results .json file")


def _instance_file(file: Path) -> dict[str, str]:
    try:
        lines = file.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise CandidateFileError(f"{file}: cannot read: {exc}") from None
    out: dict[str, str] = {}
    coloring = file.suffix == ".col"
    for line in lines[0 if coloring else 1:]:
        if coloring:
            if not line.startswith("c ") or line.startswith("c OPTIMAL"):
                continue
            line = line[2:]
        kind, _, text = line.partition(" ")
        if kind and text:
            out[_KIND_NAMES.get(kind, kind)] = text.replace("\\n", "\n") if coloring else text
    return out


def _planbench_results(file: Path) -> dict[str, dict[str, str]]:
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
        records = data["instances"]
        return {str(r["instance_id"]): {"llm": str(r["llm_raw_response"])} for r in records}
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
        raise CandidateFileError(f"{file}: not a PlanBench results file ({type(exc).__name__}: {exc})") from None
