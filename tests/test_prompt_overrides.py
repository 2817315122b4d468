"""A user's prompt file over a built-in prompt set, through a study run against the scripted server."""

from __future__ import annotations

from pathlib import Path

from critiquebench.domains.prompts import builtin
from critiquebench.store.db import connect
from critiquebench.store.results import load_study
from tests.scripted_server import ScriptedServer
from tests.test_study_cli import DATASETS, NUMBERS, game24_reply, invoke, run_args

MINE = """\
extends = "self_verification"
version = "7"

[game24.generate]
source = "ours"
note = "a shorter request"
text = '''
Make 24 from the numbers below; end with [ANSWER END].
Input: ${numbers}
Answer: '''
"""


def test_a_prompt_file_changes_what_a_study_sends_and_is_recorded(tmp_path: Path) -> None:
    mine = tmp_path / "mine.toml"
    mine.write_text(MINE)
    study = tmp_path / "study.toml"
    study.write_text('prompts = ["mine.toml"]\n')  # relative to the study file
    store = tmp_path / "store.sqlite"
    with ScriptedServer(reply=game24_reply) as server:
        invoke(*run_args("mine", store, server, instances="901", schemes="sound-first:rounds=2"),
               "--config", str(study))  # fmt: skip
        numbers = " ".join(map(str, NUMBERS["901"]))
        first = server.calls[0][0]
        assert first == [{"role": "user", "content": f"Make 24 from the numbers below; end with [ANSWER END].\n"
                                                     f"Input: {numbers}\nAnswer: "}]  # fmt: skip
        if len(server.calls) > 1:  # the texts the file leaves alone stay the built-in ones (the backprompt)
            end = builtin("self_verification").render("game24.backprompt.end", numbers=numbers)
            assert server.calls[1][0][-1]["content"].endswith(end)
        with connect(store) as db:
            stored = load_study(db, "mine")
        assert stored is not None
        assert stored["domain_options"]["game24"]["prompts"] == [str(mine)]
        label = stored["prompt_sets"]["self_verification"]
        assert label.startswith("self_verification@7+sha256:")
        assert stored["prompt_sets"]["planbench"] == f"planbench@{builtin('planbench').version}"

        calls = server.requests
        mine.write_text(MINE.replace("shorter", "changed"))  # another file: another definition, nothing runs
        changed = invoke(*run_args("mine", store, server, instances="901", schemes="sound-first:rounds=2"),
                         "--config", str(study), check=2)  # fmt: skip
        assert "prompt_sets" in changed.stderr and server.requests == calls


def test_a_bad_prompt_file_is_one_clear_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("extends: self_verification\ngame24:\n  genrate:\n    text: hi\n    source: ours\n")
    with ScriptedServer(reply=game24_reply) as server:
        done = invoke(*run_args("bad", tmp_path / "s.sqlite", server, instances="901", schemes="standard"),
                      "--prompts", str(bad), check=2)  # fmt: skip
        assert server.requests == 0
    assert done.stderr.count("\n") == 1 and "game24.genrate" in done.stderr and "Traceback" not in done.stderr


def test_yaml_file_with_the_same_keys(tmp_path: Path) -> None:
    from critiquebench.domains import get_domain, load_instances

    mine = tmp_path / "mine.yaml"
    mine.write_text('extends: self_verification\ngame24:\n  feedback:\n    binary:\n      text: "Wrong."\n'
                    "      source: ours\n      note: shorter\n")  # fmt: skip
    game24 = get_domain("game24", prompts=[str(mine)])
    [instance] = load_instances(game24, "901", DATASETS)
    verdict = game24.verify(instance, "1+2+3+4")
    assert game24.feedback(instance, verdict, "binary") == "Wrong."
    assert game24.backprompt(instance, "Wrong.").startswith("Feedback: This is not correct. Using the numbers")


def test_an_override_reaches_what_a_scheme_sends(tmp_path: Path) -> None:
    from tests.test_prompt_scheme import shown

    mine = tmp_path / "critic.toml"
    mine.write_text('extends = "intrinsic_self_critique"\n[handback-empty]\nsource = "ours"\nnote = "test"\n'
                    'text = "Your plan is wrong; try again."\n')  # fmt: skip
    replies = tmp_path / "replies.json"
    replies.write_text('["(unstack b a)", ""]')  # a plan, then a critic that says nothing (wrong)
    third = shown("--domain", "blocksworld_3_7", "--instance", "gen:1:1", "--scheme", "intrinsic", "--call", "3",
                  "--replies", str(replies), "--prompts", str(mine))  # fmt: skip
    assert [m["role"] for m in third] == ["user"]  # the paper's Revise-Prompt: one prompt that grows (001:112)
    assert third[-1]["content"].endswith(
        "\nThe clean plan:\n(unstack b a)\nYour plan is wrong; try again.\n\n"
        "Please can you explain the error and fix it."
    )


