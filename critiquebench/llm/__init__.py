"""The LLM client layer: one ChatOpenAI path with retries and the shared call cache, and the embedded server."""
