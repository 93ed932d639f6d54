"""ncnn's side of `fpshader bench --llm`: ncnn's `benchncnn_llm` through ncnn's Python wheel.

python3 bench/ncnn_llm_bench.py DECODER.param [TOKENS [LOOPS [cpu|gpu]]]: the decoder and its
`_proj_out` param beside it with zero weights; a prefill of TOKENS tokens (embeddings of 0.01, a
causal mask, a RoPE cache of cos 1 and sin 0) with the key/value caches unfed, then one decode
step over the caches the prefill left, each step ending in the projection of the last token's
row, as benchncnn_llm does (its warm-up of 8 runs, then LOOPS timed ones). Prints the lines
`fpshader bench --llm` prints. The hidden size and half a head come from the param (the first
RMSNorm's width, the first Reshape's rows).
"""
import sys
import time

import ncnn
import numpy as np


def first_param(lines, kind, key):
    for line in lines:
        f = line.split()
        if f and f[0] == kind:
            kv = dict(x.split("=", 1) for x in f if "=" in x and not x.startswith("-"))
            return int(kv[key])
    raise SystemExit(f"no {kind} with {key}=")


def load(path, gpu):
    net = ncnn.Net()
    net.opt.use_vulkan_compute = gpu
    net.load_param(path)
    net.load_model(ncnn.DataReaderFromEmpty())
    return net


def main():
    path = sys.argv[1]
    tokens = int(sys.argv[2]) if len(sys.argv) > 2 else 256
    loops = int(sys.argv[3]) if len(sys.argv) > 3 else 4
    gpu = (sys.argv[4] if len(sys.argv) > 4 else "gpu") == "gpu"
    lines = open(path).read().split("\n")[2:]
    hidden = first_param(lines, "RMSNorm", "0")
    half = first_param(lines, "Reshape", "0") // 2
    cache_in, cache_out = [], []
    for line in lines:
        f = line.split()
        if f and f[0] == "SDPA" and int(f[3]) == 3:
            b = int(f[2])
            cache_in += f[4 + b - 2:4 + b]
            cache_out += f[4 + b + 1:4 + b + 3]
    decoder = load(path, gpu)
    proj = load(path.replace("_decoder", "_proj_out"), gpu)

    def step(n, past, cache):
        total = past + n
        mask = np.zeros((n, total), dtype=np.float32)
        for i in range(n):
            mask[i, past + i + 1:] = -np.inf
        ex = decoder.create_extractor()
        ex.input("in0", ncnn.Mat(np.full((n, hidden), 0.01, dtype=np.float32)).clone())
        ex.input("in1", ncnn.Mat(mask).clone())
        ex.input("in2", ncnn.Mat(np.ones((n, half), dtype=np.float32)).clone())
        ex.input("in3", ncnn.Mat(np.zeros((n, half), dtype=np.float32)).clone())
        for name, m in zip(cache_in, cache):
            ex.input(name, m)
        out = []
        for name in cache_out:
            out.append(ex.extract(name)[1])
        hidden_states = np.array(ex.extract("out0")[1])
        ex2 = proj.create_extractor()
        ex2.input("in0", ncnn.Mat(hidden_states[-1:].copy()).clone())
        ex2.extract("out0")
        return out

    past = step(tokens, 0, [])
    stem = path.split("/")[-1].replace("_decoder.ncnn.param", "")
    for name, n, before, cache, rate in ((f"{stem}_{tokens}_prefill", tokens, 0, [], tokens),
                                         (f"{stem}_{tokens}_decode", 1, tokens, past, 1)):
        for _ in range(8):
            step(n, before, cache)
        times = []
        for _ in range(loops):
            t = time.perf_counter()
            step(n, before, cache)
            times.append((time.perf_counter() - t) * 1e3)
        avg = sum(times) / len(times)
        print(f"{name:>30}  min = {min(times):8.2f}  avg = {avg:8.2f}  tokens/s = {rate * 1e3 / avg:9.2f}"
              f"  (at min {rate * 1e3 / min(times):9.2f})", flush=True)


if __name__ == "__main__":
    main()
