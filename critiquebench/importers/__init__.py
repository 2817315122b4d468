"""Importers of recorded LLM runs (PlanBench result files) into the store, for offline replay."""
