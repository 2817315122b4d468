"""Import PlanBench's recorded runs (any task, model or domain) as LLM-cache entries plus a study replaying them.

A recorded answer is stored under exactly the key a live call would use (model, endpoint identity, message
list, sampling parameters, sample 0), so replaying the study through our own graphs is a cache hit on every turn
if, and only if, our prompts and feedback are PlanBench's own, byte for byte.

Two file shapes are understood:
- one-shot task files (`instances[*].query` / `llm_raw_response`): the query was sent as the user message after
  PlanBench's system message; replayed by the `standard` scheme. Plan generation (t1) runs on the plain
  planning domain (prompt style `nl_legacy` or `nl`, whichever intro the queries start with); every other task
  on the domain "DOMAIN:TASK" (`domains/planning/tasks`), which reads its random choices back from the file.
  Importing several task files into one study adds one domain per task, so `report` shows them side by side;
- backprompting (`instances[*].messages`, `steps`): every assistant turn is one recorded call whose messages are
  the conversation before it; replayed by `sound-first`. PlanBench's PDDL backprompting runs
  (`..._1_history_...` in the task name) sent a window of one exchange instead: the first prompt (after a system
  message only where the run had one), the last answer and its feedback, as each step's recorded
  `sent_messages` show; they replay by `sound-first:history=last` with the feedback each answer was sent
  (`RecordedFeedback`), since its wording (`full_validator`) is not published.
"""

from critiquebench.importers.planbench.fallbacks import FALLBACKS
from critiquebench.importers.planbench.file import ImportError_
from critiquebench.importers.planbench.importer import (
    RECORDED_ENDPOINT,
    Imported,
    dataset_folder,
    import_file,
    import_planbench,
)
from critiquebench.importers.planbench.kinds import (
    KINDS,
    PLANBENCH_SYSTEM,
    FileKind,
    PlanBenchRun,
    RecordedCall,
    RecordedFeedback,
    history_window,
    kind_of,
    read_planbench,
    sent_query,
)
from critiquebench.importers.planbench.readers import READER_RULES

__all__ = [
    "FALLBACKS",
    "KINDS",
    "PLANBENCH_SYSTEM",
    "READER_RULES",
    "RECORDED_ENDPOINT",
    "FileKind",
    "ImportError_",
    "Imported",
    "PlanBenchRun",
    "RecordedCall",
    "RecordedFeedback",
    "dataset_folder",
    "history_window",
    "import_file",
    "import_planbench",
    "kind_of",
    "read_planbench",
    "sent_query",
]
