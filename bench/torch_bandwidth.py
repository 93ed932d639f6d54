"""Baseline for bench/bandwidth.rs: the same elementwise work through PyTorch CUDA.

python3 bench/torch_bandwidth.py [ELEMENTS [REPEATS]]  (defaults 2**28, 50)
Prints `key value` lines like the Rust example: relu as clamp_min(x, 0, out=y), add as
torch.add(a, b, out=c), fp32 and fp16, GB/s counting bytes read and written, CUDA events.
"""
import sys

import torch


def main():
    elements = int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 28
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 50
    dev = torch.device("cuda")
    print("device", torch.cuda.get_device_name(0).replace(" ", "_"))
    for dtype, name in ((torch.float32, "fp32"), (torch.float16, "fp16")):
        a = torch.randn(elements, device=dev, dtype=dtype)
        b = torch.randn(elements, device=dev, dtype=dtype)
        out = torch.empty_like(a)
        for op, inputs, fn in (
            ("relu", 1, lambda: torch.clamp_min(a, 0, out=out)),
            ("add", 2, lambda: torch.add(a, b, out=out)),
        ):
            for _ in range(3):
                fn()
            torch.cuda.synchronize()
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(repeats):
                fn()
            end.record()
            torch.cuda.synchronize()
            secs = start.elapsed_time(end) / 1e3 / repeats
            moved = (inputs + 1) * a.numel() * a.element_size()
            print(f"torch op {op} dtype {name} ms {secs * 1e3:.4f} GBps {moved / secs / 1e9:.1f}")


if __name__ == "__main__":
    main()
