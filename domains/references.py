"""Instance references as answer files write them: an id of the domain's dataset ("901"), a generated instance
("gen-SEED-I") or a path to an instance file; each resolved once (`score`, `import samples`)."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path

from critiquebench.domains.contract import Domain, Instance

log = logging.getLogger(__name__)


class InstanceCache:
    """Instance references (ids or file paths) resolved once each; failures are cached as their message."""

    def __init__(self, domain: Domain, dataset: Path | None) -> None:
        self.domain, self.dataset = domain, dataset
        self._found: dict[str, Instance | str] = {}

    def preload(self, refs: Iterable[str]) -> None:
        """Load many numeric ids in one pass over the dataset; on any failure fall back to one by one."""
        ids = [r for r in dict.fromkeys(refs) if r not in self._found and r.isdigit()]
        if len(ids) < 2:
            return
        from critiquebench.domains import load_instances

        try:
            instances = load_instances(self.domain, ",".join(ids), self.dataset)
        except Exception as exc:  # noqa: BLE001 - any failure means: resolve each id alone for exact errors
            log.debug("batch load failed (%s); loading ids one by one", exc)
            return
        self._found.update({instance.id: instance for instance in instances})

    def get(self, ref: str) -> Instance | str:
        """The instance, or the error message saying why there is none."""
        if ref not in self._found:
            try:
                self._found[ref] = self._load(ref)
            except Exception as exc:  # noqa: BLE001 - reported on the output line, never a traceback
                self._found[ref] = f"instance {ref!r}: {exc}"
        return self._found[ref]

    def _load(self, ref: str) -> Instance:
        path = Path(ref).expanduser()
        if not ref.isdigit() and path.exists():
            instances = self.domain.load(None, path)
        elif ref.startswith("gen-") and len(parts := ref.split("-")) == 3:
            seed, index = int(parts[1]), int(parts[2])
            instances = self.domain.generate(index, seed)[-1:] if index >= 1 else []
        else:
            from critiquebench.domains import load_instances

            instances = load_instances(self.domain, ref, self.dataset)
        if len(instances) != 1:
            raise ValueError(f"refers to {len(instances)} instances, not one")
        return instances[0]
