#!/usr/bin/env bash
# On a machine with a CUDA GPU: the GPU tests and the benchmarks' GPU modes, side by side with
# the CPU on the same machine (issue 21). Results and logs go to $1 (default gpu_results/):
#   pytest.log                      tests/test_cuda.py: CUDA runs equal the CPU runs up to rounding
#   az_cpu/, az_cuda/, az_cuda_1024/ bench_alphazero.py: self-play positions/s, network on CPU/GPU
#   ppo/                            bench_ppo.py --device cuda: PPO steps/s, learner on CPU and GPU
# Each step has its own time limit so that one failure leaves the others' results.
set -uo pipefail
out=${1:-gpu_results}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
python3 - <<'EOF' 2>&1 | tee "$out/machine.txt"
import os, platform, numba, numpy, torch
print(platform.platform(), os.cpu_count(), "CPUs, python", platform.python_version())
print("torch", torch.__version__, "numba", numba.__version__, "numpy", numpy.__version__)
print("GPU:", torch.cuda.get_device_name(0) if torch.cuda.is_available() else None)
EOF
timeout 240 python3 -m pytest -q -p no:cacheprovider tests/test_cuda.py 2>&1 | tee "$out/pytest.log"
kalaha_6x4=agents/pretrained/kalaha_6x4
timeout 120 python3 benchmarks/bench_alphazero.py --checkpoint $kalaha_6x4 --device cpu \
    --results-dir "$out/az_cpu" 2>&1 | tail -20
timeout 90 python3 benchmarks/bench_alphazero.py --checkpoint $kalaha_6x4 --device cuda \
    --memory-games 4 --memory-sims 2 --results-dir "$out/az_cuda" 2>&1 | tail -20
timeout 90 python3 benchmarks/bench_alphazero.py --checkpoint $kalaha_6x4 --device cuda \
    --games 1024 --rounds 1 --memory-games 4 --memory-sims 2 --results-dir "$out/az_cuda_1024" \
    2>&1 | tail -20
timeout 150 python3 benchmarks/bench_ppo.py --device cuda --rounds 3 --steps 300000 \
    --results-dir "$out/ppo" 2>&1 | tail -40
