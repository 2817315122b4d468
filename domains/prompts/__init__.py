"""Prompts as data: one TOML file per prompt source, each template tagged with where it comes from.

A prompt source is a paper and the code that produced its figures. Each file in this folder holds every
template of one source that the project sends, so a reader can open it beside the paper:

| set                        | source                                                                       |
|----------------------------|------------------------------------------------------------------------------|
| ``self_verification``      | paper 000 (Stechly, Valmeekam, Kambhampati) and its code, kstechly/gpt-and-i |
| ``planbench``              | paper 003 (PlanBench) and its code, karthikv792/LLMs-Planning `plan-bench/`  |
| ``plan_self_critique``     | paper 002 (Valmeekam, Marquez, Kambhampati), LLMs-Planning `llm_planning_analysis/` |
| ``intrinsic_self_critique``| paper 001 (Bohnet et al.)                                                    |
| ``validator_refinement``   | paper 004 (Merola, Singh, Dardouri) and its study's code                     |

A file has a `name`, a `version`, a `title`, and templates as TOML tables whose dotted name is the key the
code asks for (`[game24.generate]` is "game24.generate"); a table is a template when it has `text`, and its
`source` says where the text comes from: a paper line (`000:2122`), a code file (`gpt-and-i/domain_utils/
game24.py`) or `ours` (with a `note` saying why we needed it). Templates are `string.Template` texts: `$name`
or `${name}` is a field, `$$` a dollar sign; braces are plain text, so a JSON example is written as it is sent.

A user's file (TOML or YAML, the same keys) replaces a built-in set's templates key by key: it names the set it
`extends`, and whatever it leaves out stays the built-in text (`load`, `Prompts`). What a study used is
recorded as each set's `label` (name@version, plus the file's digest for a user's file).
"""

from __future__ import annotations

import hashlib
import string
import tomllib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from critiquebench.domains.files import read_regular

FOLDER = Path(__file__).parent
# The built-in sets, one file each (`<name>.toml` in this folder).
SETS = (
    "self_verification",
    "planbench",
    "plan_self_critique",
    "intrinsic_self_critique",
    "validator_refinement",
)
_HEADER = ("name", "version", "title", "extends", "sources")
_ENTRY = ("text", "source", "note")
# Fields that carry the instance or the answer being judged: a user's template that drops one the built-in text
# fills would send every instance (or every answer) the same prompt, so they would all share one cached call.
INSTANCE_FIELDS = frozenset({"numbers", "graph", "coloring", "problem", "init", "goal", "answer", "line", "plan",
                             "description", "prompt"})  # fmt: skip


@dataclass(frozen=True)
class Template:
    """One prompt text of a set: `key` as the code asks for it, the text with `$fields`, and its source."""

    key: str
    text: str
    source: str
    note: str = ""

    def render(self, **fields: Any) -> str:
        """The text with every field filled (a missing field is a KeyError naming it; extra ones are ignored)."""
        try:
            return string.Template(self.text).substitute(fields)
        except KeyError as exc:
            raise KeyError(f"prompt template {self.key!r} needs field {exc.args[0]!r}") from None
        except ValueError as exc:  # a lone "$" in a user's text
            raise ValueError(f"prompt template {self.key!r}: {exc} (write $$ for a dollar sign)") from None

    @property
    def fields(self) -> tuple[str, ...]:
        """The fields the text uses, in order of first use."""
        found = (m.group("named") or m.group("braced") for m in string.Template.pattern.finditer(self.text))
        return tuple(dict.fromkeys(f for f in found if f))


