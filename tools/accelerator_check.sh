#!/usr/bin/env bash
# One visit to a machine with a TPU or GPU, in about 8 minutes: record JAX's answers on the
# chip, run jaxlite's accelerator tests against them, and benchmark jaxlite beside JAX.
#
#   tools/accelerator_check.sh            # logs and results under $OUT (default ./accelerator-out)
#
# The machine needs Python with JAX and its accelerator plugin (the oracle), NumPy, SciPy,
# ml_dtypes and pytest. jaxlite runs from this checkout; wheels it needs that the machine
# lacks (xla-cpu-pjrt for the CPU backend beside the chip) may lie in .whl/. One process
# holds a TPU at a time, so every step runs after the previous one has exited.
# Bring back $OUT/*-x32.npz (and -x64) into tests/jax_replay/ and commit them.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-accelerator-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 TF_CPP_MIN_LOG_LEVEL=2
PY=${PYTHON:-python3}
if ls .whl/*.whl >/dev/null 2>&1; then
  $PY -m pip install -q --no-index --no-deps --no-compile --target /tmp/jaxlite-site .whl/*.whl \
    && export PYTHONPATH="${PYTHONPATH:+$PYTHONPATH:}/tmp/jaxlite-site"
fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"

PLATFORM=$($PY -c "import jax; print(jax.default_backend())" 2>>"$OUT/check.log")
echo "platform: $PLATFORM" | tee -a "$OUT/check.log"
if [ "$PLATFORM" = cpu ] || [ -z "$PLATFORM" ]; then
  echo "no accelerator here: nothing to check" | tee -a "$OUT/check.log"
  exit 1
fi

# 1. JAX's answers on this chip, for the replay's device sample (TPUs have no float64).
SUITES="x32"
[ "$PLATFORM" = gpu ] && SUITES="x32 x64"
for suite in $SUITES; do
  flag=""; [ "$suite" = x64 ] && flag="--x64"
  timeout 200 $PY tests/jax_replay/record.py --platform "$PLATFORM" $flag --out "$OUT" \
    2>&1 | tail -3 | tee -a "$OUT/check.log"
  cp "$OUT/$PLATFORM-$suite.npz" tests/jax_replay/ 2>/dev/null
done

# 2. jaxlite's accelerator tests and the device replay, against those answers.
timeout 240 $PY -m pytest -q -p no:cacheprovider -o addopts= -m "accelerator or not accelerator" \
  tests/test_accelerator.py "tests/test_jax_replay.py::test_replay_device" 2>&1 \
  | tee "$OUT/tests.log" | tail -15

# 3. The benchmark, JAX and jaxlite one after the other.
timeout 240 $PY benchmarks/tpu.py --out "$OUT" 2>&1 | tee "$OUT/bench.log" | tail -15
