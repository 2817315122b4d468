"""gpt-and-i's recorded runs of the self-verification study: `reader` (formats, path rules, records) and
`importer` (`critiquebench import self-verification`)."""

from critiquebench.importers.self_verification.importer import Imported, domain_options, import_files
from critiquebench.importers.self_verification.reader import (
    FORMATS,
    PATH_RULES,
    FileKind,
    SelfVerificationError,
    Trace,
    calls,
    kind_of,
    traces,
)

__all__ = ["FORMATS", "PATH_RULES", "FileKind", "Imported", "SelfVerificationError", "Trace", "calls",
           "domain_options", "import_files", "kind_of", "traces"]  # fmt: skip