@dataclass(frozen=True)
class PromptSet:
    """The templates of one prompt source (a built-in file, or a user's file over one)."""

    name: str
    version: str
    title: str
    templates: Mapping[str, Template]
    origin: str = "built-in"  # "built-in", or the user's file it was read from
    digest: str = ""  # sha256 (first 12 hex digits) of a user's file; "" for built-ins

    def __getitem__(self, key: str) -> Template:
        try:
            return self.templates[key]
        except KeyError:
            raise KeyError(f"prompt set {self.name!r} has no template {key!r}") from None

    def __contains__(self, key: object) -> bool:
        return key in self.templates

    def __iter__(self) -> Iterator[str]:
        return iter(self.templates)

    def render(self, key: str, **fields: Any) -> str:
        return self[key].render(**fields)

    def text(self, key: str) -> str:
        """A template's text as it is (for fixed texts: a verdict phrase, a system prompt)."""
        return self[key].text

    @property
    def label(self) -> str:
        """What a study records: "name@version", plus "+sha256:DIGEST" for a user's file."""
        return f"{self.name}@{self.version}" + (f"+sha256:{self.digest}" if self.digest else "")


def _entries(table: Mapping[str, Any], prefix: str, where: str) -> Iterator[Template]:
    for key, value in table.items():
        dotted = f"{prefix}.{key}" if prefix else key
        if not isinstance(value, Mapping):
            if not prefix and key in _HEADER:
                continue
            raise ValueError(f"{where}: {dotted!r} is not a template table (give it text = ... and source = ...)")
        if "text" in value:
            unknown = sorted(set(value) - set(_ENTRY))
            if unknown or not isinstance(value["text"], str):
                raise ValueError(f"{where}: template {dotted!r} takes text, source and note, not {unknown}")
            yield Template(dotted, value["text"], str(value.get("source", "")), str(value.get("note", "")))
        else:
            yield from _entries(value, dotted, where)


def parse(data: Mapping[str, Any], where: str, origin: str = "built-in", digest: str = "") -> PromptSet:
    """A prompt set from a file's parsed data; a ValueError naming `where` when it is not one."""
    if not isinstance(data, Mapping) or "name" not in data:
        raise ValueError(f"{where}: a prompt set needs a name (and version, templates)")
    templates = {t.key: t for t in _entries(data, "", where)}
    for t in templates.values():
        t.fields  # noqa: B018 - a malformed "$" fails here, naming the template, not at the first run
        try:
            string.Template(t.text).substitute(dict.fromkeys(t.fields, ""))
        except ValueError as exc:
            raise ValueError(f"{where}: template {t.key!r}: {exc} (write $$ for a dollar sign)") from None
    return PromptSet(str(data["name"]), str(data.get("version", "0")), str(data.get("title", "")), templates,
                     origin, digest)  # fmt: skip


@cache
def builtin(name: str) -> PromptSet:
    """The built-in set `name` (read once per process)."""
    if name not in SETS:
        raise ValueError(f"unknown prompt set {name!r}; built-in sets: {', '.join(SETS)}")
    path = FOLDER / f"{name}.toml"
    return parse(tomllib.loads(path.read_text(encoding="utf-8")), str(path))


@cache
def builtin_label(name: str) -> str:
    """The label of built-in set `name` (`PromptSet.label`) from its file's header, the keys before its first
    table, without its templates: a study records the label of every set, and parsing all five files was ~40 ms
    of every `critiquebench run` (benchmarks/bench_setup.py)."""
    if name not in SETS:
        raise ValueError(f"unknown prompt set {name!r}; built-in sets: {', '.join(SETS)}")
    text = (FOLDER / f"{name}.toml").read_text(encoding="utf-8")
    header = tomllib.loads(text.split("\n[", 1)[0])
    return f"{header['name']}@{header.get('version', '0')}"


