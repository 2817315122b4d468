"""`cb.run` in a Jupyter notebook: a real IPython kernel (ipykernel, driven by jupyter_client as a notebook
front end drives it) runs a small study against the scripted server, and the test reads the kernel's iopub
messages, which are all a notebook renders. With ipywidgets, rich draws the bars into an Output widget: the
kernel opens the widget's comm, displays the widget, and sends each redraw as a display_data routed into it
(the widget's `msg_id` names the cell's request). `progress=False` sends none of it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jupyter_client.blocking.client import BlockingKernelClient
from jupyter_client.manager import start_new_kernel

from tests.scripted_server import ScriptedServer
from tests.test_study_cli import game24_reply

ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BlockingKernelClient]:
    # "python3" is ipykernel's own kernel spec: this interpreter, so the kernel imports this checkout
    manager, client = start_new_kernel(kernel_name="python3", cwd=str(tmp_path_factory.mktemp("kernel")))
    try:
        yield client
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def run_cell(client: BlockingKernelClient, code: str) -> tuple[str, list[dict[str, Any]]]:
    """Execute `code` as a notebook cell: its request's msg_id and the iopub messages it caused."""
    messages: list[dict[str, Any]] = []
    reply = client.execute_interactive(code, timeout=60, output_hook=messages.append)
    errors = [m["content"] for m in messages if m["msg_type"] == "error"]
    assert reply["content"]["status"] == "ok", errors
    return reply["parent_header"]["msg_id"], messages


def study_cell(server: ScriptedServer, store: Path, progress: bool) -> str:
    return (f"import critiquebench.api as cb\n"
            f"result = cb.run('nb', domains='game24', instances='gen:2:1', schemes='standard', model='scripted',\n"
            f"                base_url={server.base_url!r}, store={str(store)!r}, progress={progress})\n"
            f"print('done', result.done)")  # fmt: skip


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer(reply=game24_reply) as srv:
        yield srv


def test_cb_run_draws_its_bars_in_the_cells_output_widget(kernel: BlockingKernelClient, server: ScriptedServer,
                                                          tmp_path: Path) -> None:  # fmt: skip
    request, messages = run_cell(kernel, study_cell(server, tmp_path / "s.sqlite", progress=True))
    opened = [m["content"] for m in messages if m["msg_type"] == "comm_open"]
    outputs = [c["comm_id"] for c in opened if c["data"]["state"].get("_model_name") == "OutputModel"]
    assert len(outputs) == 1, opened
    widget = outputs[0]
    shown = [m["content"]["data"] for m in messages if m["msg_type"] == "display_data"]
    assert any(d.get("application/vnd.jupyter.widget-view+json", {}).get("model_id") == widget for d in shown)
    # the front end puts this cell's outputs into the widget while its msg_id names the cell's request
    routed = [m["content"]["data"]["state"]["msg_id"] for m in messages
              if m["msg_type"] == "comm_msg" and m["content"]["comm_id"] == widget]  # fmt: skip
    assert request in routed
    bars = [ANSI.sub("", d["text/plain"]) for d in shown if "standard" in d.get("text/plain", "")]
    assert bars, shown
    # the last redraw is the finished study (rich's Live does not redraw on stop in a notebook: we do)
    assert re.match(r"standard\s+━+ 2/2 +\d:\d\d:\d\d correct \d failed 0 running 0 \| calls [1-9]", bars[-1]), bars[-1]
    assert "<pre" in next(d["text/html"] for d in shown if "standard" in d.get("text/plain", ""))
    printed = "".join(m["content"]["text"] for m in messages if m["msg_type"] == "stream")
    assert printed.strip() == "done 2"


def test_progress_false_shows_nothing_in_the_notebook(kernel: BlockingKernelClient, server: ScriptedServer,
                                                      tmp_path: Path) -> None:  # fmt: skip
    _, messages = run_cell(kernel, study_cell(server, tmp_path / "s.sqlite", progress=False))
    kinds = {m["msg_type"] for m in messages}
    assert not kinds & {"comm_open", "comm_msg", "display_data", "update_display_data", "clear_output"}, kinds
    printed = "".join(m["content"]["text"] for m in messages if m["msg_type"] == "stream")
    assert printed.strip() == "done 2"


def test_without_ipywidgets_the_cell_gets_one_line_per_scheme_at_the_end(kernel: BlockingKernelClient,
                                                                         server: ScriptedServer, tmp_path: Path
                                                                         ) -> None:  # fmt: skip
    # None in sys.modules is Python's own "not importable": the notebook of a user without ipywidgets
    hide = "import sys\nsaved = sys.modules.get('ipywidgets')\nsys.modules['ipywidgets'] = None\ntry:\n"
    cell = study_cell(server, tmp_path / "s.sqlite", progress=True).replace("\n", "\n    ")
    restore = "\nfinally:\n    del sys.modules['ipywidgets']\n    if saved:\n        sys.modules['ipywidgets'] = saved"
    _, messages = run_cell(kernel, hide + "    " + cell + restore)
    assert not {m["msg_type"] for m in messages} & {"comm_open", "comm_msg", "clear_output"}
    shown = [ANSI.sub("", m["content"]["data"]["text/plain"]) for m in messages if m["msg_type"] == "display_data"]
    assert len(shown) == 2 and re.match(r"standard: 2/2 runs, \d correct, 0 failed; LLM calls [1-9]", shown[0])
    assert shown[1].startswith("LLM calls: retries 0 failed calls 0"), shown
