"""`critiquebench score` (being written)."""

import typer


def register(app: typer.Typer) -> None:
    """Placeholder until the score command lands."""
