#!/usr/bin/env bash
# make test (after the main suite): the tests that drive Triton's interpreter directly, run
# again against the oldest Triton kevolve supports (3.6, what the GPU machines have). The
# venv keeps the newest Triton; the old release's wheel is unpacked once into the venv
# and put first on PYTHONPATH, which the sandboxed candidate processes inherit too.
# A hook written for one interpreter's internals (kevolve/exec/interp_trace.py once raised a
# TypeError under 3.6's load/store hooks) or a template using an API newer than 3.6 fails here.
#
# Environment: VENV (default .venv), COMPAT_TRITON (default 3.6.0), TEST_WORKERS (default 2).
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=${VENV:-.venv}
VERSION=${COMPAT_TRITON:-3.6.0}
DIR="$VENV/compat/triton-$VERSION"
if [[ ! -f "$DIR/.installed" ]]; then
  rm -rf "$DIR"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-deps --target "$DIR" "triton==$VERSION"
  touch "$DIR/.installed"
fi
export PYTHONPATH="$PWD/$DIR${PYTHONPATH:+:$PYTHONPATH}"
found=$("$VENV/bin/python" -c "import triton; print(triton.__version__)")
if [[ "$found" != "$VERSION" ]]; then
  echo "test_triton_compat: expected Triton $VERSION first on PYTHONPATH, imported $found" >&2
  exit 1
fi
"$VENV/bin/python" -m pytest -q -x -p no:cacheprovider -n "${TEST_WORKERS:-2}" --dist loadfile \
  tests/exec/test_interp_trace.py tests/exec/test_interp_compat.py tests/kb \
  tests/services/evaluator/test_mtia_sim.py tests/services/profiler
