#!/usr/bin/env bash
# The checks that need CuPy and a GPU, in one run (CI has no GPU; these skip there):
#   1. tools/survey_gpu_kernels.py rewrites SURVEYED in src/tensorweave/framework/gpu_kernels.py;
#   2. the GPU tests, against that table;
#   3. benchmarks/gpu_step.py, a step on the GPU against the same step on the CPU.
# Logs, the survey report and the rewritten table go to $OUT (default: gpu-out).
set -u
OUT=${OUT:-gpu-out}
mkdir -p "$OUT"
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1 TW_TEST_GPU=1
PY=${PYTHON:-python3}
$PY -c "import cupy, numpy; print('cupy', cupy.__version__, 'numpy', numpy.__version__, 'gpus', cupy.cuda.runtime.getDeviceCount())"
$PY tools/survey_gpu_kernels.py --write --workers "${WORKERS:-12}" --budget "${BUDGET:-240}" \
    --report "$OUT/survey.json" 2>&1 | tee "$OUT/survey.txt"
cp src/tensorweave/framework/gpu_kernels.py "$OUT/"
$PY -m pytest -p no:cacheprovider -n "${TEST_WORKERS:-8}" tests/runtime/test_gpu_device.py \
    tests/framework/test_gpu_kernel_table.py 2>&1 | tee "$OUT/tests.txt" | tail -40
$PY benchmarks/gpu_step.py "$OUT/gpu_step.json" 2>&1 | tee "$OUT/bench.txt"
