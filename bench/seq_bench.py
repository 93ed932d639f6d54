"""The sequence, signal and volume networks of tests/pnnx/make_seq_models.py at full size, for
`fpshader bench`: each defined here (random weights), converted by pnnx into OUT_DIR, and timed
in PyTorch eager (CUDA; fp32 and fp16, CUDA events, the best of LOOPS after a warm-up) and in
ncnn's wheel on Vulkan (the best of LOOPS extracts; ncnn's LSTM and GRU run on its CPU).

python3 bench/seq_bench.py OUT_DIR [LOOPS [NAME,...]]. Prints `shape NAME W,H[,C]` (the input as
`fpshader bench --shape` takes it), `torch NAME fp32|fp16 ms` (on the device), `torch-host NAME fp32|fp16 ms` (from a host tensor
to a host tensor, as `fpshader bench` times) and `ncnn NAME ms` lines; then run
`fpshader bench OUT_DIR/NAME.ncnn.param --bin OUT_DIR/NAME.ncnn.bin --shape ...` for each.
Needs torch, torchvision, pnnx and ncnn (PyPI); `python3 bench/seq_bench.py OUT_DIR LOOPS NAMES
torch` times PyTorch alone (no conversion, no ncnn), where pnnx and ncnn are not installed.
With TORCH_CUDNN_BENCHMARK=1 PyTorch lets cuDNN pick its algorithms by timing them
(`torch.backends.cudnn.benchmark`), as a user tuning for one input shape would.
"""
import os
import shutil
import sys
import tempfile
import time

import numpy as np
import torch
import torch.nn.functional as F
import torchvision
from torch import nn
from torchvision.ops import DeformConv2d


class Crnn(nn.Module):
    """CRNN (Shi et al.): a VGG-style stack over a 32 x 128 line, two BiLSTM layers of 256."""

    def __init__(self):
        super().__init__()
        c = [64, 128, 256, 256, 512, 512]
        layers, cin = [], 1
        for i, cout in enumerate(c):
            layers += [nn.Conv2d(cin, cout, 3, 1, 1), nn.BatchNorm2d(cout), nn.ReLU()]
            if i in (0, 1):
                layers.append(nn.MaxPool2d(2))
            if i in (3, 5):
                layers.append(nn.MaxPool2d((2, 1)))
            cin = cout
        self.cnn = nn.Sequential(*layers, nn.AdaptiveAvgPool2d((1, None)))
        self.rnn = nn.LSTM(512, 256, num_layers=2, bidirectional=True, batch_first=True)
        self.fc = nn.Linear(512, 37)

    def forward(self, x):
        f = self.cnn(x).squeeze(2).permute(0, 2, 1)
        y, _ = self.rnn(f)
        return self.fc(y)


class GruSeq(nn.Module):
    """A speech-style GRU: two layers of 256 over 100 steps of 80 features."""

    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(80, 256, num_layers=2, batch_first=True)
        self.fc = nn.Linear(256, 32)

    def forward(self, x):
        y, _ = self.gru(x)
        return self.fc(y)


class Audio1d(nn.Module):
    """A 1-D convolutional keyword spotter over 16000 samples."""

    def __init__(self):
        super().__init__()
        layers, cin = [nn.Conv1d(1, 64, 80, 4, 38), nn.BatchNorm1d(64), nn.ReLU(), nn.MaxPool1d(4)], 64
        for cout in (64, 128, 128, 256, 256):
            layers += [nn.Conv1d(cin, cin, 3, 1, 1, groups=cin), nn.Conv1d(cin, cout, 1),
                       nn.BatchNorm1d(cout), nn.ReLU(), nn.MaxPool1d(2)]
            cin = cout
        self.net = nn.Sequential(*layers, nn.AdaptiveAvgPool1d(1))
        self.fc = nn.Linear(256, 35)

    def forward(self, x):
        return self.fc(self.net(x).flatten(1))


class Stn(nn.Module):
    """A spatial transformer over 128 x 128 (affine_grid's grid as its base times theta)."""

    def __init__(self, side=128):
        super().__init__()
        self.side = side
        self.loc = nn.Sequential(nn.Conv2d(3, 32, 5, 2, 2), nn.ReLU(), nn.Conv2d(32, 64, 5, 2, 2),
                                 nn.ReLU(), nn.AdaptiveAvgPool2d(4))
        self.theta = nn.Linear(64 * 16, 6)
        lin = (torch.arange(side, dtype=torch.float32) * 2 + 1) / side - 1
        ys, xs = torch.meshgrid(lin, lin, indexing="ij")
        self.register_buffer("base", torch.stack([xs, ys, torch.ones_like(xs)], -1).view(1, -1, 3))
        self.head = torchvision.models.resnet18(num_classes=10)

    def forward(self, x):
        theta = self.theta(self.loc(x).flatten(1)).view(-1, 2, 3)
        grid = torch.matmul(self.base, theta.transpose(1, 2)).view(1, self.side, self.side, 2)
        return self.head(F.grid_sample(x, grid, align_corners=False))


