#!/usr/bin/env bash
# The GPU rows of docs/jax.md in one prepared run (issue #38): the JAX env's steps/s up to a million games,
# the JAX PPO end to end at GPU-sized batches, and beside them, in the same run, the SB3 recipe with its
# learner on the GPU and the numba batched env on the machine's CPU cores.
#
#   bash benchmarks/gpu.sh fetch     # here, once: the wheels the GPU machine lacks, into .whl/ (git-ignored)
#   bash benchmarks/gpu.sh run OUT   # on the GPU machine: install them, check the backend, measure, write OUT/
#   bash benchmarks/gpu.sh quick OUT [ARGS...]   # a check of this script, not a measure: the steps of `run`
#                                    # with this machine's python and JAX (the CPU will do), nothing installed,
#                                    # two of the differential test's checks, and jax_speed.py --quick ARGS
#
# The GPU machine has JAX (CUDA), flax, optax, numba, torch and PyYAML but not Gymnasium or SB3; nothing can
# be downloaded there, so the wheels travel with the working tree. Budget: about 6 minutes of GPU time.
set -euo pipefail
cd "$(dirname "$0")/.."
WHEELS=(gymnasium==1.4.0 farama-notifications==0.0.6 stable-baselines3==2.9.2 sb3-contrib==2.9.2)

case "${1:-}" in
  fetch)
    grep -qx '/.whl/' .git/info/exclude 2>/dev/null || echo /.whl/ >> .git/info/exclude
    python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
      --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform any -d .whl "${WHEELS[@]}"
    ;;
  run)
    out=${2:?"usage: bash benchmarks/gpu.sh run OUT"}
    mkdir -p "$out"
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl
    export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
    # The project itself, editable and without its dependencies (they are there, or in /tmp/site).
    python3 -m pip install -q --no-index --no-deps --no-build-isolation -e .
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee "$out/gpu.txt"
    python3 -c "import jax; print(jax.devices()); assert jax.default_backend() == 'gpu', 'JAX sees no GPU'"
    # The differential test's quick set on the GPU first: the figures mean nothing if the rules differ there.
    python3 -m pytest -q -p no:cacheprovider -n 4 tests/test_jax.py 2>&1 | tail -3 | tee "$out/check.txt"
    # Env steps/s (random masked actions), then PPO at 16 games (the CPU recipe) up to 16,384 games a rollout;
    # the SB3 recipe with its learner on cuda, the numba env on the CPU cores.
    python3 benchmarks/jax_speed.py --ns 1024,16384,131072,1048576 --env-steps 50000000 --reps 3 \
      --ppo 16x128,1024x128,4096x64,16384x32 --ppo-updates 5 --sb3-steps 50000 --sb3-device cuda \
      --json "$out/jax_gpu.json" 2>&1 | tee "$out/jax_speed.txt"
    ;;
  quick)
    out=${2:?"usage: bash benchmarks/gpu.sh quick OUT [JAX_SPEED_ARGS...]"}
    shift 2
    mkdir -p "$out"
    export PYTHONUNBUFFERED=1
    python3 -c "import jax; print(jax.devices())" | tee "$out/gpu.txt"
    python3 -m pytest -q -p no:cacheprovider -n 0 tests/test_jax.py -k "reward_defaults or unpack_and_pack" 2>&1 \
      | tail -3 | tee "$out/check.txt"
    python3 benchmarks/jax_speed.py --quick "$@" --json "$out/jax_gpu.json" 2>&1 | tee "$out/jax_speed.txt"
    ;;
  *)
    echo "usage: bash benchmarks/gpu.sh fetch | run OUT | quick OUT [JAX_SPEED_ARGS...]" >&2
    exit 2
    ;;
esac
