"""ncnn's side of bench/layer_bench.rs: one model timed in ncnn's wheel on the CPU.

Argument: a JSON object {"param", "bin", "inputs": [{"name", "file", "shape"}], "threads",
"loops"}; inputs raw little-endian fp32 in numpy order. Runs fp32 with packing on (like the
Rust side) and prints the minimum of `loops` extracts in milliseconds.
"""
import json
import sys
import time

import ncnn
import numpy as np

spec = json.loads(sys.argv[1])
net = ncnn.Net()
net.opt.use_vulkan_compute = False
net.opt.num_threads = spec["threads"]
net.opt.use_packing_layout = True
for flag in ("use_fp16_packed", "use_fp16_storage", "use_fp16_arithmetic", "use_bf16_storage"):
    setattr(net.opt, flag, False)
if net.load_param(spec["param"]) != 0 or net.load_model(spec["bin"]) != 0:
    sys.exit("ncnn could not load the model")
mats = []
for i in spec["inputs"]:
    x = np.fromfile(i["file"], dtype=np.float32).reshape(i["shape"])
    mats.append((i["name"], ncnn.Mat(x).clone()))


def run():
    ex = net.create_extractor()
    for name, m in mats:
        ex.input(name, m)
    ret, _ = ex.extract("out")
    if ret != 0:
        sys.exit(f"extract failed: {ret}")


run()
best = float("inf")
for _ in range(spec["loops"]):
    t = time.perf_counter()
    run()
    best = min(best, time.perf_counter() - t)
print(f"{best * 1e3:.4f}")
