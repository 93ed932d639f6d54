"""PyTorch's counterpart of bench/make_rrdbnet.py: Real-ESRGAN's generator (RRDBNet: 64 features,
growth 32, 4× by two nearest upsamplings) with random weights, batch 1, CUDA eager fp32 and fp16.

python3 bench/torch_rrdb.py [LOOPS] [SIZE]: three warm-up runs, then LOOPS timed forwards, on
the device (input there, a synchronize after each) and from a host tensor to a host tensor.
Prints `NAME  min = …  max = …  median = …` (ms) lines as `fpshader bench` does.
"""
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class DenseBlock(nn.Module):
    def __init__(self, nf=64, gc=32):
        super().__init__()
        self.convs = nn.ModuleList(nn.Conv2d(nf + i * gc, gc, 3, 1, 1) for i in range(4))
        self.last = nn.Conv2d(nf + 4 * gc, nf, 3, 1, 1)

    def forward(self, x):
        feats = [x]
        for conv in self.convs:
            feats.append(F.leaky_relu(conv(torch.cat(feats, 1)), 0.2))
        return self.last(torch.cat(feats, 1)) * 0.2 + x


class RRDB(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.Sequential(DenseBlock(), DenseBlock(), DenseBlock())

    def forward(self, x):
        return self.blocks(x) * 0.2 + x


class RRDBNet(nn.Module):
    def __init__(self, blocks):
        super().__init__()
        self.first = nn.Conv2d(3, 64, 3, 1, 1)
        self.body = nn.Sequential(*[RRDB() for _ in range(blocks)])
        self.body_conv = nn.Conv2d(64, 64, 3, 1, 1)
        self.up1 = nn.Conv2d(64, 64, 3, 1, 1)
        self.up2 = nn.Conv2d(64, 64, 3, 1, 1)
        self.hr = nn.Conv2d(64, 64, 3, 1, 1)
        self.last = nn.Conv2d(64, 3, 3, 1, 1)

    def forward(self, x):
        feat = self.first(x)
        feat = feat + self.body_conv(self.body(feat))
        feat = F.leaky_relu(self.up1(F.interpolate(feat, scale_factor=2, mode="nearest")), 0.2)
        feat = F.leaky_relu(self.up2(F.interpolate(feat, scale_factor=2, mode="nearest")), 0.2)
        return self.last(F.leaky_relu(self.hr(feat), 0.2))


def timed(fn, loops):
    times = []
    for i in range(loops + 3):
        torch.cuda.synchronize()
        t = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        if i >= 3:
            times.append((time.perf_counter() - t) * 1e3)
    times.sort()
    return times


def main():
    loops = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    size = int(sys.argv[2]) if len(sys.argv) > 2 else 256
    dev = torch.device("cuda")
    torch.backends.cudnn.benchmark = True
    for dtype in (torch.float32, torch.float16):
        print(f"PyTorch {torch.__version__} {torch.cuda.get_device_name(0)} {dtype}, eager, {size}²")
        for name, blocks in [("realesrgan_x4plus", 23), ("realesrgan_x4plus_anime_6b", 6)]:
            model = RRDBNet(blocks).eval().to(dev, dtype)
            host = torch.rand(1, 3, size, size, dtype=dtype).pin_memory()
            x = host.to(dev)
            with torch.inference_mode():
                for label, fn in [("device", lambda: model(x)), ("host", lambda: model(host.to(dev)).cpu())]:
                    t = timed(fn, loops)
                    print(f"{name + ' ' + label:>36}  min = {t[0]:8.2f}  max = {t[-1]:8.2f}  median = {t[len(t) // 2]:8.2f}")


if __name__ == "__main__":
    main()