class Deform(nn.Module):
    """A DCNv2 block: offsets and mask from a convolution, DeformConv2d of 128 over 128 x 128."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 128, 3, 2, 1)
        self.offset = nn.Conv2d(128, 18, 3, 1, 1)
        self.mask = nn.Conv2d(128, 9, 3, 1, 1)
        self.deform = DeformConv2d(128, 128, 3, 1, 1)

    def forward(self, x):
        x = F.relu(self.stem(x))
        return F.relu(self.deform(x, self.offset(x), torch.sigmoid(self.mask(x))))


class Stft(nn.Module):
    """torch.stft (n_fft 512, hop 128, Hann) over 16000 samples and back through torch.istft."""

    def forward(self, x):
        window = torch.hann_window(512, device=x.device, dtype=x.dtype)
        spec = torch.view_as_real(torch.stft(x, 512, 128, window=window, return_complex=True))
        return torch.istft(torch.view_as_complex(spec), 512, 128, window=window)


def networks():
    """name -> (module, input shape with its batch, fpshader's --shape)."""
    return {
        "crnn": (Crnn(), (1, 1, 32, 128), "128,32,1"),
        "gru_seq": (GruSeq(), (1, 100, 80), "80,100"),
        "audio1d": (Audio1d(), (1, 1, 16000), "16000,1"),
        "r3d_18": (torchvision.models.video.r3d_18(num_classes=10), (1, 3, 16, 112, 112), None),
        "stn": (Stn(), (1, 3, 128, 128), "128,128,3"),
        "deform": (Deform(), (1, 3, 256, 256), "256,256,3"),
        "stft": (Stft(), (1, 16000), "16000"),
    }


def torch_time(net, x, dtype, loops):
    net = net.to("cuda", dtype)
    x = x.to("cuda", dtype)
    best = float("inf")
    with torch.no_grad():
        for i in range(loops + 3):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            net(x)
            end.record()
            torch.cuda.synchronize()
            if i >= 3:
                best = min(best, start.elapsed_time(end))
    return best


def torch_host_time(net, x, dtype, loops):
    """As torch_time, from a host tensor to a host tensor (the copies in, as `fpshader bench`
    times its runs), by the host's clock after a synchronize."""
    net = net.to("cuda", dtype)
    best = float("inf")
    with torch.no_grad():
        for i in range(loops + 3):
            torch.cuda.synchronize()
            t = time.perf_counter()
            net(x.to("cuda", dtype)).float().cpu()
            if i >= 3:
                best = min(best, (time.perf_counter() - t) * 1000)
    return best


def ncnn_time(param, weights, x, loops):
    import ncnn

    net = ncnn.Net()
    net.opt.use_vulkan_compute = True
    net.load_param(param)
    net.load_model(weights)
    mat = ncnn.Mat(x).clone()
    best = float("inf")
    for i in range(loops + 2):
        ex = net.create_extractor()
        ex.input("in0", mat)
        t = time.perf_counter()
        ex.extract("out0")
        if i >= 2:
            best = min(best, (time.perf_counter() - t) * 1000)
    return best


def main():
    out = sys.argv[1]
    loops = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    only = sys.argv[3].split(",") if len(sys.argv) > 3 else None
    torch_only = len(sys.argv) > 4 and sys.argv[4] == "torch"
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(69)
    torch.backends.cudnn.benchmark = os.environ.get("TORCH_CUDNN_BENCHMARK") == "1"
    for name, (net, shape, fp_shape) in networks().items():
        # every network and input is made (the seed's sequence), only those named are timed
        net.eval()
        x = torch.rand(shape) * 2 - 1
        if only is not None and name not in only:
            continue
        # a second round over the same OUT_DIR keeps the first's conversion (the same seed)
        if not torch_only and not os.path.exists(os.path.join(out, f"{name}.ncnn.bin")):
            import pnnx

            with tempfile.TemporaryDirectory() as work:
                pnnx.export(net, os.path.join(work, name + ".pt"), (x,), check_trace=False, fp16=False)
                for ext in ("param", "bin"):
                    shutil.copy(os.path.join(work, f"{name}.ncnn.{ext}"), os.path.join(out, f"{name}.ncnn.{ext}"))
        if fp_shape is None:
            # a 4-D input: fpshader bench takes its shape from the Input layer's params
            fp_shape = ",".join(str(v) for v in reversed(shape[1:]))
        print("shape", name, fp_shape, flush=True)
        x0 = x[0].numpy().astype(np.float32)
        param, weights = (os.path.join(out, f"{name}.ncnn.{e}") for e in ("param", "bin"))
        if not torch_only:
            print("ncnn", name, f"{ncnn_time(param, weights, x0, loops):.3f}", flush=True)
        for dtype, label in ((torch.float32, "fp32"), (torch.float16, "fp16")):
            try:
                print("torch", name, label, f"{torch_time(net, x, dtype, loops):.3f}", flush=True)
                print("torch-host", name, label, f"{torch_host_time(net, x, dtype, loops):.3f}", flush=True)
            except RuntimeError as e:  # an op without a half kernel
                print("torch", name, label, "n/a", repr(e)[:80], flush=True)


if __name__ == "__main__":
    main()
