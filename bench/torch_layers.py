"""PyTorch CUDA baseline for `layer_bench gpu`: the same layers at the same sizes.

python3 bench/torch_layers.py [VALUES [FC]] (defaults 2**26 values, fc 16384). Prints
`torch_layer NAME class C bytes B ms M GBps G` lines: relu (clamp_min out=), add (out=),
sigmoid, gelu, batch/layer/rms/group/instance norm over 16 channels of rows of 2048 (as
layer_bench's blob), softmax over rows of 2048, and a
fully connected layer on one row (F.linear, FC x FC weights plus bias), fp32 and fp16,
CUDA events over 20 repeats after a warm-up, bytes read + written.
"""
import sys

import torch
import torch.nn.functional as F


def timed(fn, repeats=20):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(repeats):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / repeats


def main():
    values = int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 26
    fc = int(sys.argv[2]) if len(sys.argv) > 2 else 16384
    dev = torch.device("cuda")
    print("device", torch.cuda.get_device_name(0).replace(" ", "_"))
    for dtype, name in ((torch.float32, "fp32"), (torch.float16, "fp16")):
        size = torch.tensor([], dtype=dtype).element_size()
        a = torch.randn(values, device=dev, dtype=dtype)
        b = torch.randn(values, device=dev, dtype=dtype)
        out = torch.empty_like(a)
        w = torch.randn(fc, fc, device=dev, dtype=dtype)
        bias = torch.randn(fc, device=dev, dtype=dtype)
        x = torch.randn(1, fc, device=dev, dtype=dtype)
        # the net's blob: 16 channels of rows of 2048
        img = a.view(1, 16, -1, 2048)
        rows = a.view(-1, 2048)
        ch = torch.randn(16, device=dev, dtype=dtype)
        ch_var = ch.abs() + 1
        row_w = torch.randn(2048, device=dev, dtype=dtype)
        for op, moved, fn in (
            ("relu", 2 * values * size, lambda: torch.clamp_min(a, 0, out=out)),
            ("binaryop_add", 3 * values * size, lambda: torch.add(a, b, out=out)),
            ("sigmoid", 2 * values * size, lambda: torch.sigmoid(a, out=out)),
            ("gelu", 2 * values * size, lambda: F.gelu(a)),
            ("batchnorm", 2 * values * size,
             lambda: F.batch_norm(img, ch, ch_var, ch, ch, training=False, eps=1e-5)),
            ("layernorm", 2 * values * size, lambda: F.layer_norm(rows, (2048,), row_w, row_w)),
            ("rmsnorm", 2 * values * size, lambda: F.rms_norm(rows, (2048,), row_w)),
            ("groupnorm", 2 * values * size, lambda: F.group_norm(img, 4, ch, ch)),
            ("instancenorm", 2 * values * size, lambda: F.instance_norm(img, weight=ch, bias=ch)),
            ("softmax", 2 * values * size, lambda: torch.softmax(a.view(-1, 2048), dim=-1)),
            ("innerproduct", fc * fc * size, lambda: F.linear(x, w, bias)),
        ):
            ms = timed(fn)
            print(f"torch_layer {op} class {name} bytes {moved} ms {ms:.4f} GBps {moved / ms / 1e6:.1f}")


if __name__ == "__main__":
    main()
