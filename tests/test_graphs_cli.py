"""`critiquebench graph`: LangGraph's own Mermaid/ASCII drawings and a locally rendered PNG (no network)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from critiquebench.cli import app

runner = CliRunner()


def test_mermaid_of_llm_llm_shows_the_loop() -> None:
    result = runner.invoke(app, ["graph", "llm-llm"])
    assert result.exit_code == 0, result.output
    for line in (
        "generator(generator)",
        "critic(critic)",
        "__start__ --> generator;",
        "generator --> critic;",
        "critic -.-> generator;",
        "critic -.-> __end__;",
    ):
        assert line in result.output
    assert "verifier" not in result.output  # the critic step records the sound verdict: one step per round


def test_mermaid_of_other_schemes() -> None:
    sound = runner.invoke(app, ["graph", "sound-first", "--format", "mermaid"]).output
    assert "verifier -.-> generator;" in sound and "critic" not in sound
    consistency = runner.invoke(app, ["graph", "self-consistency:k=3"]).output
    assert "verifier -.-> vote;" in consistency and "vote --> __end__;" in consistency
    standard = runner.invoke(app, ["graph", "standard"]).output
    assert "verifier -.-> generator" not in standard


def test_ascii_and_png(tmp_path: Path) -> None:
    ascii_art = runner.invoke(app, ["graph", "sampling", "--format", "ascii"])
    assert ascii_art.exit_code == 0 and "generator" in ascii_art.output and "verifier" in ascii_art.output
    out = tmp_path / "llm-llm.png"
    png = runner.invoke(app, ["graph", "llm-llm", "--format", "png", "--output", str(out)])
    assert png.exit_code == 0, png.output
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    mermaid_file = tmp_path / "g.mmd"
    assert runner.invoke(app, ["graph", "intrinsic", "-o", str(mermaid_file)]).exit_code == 0
    assert "critic -.-> generator;" in mermaid_file.read_text()


def test_bad_requests_are_clear_errors() -> None:
    no_file = runner.invoke(app, ["graph", "llm-llm", "--format", "png"])
    assert no_file.exit_code == 2 and "--output" in no_file.output
    unknown = runner.invoke(app, ["graph", "nope"])
    assert unknown.exit_code == 2 and "unknown scheme 'nope'" in unknown.output
    bad_format = runner.invoke(app, ["graph", "standard", "--format", "svg"])
    assert bad_format.exit_code == 2 and "unknown format 'svg'" in bad_format.output
