"""The store, SQLite or Postgres: the LLM call cache, graph checkpoints, studies, runs and per-round attempts."""

from critiquebench.store.db import connect, default_store_path

__all__ = ["connect", "default_store_path"]
