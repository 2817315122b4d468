"""Tokens/s of the embedded model through LLMClient and its server vs llama-cpp-python called in-process.

    .venv/bin/python benchmarks/bench_embedded.py [--max-tokens 64] [--rounds 2]

Same gguf, prompts and sampling parameters (temperature 0) in both; the server runs first, then the in-process
model, so they never compete for the cores. Target: client >= 0.85x of in-process tokens/s.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.results import add_json_option, record, row  # noqa: E402
from critiquebench.llm.client import LLMClient, LLMSettings  # noqa: E402
from critiquebench.llm.embedded import EmbeddedServer, find_gguf, server_threads  # noqa: E402
from critiquebench.store.cache import CallCache  # noqa: E402

PROMPTS = [
    "Explain in two sentences why the sky is blue.",
    "List three prime numbers and say why each is prime.",
    "Write a short plan to stack block A on block B when C is on A.",
    "Use the numbers 4 6 8 2 and + - * / to make 24. Show your steps.",
]


def via_client(max_tokens: int, rounds: int) -> tuple[int, float]:
    tokens, elapsed = 0, 0.0
    with EmbeddedServer() as server, tempfile.TemporaryDirectory() as tmp:
        settings = LLMSettings(
            base_url=server.base_url, endpoint_id=server.endpoint_id, max_tokens=max_tokens
        )
        llm = LLMClient(settings, CallCache(Path(tmp) / "bench.sqlite"))
        llm.complete([{"role": "user", "content": "Hi"}])  # warm-up
        for sample in range(rounds):  # fresh samples: every call reaches the server
            for prompt in PROMPTS:
                start = time.perf_counter()
                completion = llm.complete([{"role": "user", "content": prompt}], sample=sample)
                elapsed += time.perf_counter() - start
                tokens += completion.completion_tokens
    return tokens, elapsed


def in_process(max_tokens: int, rounds: int) -> tuple[int, float]:
    from llama_cpp import Llama

    # n_ctx and threads as EmbeddedServer gives its server, so both sides do the same work.
    threads = server_threads()
    model = Llama(
        model_path=str(find_gguf()), n_ctx=8192, n_threads=threads, n_threads_batch=threads, verbose=False
    )
    # The server's request defaults differ from Llama's in repeat_penalty (1.1 vs 1.0): match the server.
    params = {"max_tokens": max_tokens, "temperature": 0.0, "repeat_penalty": 1.1}
    model.create_chat_completion([{"role": "user", "content": "Hi"}], **params)
    tokens, elapsed = 0, 0.0
    for _ in range(rounds):
        for prompt in PROMPTS:
            start = time.perf_counter()
            out = model.create_chat_completion([{"role": "user", "content": prompt}], **params)
            elapsed += time.perf_counter() - start
            tokens += out["usage"]["completion_tokens"]
    return tokens, elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=2)
    add_json_option(parser)
    args = parser.parse_args()
    client_tokens, client_s = via_client(args.max_tokens, args.rounds)
    direct_tokens, direct_s = in_process(args.max_tokens, args.rounds)
    client_rate, direct_rate = client_tokens / client_s, direct_tokens / direct_s
    print(f"{len(PROMPTS) * args.rounds} completions, max_tokens {args.max_tokens}, temperature 0")
    for name, tokens, seconds in (
        ("in-process llama_cpp.Llama", direct_tokens, direct_s),
        ("LLMClient -> embedded server", client_tokens, client_s),
    ):
        print(f"  {name:28s} {tokens:5d} tokens in {seconds:6.2f}s   {tokens / seconds:7.1f} tok/s")
    print(f"  ratio {client_rate / direct_rate:.2f}x (target >= 0.85)")
    rows = [
        row("tokens/s through LLMClient and the embedded server", client_rate, "tokens/s",
            baseline=("llama_cpp.Llama in-process", direct_rate), ratio=client_rate / direct_rate,
            target=">= 0.85x of in-process", met=client_rate / direct_rate >= 0.85,
            note=f"{len(PROMPTS) * args.rounds} completions, max_tokens {args.max_tokens}, temperature 0"),
    ]  # fmt: skip
    record("bench_embedded", rows, path=args.json)


if __name__ == "__main__":
    main()
