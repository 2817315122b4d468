"""Sentence encoders for MN-2/MN-3 ((problem, reply) -> a vector), with nothing downloaded at run time.

The paper names RoBERTa (004:176); the study's code fine-tunes `bert-base-uncased` on the pair (problem file,
last reply), `tokenizer(problem, gen_N, max_length=512)`, and reads the [CLS] vector (meta_model_llama.ipynb).
Neither's weights can be fetched here, and nothing is downloaded at run time. The encoder is pluggable:
`--encoder module:attr` names any object (or a class / factory called with no arguments) with a `name` and
`encode(texts) -> array`; one with `encode_pairs(pairs)` receives the (problem, reply) pairs as BERT's tokenizer
does, others get the two texts joined by a newline. A local BERT is plugged in so. Bundled:

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
PLUGIN_SEPARATOR = ":"  # "module:attr" names an encoder of your own


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


def encode_pairs(encoder: Encoder, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
    """Embed (problem, reply) pairs: through the encoder's own `encode_pairs` when it has one (a BERT-style
    "[CLS] problem [SEP] reply [SEP]"), else the two texts joined by a newline."""
    own = getattr(encoder, "encode_pairs", None)
    if callable(own):
        return np.asarray(own(list(pairs)), dtype=np.float32)
    return np.asarray(encoder.encode([f"{a}\n{b}" for a, b in pairs]), dtype=np.float32)


def default_encoder_name() -> str:
    return "wordllama" if wordllama_available() else "hashing"


def _plugin(spec: str) -> Encoder:
    import importlib

    module_name, _, attr = spec.partition(PLUGIN_SEPARATOR)
    try:
        found = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError, ValueError) as exc:
        raise ValueError(f"encoder {spec!r}: cannot import {attr!r} from {module_name!r}: {exc}") from None
    encoder = found() if isinstance(found, type) or not hasattr(found, "encode") else found
    if not callable(getattr(encoder, "encode", None)) or not isinstance(getattr(encoder, "name", None), str):
        raise ValueError(f"encoder {spec!r} has no `name` and `encode(texts)`")
    return encoder


def wordllama_available() -> bool:
    try:
        import wordllama  # noqa: F401
    except ImportError:
        return False
    return True


@cache
def get_encoder(name: str | None = None) -> Encoder:
    """The named encoder (built once per process); by default wordllama when installed, else the hashing
    stand-in; "module:attr" loads your own."""
    name = name or default_encoder_name()
    if PLUGIN_SEPARATOR in name:
        return _plugin(name)
    if name == "wordllama":
        if not wordllama_available():
            raise ValueError(
                "encoder 'wordllama' is not installed: pip install '.[confidence]' in the critiquebench checkout"
            )
        return WordLlamaEncoder()
    if name == "hashing":
        return HashingEncoder()
    raise ValueError(f"unknown encoder {name!r}; known: {', '.join(ENCODERS)}, or module:attr")