def read_file(path: Path) -> PromptSet:
    """A user's prompt file (TOML, or YAML by its .yaml/.yml suffix) over the built-in set it `extends`
    (default: the set of the same name): its templates replace the built-in ones key by key. Keys the
    built-in set does not have are an error, so a typo cannot silently leave the built-in text in place."""
    try:
        raw = read_regular(path)
    except OSError as exc:
        raise ValueError(f"cannot read prompt file {path}: {exc.strerror or exc}") from None
    is_yaml = path.suffix.lower() in (".yaml", ".yml")
    unreadable: tuple[type[Exception], ...] = (UnicodeDecodeError, tomllib.TOMLDecodeError)
    if is_yaml:  # loaded for a YAML file only: every command reads this module, few read YAML
        import yaml

        unreadable += (yaml.YAMLError,)
    try:
        text = raw.decode("utf-8")
        data = yaml.safe_load(text) if is_yaml else tomllib.loads(text)
    except unreadable as exc:
        raise ValueError(f"{path}: not a readable prompt file: {exc}") from None
    except RecursionError:  # both parsers recurse once per level of nesting
        raise ValueError(f"{path}: not a readable prompt file: nested too deeply") from None
    if not isinstance(data, Mapping):
        raise ValueError(f"{path}: a prompt file is a table of templates")
    base_name = str(data.get("extends") or data.get("name") or "")
    base = builtin(base_name) if base_name in SETS else None
    if base is None:
        raise ValueError(f"{path}: `extends` must name a built-in prompt set ({', '.join(SETS)}), not {base_name!r}")
    digest = hashlib.sha256(raw).hexdigest()[:12]
    own = parse({**data, "name": data.get("name") or base.name}, str(path), str(path), digest)
    unknown = sorted(set(own.templates) - set(base.templates))
    if unknown:
        raise ValueError(f"{path}: prompt set {base.name!r} has no template(s) {', '.join(unknown)}")
    for key, template in own.templates.items():
        _check_fields(path, template, base.templates[key])
    merged = {**base.templates, **own.templates}
    version = f"{own.version}" if "version" in data else f"{base.version}"
    return PromptSet(base.name, version, own.title or base.title, merged, str(path), digest)


def _check_fields(path: Path, mine: Template, builtin_text: Template) -> None:
    """A user's template fills only the fields the code fills (those of the built-in text it replaces) and keeps
    every one that carries the instance; else a ValueError naming the template and the field, before any call."""
    known = builtin_text.fields
    extra = [f for f in mine.fields if f not in known]
    if extra:
        offered = ", ".join(f"${f}" for f in known) or "none"
        raise ValueError(
            f"{path}: template {mine.key!r} uses field ${extra[0]}, which is never filled (its fields: {offered})"
        )
    missing = [f for f in known if f in INSTANCE_FIELDS and f not in mine.fields]
    if missing:
        raise ValueError(
            f"{path}: template {mine.key!r} lacks field ${missing[0]}: every instance would get the same prompt "
            "(and share one cached answer)"
        )


def load(spec: str | Path) -> PromptSet:
    """A prompt set by built-in name or by file path (as inspect_ai's critique_template takes either)."""
    if isinstance(spec, str) and spec in SETS:
        return builtin(spec)
    return read_file(Path(spec))


@dataclass(frozen=True)
class Prompts:
    """The prompt sets a domain reads: the built-in ones, with the user's sets in their place."""

    overrides: tuple[PromptSet, ...] = ()
    _by_name: dict[str, PromptSet] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        names = [s.name for s in self.overrides]
        if len(names) != len(set(names)):
            raise ValueError(f"two prompt files replace the same set: {', '.join(names)}")
        self._by_name.update({s.name: s for s in self.overrides})

    @classmethod
    def of(cls, specs: Iterable[str | Path] | None) -> Prompts:
        """The sets named by `specs` (built-in names or file paths) over the built-ins."""
        return cls(tuple(s for s in (load(x) for x in specs or ()) if s.origin != "built-in"))

    def __getitem__(self, name: str) -> PromptSet:
        return self._by_name.get(name) or builtin(name)

    def labels(self) -> dict[str, str]:
        """Set name -> label for every set (what a study records)."""
        return {name: self._by_name[name].label if name in self._by_name else builtin_label(name) for name in SETS}


DEFAULT = Prompts()


def set_of(name: str) -> PromptSet:
    """The built-in set `name` (for module constants and tests; domains read theirs from `Prompts`)."""
    return builtin(name)
