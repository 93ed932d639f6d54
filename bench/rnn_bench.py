"""Baselines for the recurrent layers: an LSTM and a GRU of 512 units over 256 steps of 512
features, batch 1 (bench/rnn/*.param, which `fpshader bench` times with zero weights).

python3 bench/rnn_bench.py [LOOPS]. Prints `torch NAME dtype ms` for torch.nn.LSTM / nn.GRU on
CUDA (cuDNN; fp32 and fp16; CUDA events, the best of LOOPS runs after a warm-up), then
`ncnn NAME ms` for ncnn's wheel on the same params with zero weights (its LSTM and GRU have no
Vulkan shader: the CPU, all threads; the best of LOOPS extracts).
"""
import os
import sys
import time

import numpy as np

LOOPS = int(sys.argv[1]) if len(sys.argv) > 1 else 20
HERE = os.path.dirname(os.path.abspath(__file__))
UNITS, STEPS = 512, 256


def torch_side():
    import torch

    dev = torch.device("cuda")
    print("device", torch.cuda.get_device_name(0).replace(" ", "_"))
    for name, cls in (("lstm512", torch.nn.LSTM), ("gru512", torch.nn.GRU)):
        for dtype in (torch.float32, torch.float16):
            net = cls(UNITS, UNITS, batch_first=True).to(dev, dtype).eval()
            x = torch.randn(1, STEPS, UNITS, device=dev, dtype=dtype)
            best = float("inf")
            with torch.no_grad():
                for i in range(LOOPS + 3):
                    start = torch.cuda.Event(enable_timing=True)
                    end = torch.cuda.Event(enable_timing=True)
                    start.record()
                    net(x)
                    end.record()
                    torch.cuda.synchronize()
                    if i >= 3:
                        best = min(best, start.elapsed_time(end))
            print("torch", name, str(dtype).split(".")[1], f"{best:.3f}")


def ncnn_side():
    import ncnn

    # zero weights: each tagged load a zero (fp32) tag and zeros; the bias raw
    sizes = {"lstm512": [4 * UNITS * UNITS, 4 * UNITS, 4 * UNITS * UNITS],
             "gru512": [3 * UNITS * UNITS, 4 * UNITS, 3 * UNITS * UNITS]}
    for name, blocks in sizes.items():
        path = f"/tmp/{name}.bin"
        with open(path, "wb") as f:
            for n in blocks:
                f.write(b"\0" * (4 + 4 * n))
        net = ncnn.Net()
        net.opt.use_vulkan_compute = False
        net.opt.num_threads = os.cpu_count()
        net.load_param(os.path.join(HERE, "rnn", name + ".param"))
        net.load_model(path)
        x = ncnn.Mat(np.random.rand(STEPS, UNITS).astype(np.float32)).clone()
        best = float("inf")
        for i in range(LOOPS + 2):
            ex = net.create_extractor()
            ex.input("in0", x)
            t = time.perf_counter()
            ex.extract("out0")
            if i >= 2:
                best = min(best, (time.perf_counter() - t) * 1000)
        print("ncnn", name, f"{best:.3f}")


if __name__ == "__main__":
    torch_side()
    ncnn_side()
