"""The study viewer: `critiquebench view` serves (or `--output` writes) a read-only web page of a store."""
