# Source this on the lent GPU machine (its python3 has torch and Triton but none of our
# service dependencies, and it cannot reach a registry): install the wheels carried in .whl/
# (see bench/gpu/README.md for how they are downloaded) into /tmp/site and put them first.
set -e
if [ ! -d /tmp/site ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
fi
export PYTHONPATH=/tmp/site:$PWD${PYTHONPATH:+:$PYTHONPATH}
export PATH=/tmp/site/bin:$PATH
export PYTHONUNBUFFERED=1
set +e
