"""numpy's (OpenBLAS) fp32 GEMM on one shape: the baseline bench/cpu_gemm.rs measures in the
same run. Threads come from OPENBLAS_NUM_THREADS, which the caller sets before numpy loads.

usage: python3 bench/numpy_gemm.py M K N RUNS   (prints GFLOP/s, best of RUNS)
"""
import sys
import time

import numpy as np

m, k, n, runs = (int(v) for v in sys.argv[1:5])
a = (np.arange(m * k, dtype=np.float32) % 7 * 0.1).reshape(m, k)
b = (np.arange(k * n, dtype=np.float32) % 5 * 0.1).reshape(k, n)
c = np.empty((m, n), dtype=np.float32)
np.matmul(a, b, out=c)
best = float("inf")
for _ in range(runs):
    t = time.perf_counter()
    np.matmul(a, b, out=c)
    best = min(best, time.perf_counter() - t)
print(f"{2.0 * m * k * n / best / 1e9:.1f}")
