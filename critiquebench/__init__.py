"""critiquebench: run, resume and compare LLM generate -> verify -> critique loops on checkable problems."""

__version__ = "0.1.0"
