#!/usr/bin/env bash
# A visit to a machine with a TPU or GPU: record JAX's answers on the chip, run jaxlite's
# accelerator tests against them, run the examples, and benchmark jaxlite beside JAX.
#
#   tools/accelerator_check.sh [record] [tests] [examples] [bench]   # default: all four
#
# Logs and results go under $OUT (default ./accelerator-out). Each step fits the device
# tool's 10-minute call with the others of its visit: `record tests` in one call,
# `examples bench` in the next.
#
# The machine needs Python with JAX and its accelerator plugin (the oracle), NumPy, SciPy,
# ml_dtypes and pytest. jaxlite runs from this checkout. Its CPU backend beside the chip
# needs the xla-cpu-pjrt plugin: from .whl/*.whl, or .whl/xla_cpu_pjrt.so.xz (the plugin's
# library stripped and compressed to fit the tool's 64 MiB: tools/pack_cpu_plugin.sh makes
# it; carry .whl). One process holds a TPU at a
# time, so every step runs after the previous one has exited.
# Bring back $OUT/<platform>-x32.npz into tests/jax_replay/ and commit it.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-accelerator-out}
mkdir -p "$OUT"
STEPS=${*:-record tests examples bench}
export PYTHONUNBUFFERED=1 TF_CPP_MIN_LOG_LEVEL=2
PY=${PYTHON:-python3}
if ls .whl/*.whl >/dev/null 2>&1; then
  $PY -m pip install -q --no-index --no-deps --no-compile --target /tmp/jaxlite-site .whl/*.whl \
    && export PYTHONPATH="${PYTHONPATH:+$PYTHONPATH:}/tmp/jaxlite-site"
fi
if [ -f .whl/xla_cpu_pjrt.so.xz ]; then
  [ -f /tmp/xla_cpu_pjrt.so ] || $PY -c "import lzma, shutil; shutil.copyfileobj(
    lzma.open('.whl/xla_cpu_pjrt.so.xz'), open('/tmp/xla_cpu_pjrt.so', 'wb'))"
  export JAXLITE_PJRT_CPU_PLUGIN=/tmp/xla_cpu_pjrt.so
fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
has() { case " $STEPS " in *" $1 "*) return 0;; esac; return 1; }

PLATFORM=$($PY -c "import jax; print(jax.default_backend())" 2>>"$OUT/check.log")
echo "platform: $PLATFORM" | tee -a "$OUT/check.log"
if [ "$PLATFORM" = cpu ] || [ -z "$PLATFORM" ]; then
  echo "no accelerator here: nothing to check" | tee -a "$OUT/check.log"
  exit 1
fi

# 1. JAX's answers on this chip, for the replay's device sample (TPUs have no float64).
if has record; then
  SUITES="x32"
  [ "$PLATFORM" = gpu ] && SUITES="x32 x64"
  for suite in $SUITES; do
    flag=""; [ "$suite" = x64 ] && flag="--x64"
    timeout 200 $PY tests/jax_replay/record.py --platform "$PLATFORM" $flag --out "$OUT" \
      --budget "${RECORD_SECONDS:-100}" 2>&1 | tail -3 | tee -a "$OUT/check.log"
    cp "$OUT/$PLATFORM-$suite.npz" tests/jax_replay/ 2>/dev/null
  done
fi

# 2. jaxlite's accelerator tests and the device replay, against those answers.
if has tests; then
  timeout "${TEST_SECONDS:-300}" $PY -m pytest -v -p no:cacheprovider -o addopts= \
    -m "accelerator or not accelerator" --tb=short -W ignore::DeprecationWarning \
    tests/test_accelerator.py "tests/test_jax_replay.py::test_replay_device" 2>&1 \
    | tee "$OUT/tests.log" | grep -v PASSED | tail -60
fi

# 3. The examples, unchanged, each in its own process (scikit-learn from the machine's
# own package index where it has one).
if has examples; then
  if ! $PY -c "import sklearn, matplotlib" 2>/dev/null && [ -d /opt/pypi/simple ]; then
    PIP_CONFIG_FILE=/dev/null $PY -m pip install -q --isolated --only-binary=:all: \
      --index-url file:///opt/pypi/simple --target /tmp/extra scikit-learn tqdm matplotlib \
      >>"$OUT/check.log" 2>&1 && export PYTHONPATH="$PYTHONPATH:/tmp/extra"
  fi
  # (optax_training needs optax 0.2.8, absl-py and toolz: a TPU machine's index lacks
  # chex but not these; carry their wheels in .whl where it has none)
  for ex in ${EXAMPLES:-per_example_gradients.py scan_rnn.py mnist_digits_mlp.py digits_convnet_stax.py optax_training.py}; do
    start=$(date +%s)
    timeout 120 $PY -m jaxlite "examples/$ex" >"$OUT/example.log" 2>&1
    echo "example $ex: exit $? in $(( $(date +%s) - start )) s" | tee -a "$OUT/check.log"
    tail -4 "$OUT/example.log" | tee -a "$OUT/check.log"
  done
fi

# 4. The benchmark, JAX and jaxlite one after the other.
if has bench; then
  TPU_BENCH_DUMP="$OUT" timeout "${BENCH_SECONDS:-240}" $PY benchmarks/tpu.py --out "$OUT" --rounds "${BENCH_ROUNDS:-1}" 2>&1 \
    | tee "$OUT/bench.log" | tail -25
fi
