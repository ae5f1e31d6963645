# Source this on a GPU host whose python3 has torch and Triton but none of kevolve's service
# dependencies and reaches no package index: installs the wheels carried in .whl/ (see
# tools/README.md for how they are downloaded) into /tmp/site and puts them first.
set -e
if [ ! -d /tmp/site ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
fi
export PYTHONPATH=/tmp/site:$PWD${PYTHONPATH:+:$PYTHONPATH}
export PATH=/tmp/site/bin:$PATH
export PYTHONUNBUFFERED=1
set +e
