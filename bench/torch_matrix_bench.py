"""PyTorch's column of the matrix-layer table (issue 25's figures), on CUDA.

python3 bench/torch_matrix_bench.py [ROUNDS]: each measurement ROUNDS times (default 5),
best round printed; a round is 20 repeats between CUDA events after 3 warm-ups.
- `torch_matrix gemm_4096 …`: `torch.matmul` fp16 4096³ and `F.linear` (x · Wᵀ + bias, the
  Gemm layer's form in `.bgpu/attn/gemm_4096.param`), TFLOP/s of the 2·M·N·K products;
- `torch_matrix matmul_1024 …`: `torch.matmul` fp16 1024³;
- `torch_matrix sdpa_1024 …`: `F.scaled_dot_product_attention` fp16, 16 heads × 1024 tokens ×
  64 (4·H·L²·D FLOPs);
- `torch_matrix mha_1024 …`: `nn.MultiheadAttention(1024, 16)` fp16 self-attention on 1024 tokens;
- `torch_matrix NAME linear …` for each Gemm of `bench/matrix/*.param` (`NAME.param`: an
  M × K input times a constant N × K weight, `F.linear` fp16 with bias), the shapes
  `fpshader bench bench/matrix/NAME.param --profile` times;
- `torch_net NAME DTYPE device_ms D host_ms H`: torchvision's `convnext_tiny()` and `vit_b_16()`
  (random weights), batch 1, 224², eager fp32 and fp16; device_ms with the input already on the
  GPU, host_ms with the input uploaded from and the output read back to host memory, as
  `fpshader bench` and ncnn's extract measure (best of ROUNDS × 20 forwards).
"""
import glob
import os
import sys
import time

import torch
import torch.nn.functional as F
import torchvision.models as tvm

from torch_layers import timed


def best_ms(fn, rounds):
    """The best of `rounds` of torch_layers.timed (3 warm-ups, 20 repeats between CUDA events)."""
    return min(timed(fn) for _ in range(rounds))


def report(name, ms, flops):
    print(f"torch_matrix {name} ms {ms:.4f} TFLOPs {flops / ms / 1e9:.1f}")


def gemm_shape(path):
    """(M, N, K) of a `bench/matrix` param's Gemm with a constant B (its input's 1=h rows of 0=w),
    None for another model."""
    fields = {}
    for line in open(path):
        f = line.split()
        if f and f[0] in ("Input", "Gemm"):
            fields[f[0]] = dict(x.split("=", 1) for x in f if "=" in x)
    if "Gemm" not in fields or fields["Gemm"].get("5") != "1":
        return None
    return int(fields["Input"]["1"]), int(fields["Gemm"]["8"]), int(fields["Gemm"]["9"])


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    dev = torch.device("cuda")
    h = torch.float16
    print(f"PyTorch {torch.__version__} {torch.cuda.get_device_name(0)}")
    with torch.inference_mode():
        n = 4096
        a = torch.randn(n, n, device=dev, dtype=h)
        b = torch.randn(n, n, device=dev, dtype=h)
        bias = torch.randn(n, device=dev, dtype=h)
        report("gemm_4096 matmul", best_ms(lambda: torch.matmul(a, b), rounds), 2 * n**3)
        report("gemm_4096 linear", best_ms(lambda: F.linear(a, b, bias), rounds), 2 * n**3)
        m = 1024
        a1 = torch.randn(m, m, device=dev, dtype=h)
        b1 = torch.randn(m, m, device=dev, dtype=h)
        report("matmul_1024 matmul", best_ms(lambda: torch.matmul(a1, b1), rounds), 2 * m**3)
        for path in sorted(glob.glob(os.path.join(os.path.dirname(__file__), "matrix", "*.param"))):
            shape = gemm_shape(path)
            if shape is None:
                continue
            mm, nn, kk = shape
            x = torch.randn(mm, kk, device=dev, dtype=h)
            w = torch.randn(nn, kk, device=dev, dtype=h)
            wb = torch.randn(nn, device=dev, dtype=h)
            name = os.path.basename(path)[: -len(".param")]
            report(f"{name} linear", best_ms(lambda: F.linear(x, w, wb), rounds), 2 * mm * nn * kk)
        q, k, v = (torch.randn(1, 16, 1024, 64, device=dev, dtype=h) for _ in range(3))
        report(
            "sdpa_1024 sdpa",
            best_ms(lambda: F.scaled_dot_product_attention(q, k, v), rounds),
            4 * 16 * 1024 * 1024 * 64,
        )
        mha = torch.nn.MultiheadAttention(1024, 16, batch_first=True).to(dev, h).eval()
        x = torch.randn(1, 1024, 1024, device=dev, dtype=h)
        # four projections (2·L·E² each) and the attention (4·L²·E)
        report(
            "mha_1024 mha",
            best_ms(lambda: mha(x, x, x, need_weights=False), rounds),
            4 * 2 * 1024 * 1024**2 + 4 * 1024**2 * 1024,
        )
        for name, make in (("convnext_tiny", tvm.convnext_tiny), ("vit_b_16", tvm.vit_b_16)):
            for dtype in (torch.float32, h):
                net = make().eval().to(dev, dtype)
                x = torch.rand(1, 3, 224, 224, device=dev, dtype=dtype)
                xh = x.cpu()
                device_ms = best_ms(lambda: net(x), rounds)

                def host():
                    net(xh.to(dev)).cpu()

                for _ in range(3):
                    host()
                best = float("inf")
                for _ in range(rounds * 20):
                    t = time.perf_counter()
                    host()
                    best = min(best, (time.perf_counter() - t) * 1e3)
                print(f"torch_net {name} {str(dtype)[6:]} device_ms {device_ms:.3f} host_ms {best:.3f}")


if __name__ == "__main__":
    main()
