"""Sentence encoders for MN-2/MN-3 ("problem + plan" -> a vector), with nothing downloaded at run time.

The paper embeds with RoBERTa, whose weights cannot be fetched here. In its place:

- `wordllama` (default): WordLlama's `l2_supercat_256` static token embeddings (from Llama-family token
  embeddings, average-pooled, 256 dimensions). The weights and tokenizer ship inside the `wordllama` wheel on
  PyPI (extra `confidence`); it needs numpy and `tokenizers`, no torch. Bag-of-tokens pooling: word order is
  lost ("stack a b" and "stack b a" embed alike), which RoBERTa would keep.
- `hashing` (stand-in): scikit-learn's HashingVectorizer over word 1-2-grams, 256 dimensions, l2-normalised.
  No weights at all; used when wordllama is not installed, and named in every table that uses it.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any, Protocol

import numpy as np

ENCODERS = ("wordllama", "hashing")
DIM = 256


class Encoder(Protocol):
    name: str

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


class WordLlamaEncoder:
    name = "wordllama-l2-supercat-256"

    def __init__(self) -> None:
        from pathlib import Path

        import wordllama
        from wordllama import WordLlama

        # The wheel ships the weights and the tokenizer; wordllama looks for the tokenizer in its cache folder
        # ("tokenizers/"), so the package folder is passed as the cache and downloads are disabled.
        package = Path(wordllama.__file__).parent
        self._model: Any = WordLlama.load(cache_dir=package, disable_download=True, dim=DIM)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(self._model.embed(list(texts)), dtype=np.float32)


class HashingEncoder:
    name = "hashing-256 (stand-in)"

    def __init__(self) -> None:
        from sklearn.feature_extraction.text import HashingVectorizer

        self._vectorizer = HashingVectorizer(n_features=DIM, ngram_range=(1, 2), alternate_sign=False, norm="l2")

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return self._vectorizer.transform(list(texts)).toarray().astype(np.float32)


def wordllama_available() -> bool:
    try:
        import wordllama  # noqa: F401
    except ImportError:
        return False
    return True


@cache
def get_encoder(name: str | None = None) -> Encoder:
    """The named encoder (built once per process); by default wordllama when installed, else the hashing
    stand-in."""
    name = name or ("wordllama" if wordllama_available() else "hashing")
    if name == "wordllama":
        if not wordllama_available():
            raise ValueError("encoder 'wordllama' is not installed: pip install 'critiquebench[confidence]'")
        return WordLlamaEncoder()
    if name == "hashing":
        return HashingEncoder()
    raise ValueError(f"unknown encoder {name!r}; known: {', '.join(ENCODERS)}")
