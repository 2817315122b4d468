"""Importers of recorded LLM runs into the store, for offline replay: PlanBench result files, gpt-and-i's
response files, the refinement study's files and sample logs (ours, inspect_ai's, lm-evaluation-harness's)."""
