"""ncnn's side of `cargo xtask bench zoo`: benchncnn through ncnn's Python wheel.

python3 bench/ncnn_zoo_bench.py DIR [LOOPS [THREADS [cpu|gpu]]]: every `.param` in DIR with
zero weights (`DataReaderFromEmpty`, as benchncnn), the input its Input layer declares, a
warm-up (at least three runs and one second, as `fpshader bench`), then LOOPS timed extracts of the last blob. Prints the lines `fpshader bench`
prints: `NAME  min = …  max = …  median = …` (ms). ncnn's default options (fp16 storage and
arithmetic where the device has them, packing on).
"""
import os
import sys
import time

import ncnn
import numpy as np


def input_and_output(path):
    shape, name, last = None, None, None
    with open(path) as f:
        text = f.read().split("\n")
    # ncnn reads as many layers as the header declares (nanodet_m's file holds one more)
    lines = text[2:2 + int(text[1].split()[0])]
    for line in lines:
        fields = line.split()
        if not fields:
            continue
        bottoms, tops = int(fields[2]), int(fields[3])
        if fields[0] == "Input":
            kv = dict(x.split("=", 1) for x in fields[4 + bottoms + tops:] if "=" in x)
            shape = (int(kv["2"]), int(kv["1"]), int(kv["0"]))
            name = fields[4 + bottoms]
        last = fields[4 + bottoms + tops - 1]
    return name, shape, last


def load(path, threads, gpu):
    """The net at `path` with zero weights on `threads` threads (the GPU with `gpu`), its input
    blob's name, an input of the shape its Input layer declares, and its last blob's name."""
    name, shape, out = input_and_output(path)
    net = ncnn.Net()
    net.opt.use_vulkan_compute = gpu
    net.opt.num_threads = threads
    net.load_param(path)
    net.load_model(ncnn.DataReaderFromEmpty())
    # ncnn.Mat(array) wraps the array's memory: a temporary array can be freed before the
    # clone reads it (a segfault on 128×112×112 inputs)
    values = np.full(shape, 0.5, dtype=np.float32)
    x = ncnn.Mat(values).clone()
    return net, name, x, out


def main():
    folder = sys.argv[1]
    loops = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    threads = int(sys.argv[3]) if len(sys.argv) > 3 else os.cpu_count()
    gpu = (sys.argv[4] if len(sys.argv) > 4 else "gpu") == "gpu"
    where = ncnn.get_gpu_info(0).device_name() if gpu else "CPU"
    print(f"ncnn {where}, loops {loops}, threads {threads}")
    for file in sorted(f for f in os.listdir(folder) if f.endswith(".param")):
        path = os.path.join(folder, file)
        net, name, x, out = load(path, threads, gpu)

        def once():
            t = time.perf_counter()
            ex = net.create_extractor()
            ex.input(name, x)
            ret, _ = ex.extract(out)
            if ret != 0:
                # a failed extract returns at once: its time would read as a fast model
                raise SystemExit(f"{file}: ncnn's extract of {out} failed ({ret})")
            return (time.perf_counter() - t) * 1e3

        # warm-up as `fpshader bench` does: at least 3 runs and one second (the GPU's clocks)
        start, runs = time.perf_counter(), 0
        while runs < 3 or (time.perf_counter() - start < 1.0 and runs < 10000):
            once()
            runs += 1
        times = sorted(once() for _ in range(loops))
        stem = file[: -len(".param")]
        print(f"{stem:>20}  min = {times[0]:8.2f}  max = {times[-1]:8.2f}  median = {times[len(times) // 2]:8.2f}")


if __name__ == "__main__":
    main()