def test_an_override_reaches_every_planbench_task(tmp_path: Path) -> None:
    """PlanBench's task statements (t1-t8) are templates of the planbench set: a user's file changes them all."""
    import yaml

    from critiquebench.domains import get_domain
    from critiquebench.domains.planning.tasks import TASKS

    planbench = builtin("planbench")
    statements = ["statement", *(k for k in planbench if k.startswith("task.") and "[STATEMENT]" in planbench.text(k))]
    changed = {k: planbench.text(k).replace("[STATEMENT]", "[PROBLEM]") for k in statements}
    changed["system"] = "You plan."
    changed["task.t6.event"] = planbench.text("task.t6.event").replace("an unexpected event", "a surprise")
    changed["task.t7.action-sequence"] = planbench.text("task.t7.action-sequence").replace("SEQUENCE END", "DONE")
    mine = tmp_path / "mine.yaml"
    mine.write_text(yaml.safe_dump({"extends": "planbench", **{k: {"text": t, "source": "ours", "note": "test"}
                                                                for k, t in changed.items()}}))  # fmt: skip
    for name in TASKS:
        ours = get_domain(f"mystery_blocksworld:{name}", prompts=[str(mine)])
        theirs = get_domain(f"mystery_blocksworld:{name}")
        [inst] = ours.load("3", DATASETS / "planbench" / "mystery_blocksworld")
        [same] = theirs.load("3", DATASETS / "planbench" / "mystery_blocksworld")
        system, user = ours.prompt(inst)
        built_in = theirs.prompt(same)[1]["content"]
        assert system == {"role": "system", "content": "You plan."}
        assert "[STATEMENT]" not in user["content"] and user["content"].count("[PROBLEM]") == built_in.count(
            "[STATEMENT]"), name  # fmt: skip
        assert ("a surprise" in user["content"]) == (name == "t6") == ("an unexpected event" in built_in), name
        assert ("[ACTION DONE]" in user["content"]) == (name == "t7") == ("[ACTION SEQUENCE END]" in built_in), name


def test_an_override_reaches_planbench_s_other_plan_generation_prompts(tmp_path: Path) -> None:
    import yaml

    from critiquebench.domains import get_domain
    from critiquebench.domains.planning.planbench_prompts import PLANBENCH_STYLES, state_tracking

    planbench = builtin("planbench")
    changed = {k: planbench.text(k).replace("[STATEMENT]", "[PROBLEM]").replace("[DOMAIN]\n", "[PDDL DOMAIN]\n")
               for k in ("generate.zero-shot-statement", "generate.state-tracking-statement", "generate.pddl-domain")}
    mine = tmp_path / "mine.yaml"
    mine.write_text(yaml.safe_dump({"extends": "planbench", **{k: {"text": t, "source": "ours", "note": "test"}
                                                                for k, t in changed.items()}}))  # fmt: skip
    for style in PLANBENCH_STYLES:
        if style == "state_tracking":  # our Blocksworld config has no state-tracking intro: the builder itself
            ours = get_domain("blocksworld", prompts=[str(mine)])
            [inst, example] = ours.load("3,2", DATASETS / "planbench" / "blocksworld")
            args = (ours.cfg, "Intro", ours.task(example), ours.reference_plan(example), ours.task(inst))
            built_in, sent = state_tracking(*args), state_tracking(*args, texts=ours.texts)
            assert sent == built_in.replace("[STATEMENT]", "[PROBLEM]") != built_in
            continue
        ours = get_domain("blocksworld", prompt_style=style, prompts=[str(mine)])
        theirs = get_domain("blocksworld", prompt_style=style)
        [inst] = ours.load("3", DATASETS / "planbench" / "blocksworld")
        [same] = theirs.load("3", DATASETS / "planbench" / "blocksworld")
        sent, built_in = ours.prompt(inst)[-1]["content"], theirs.prompt(same)[-1]["content"]
        assert sent != built_in, style
        assert sent == built_in.replace("[STATEMENT]", "[PROBLEM]").replace("[DOMAIN]\n", "[PDDL DOMAIN]\n"), style
