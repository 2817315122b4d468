"""`--cpu-report` (tests/cpu_report.py): a test's CPU is counted with the child processes it waited for, summed
per file and printed costliest first; `--cpu-report-json` writes each test's figures."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BURN = "import time\\nt = time.process_time()\\nwhile time.process_time() - t < 0.3: pass"
TESTS = f"""
import subprocess, sys

def test_child_burns():  # ~0.3 s of CPU in a child process, next to none in this one
    subprocess.run([sys.executable, "-c", "{BURN}"], check=True)

def test_idle():
    pass
"""


def test_cpu_report_counts_waited_children_and_ranks_files(tmp_path: Path) -> None:
    (tmp_path / "test_burn.py").write_text(TESTS)
    (tmp_path / "test_quiet.py").write_text("def test_quiet():\n    pass\n")
    out = tmp_path / "cpu.json"
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "tests.cpu_report", "-p", "no:cacheprovider",
                           "--rootdir", str(tmp_path), "--cpu-report=5", f"--cpu-report-json={out}", str(tmp_path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    figures = json.loads(out.read_text())
    assert len(figures) == 3
    (burn,) = [v for k, v in figures.items() if k.endswith("test_child_burns")]
    own, kids, wall = burn
    assert kids >= 0.25 and own < kids and wall >= kids * 0.5, burn
    lines = done.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("=") and "CPU report: 3 tests" in line)
    assert lines[header + 2].endswith("test_burn.py")  # the costliest file first
    assert any(line.endswith("test_burn.py::test_child_burns") for line in lines[header:])
