"""Writes the sequence, signal and volume networks of tests/pnnx/ (issue: every ncnn layer, 4 of
4): a CRNN text recognizer (convolutions, then a bidirectional LSTM), a GRU sequence model, a
1-D convolutional audio net, torchvision's r3d_18 structure at reduced widths (3-D convolutions),
a spatial transformer (affine_grid + grid_sample), torchvision's DeformConv2d, and torch.stft /
torch.istft, each with random weights, converted by pnnx (ncnn's own converter), plus one
input and PyTorch's output for it.

Needs torch, torchvision and pnnx (PyPI); the tests read the committed files and never run this.
A network pnnx cannot convert is reported and skipped. Usage:
python tests/pnnx/make_seq_models.py [OUT_DIR]   (default: this script's folder)
"""

import math
import os
import shutil
import sys
import tempfile

import numpy as np
import pnnx
import torch
import torch.nn.functional as F
from torch import nn
from torchvision.models.video.resnet import BasicBlock, Conv3DSimple
from torchvision.ops import DeformConv2d


class Crnn(nn.Module):
    """CRNN-style recognizer: a CNN over a 32 x 64 text line, its columns as a sequence, two
    bidirectional LSTM layers, per-step classes."""

    def __init__(self):
        super().__init__()
        self.cnn = nn.Sequential(
            nn.Conv2d(1, 16, 3, 1, 1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, 1, 1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d((2, 1)),
            nn.Conv2d(32, 32, 3, 1, 1), nn.ReLU(), nn.AdaptiveAvgPool2d((1, None)),
        )
        self.rnn = nn.LSTM(32, 24, num_layers=2, bidirectional=True, batch_first=True)
        self.fc = nn.Linear(48, 12)

    def forward(self, x):
        f = self.cnn(x)  # 1 x 32 x 1 x 32
        f = f.squeeze(2).permute(0, 2, 1)  # 1 x T x 32
        y, _ = self.rnn(f)
        return self.fc(y)


class GruSeq(nn.Module):
    """A two-layer GRU over 20 steps of 16 features, then a per-step projection."""

    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(16, 32, num_layers=2, batch_first=True)
        self.fc = nn.Linear(32, 8)

    def forward(self, x):
        y, _ = self.gru(x)
        return self.fc(torch.tanh(y))


class Audio1d(nn.Module):
    """A keyword-spotter-like 1-D convolutional net over 1024 samples."""

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv1d(1, 16, 9, 2, 4), nn.BatchNorm1d(16), nn.ReLU(),
            nn.Conv1d(16, 16, 5, 1, 2, groups=16), nn.Conv1d(16, 32, 1), nn.ReLU(),
            nn.MaxPool1d(2),
            nn.Conv1d(32, 32, 3, 2, 1, dilation=1), nn.ReLU(),
            nn.ConvTranspose1d(32, 16, 4, 2, 1), nn.ReLU(),
            nn.AdaptiveAvgPool1d(1),
        )
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        return self.fc(self.net(x).flatten(1))


class R3d(nn.Module):
    """torchvision's r3d_18 structure (its stem, BasicBlock and Conv3DSimple) at widths 16 and
    32, one block per stage: 3-D convolutions, batch norms, residual sums, 3-D pooling."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv3d(3, 16, (3, 7, 7), (1, 2, 2), (1, 3, 3), bias=False),
            nn.BatchNorm3d(16), nn.ReLU(inplace=True),
        )
        self.layer1 = BasicBlock(16, 16, Conv3DSimple)
        down = nn.Sequential(nn.Conv3d(16, 32, 1, (2, 2, 2), bias=False), nn.BatchNorm3d(32))
        self.layer2 = BasicBlock(16, 32, Conv3DSimple, stride=2, downsample=down)
        self.up = nn.ConvTranspose3d(32, 16, 2, 2)
        self.pool = nn.AdaptiveAvgPool3d(1)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = self.layer2(self.layer1(self.stem(x)))
        return self.fc(self.pool(F.relu(self.up(x))).flatten(1))


class Stn(nn.Module):
    """A spatial transformer: a localization net regresses an affine matrix, affine_grid's grid
    (its base grid times the matrix: pnnx leaves F.affine_grid itself unconverted) and
    grid_sample warp the image, a small classifier follows."""

    def __init__(self):
        super().__init__()
        # affine_grid's base: the output's pixel centres in [-1, 1] (align_corners=False), and 1
        side = 28
        lin = (torch.arange(side, dtype=torch.float32) * 2 + 1) / side - 1
        ys, xs = torch.meshgrid(lin, lin, indexing="ij")
        base = torch.stack([xs, ys, torch.ones_like(xs)], -1).view(1, side * side, 3)
        self.register_buffer("base", base)
        self.loc = nn.Sequential(nn.Conv2d(1, 8, 5, 2, 2), nn.ReLU(), nn.AdaptiveAvgPool2d(4))
        self.theta = nn.Linear(8 * 16, 6)
        self.head = nn.Sequential(nn.Conv2d(1, 8, 3, 1, 1), nn.ReLU(), nn.AdaptiveAvgPool2d(2))
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        theta = self.theta(self.loc(x).flatten(1)).view(-1, 2, 3)
        grid = torch.matmul(self.base, theta.transpose(1, 2)).view(1, 28, 28, 2)
        x = F.grid_sample(x, grid, align_corners=False)
        return self.fc(self.head(x).flatten(1))


class Deform(nn.Module):
    """torchvision's DeformConv2d (with a modulation mask), its offsets from a convolution."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, 1, 1)
        self.offset = nn.Conv2d(8, 2 * 9, 3, 1, 1)
        self.mask = nn.Conv2d(8, 9, 3, 1, 1)
        self.deform = DeformConv2d(8, 16, 3, 1, 1)
        self.out = nn.Conv2d(16, 4, 1)

    def forward(self, x):
        x = F.relu(self.stem(x))
        y = self.deform(x, self.offset(x), torch.sigmoid(self.mask(x)))
        return self.out(F.relu(y))


class Stft(nn.Module):
    """torch.stft over 1024 samples (Hann window of 64, hop 16), then back through torch.istft:
    the round trip through Spectrogram and InverseSpectrogram."""

    def forward(self, x):
        # pnnx converts stft followed by view_as_real, and istft of view_as_complex
        window = torch.hann_window(64)
        spec = torch.view_as_real(torch.stft(x, 64, 16, window=window, return_complex=True))
        return torch.istft(torch.view_as_complex(spec), 64, 16, window=window)


class Spectrum(nn.Module):
    """torch.stft's power spectrum (Hamming window of 48 in 64, hop 8, not centred)."""

    def forward(self, x):
        window = torch.hamming_window(48)
        spec = torch.stft(x, 64, 8, 48, window=window, center=False, return_complex=True)
        return torch.view_as_real(spec).pow(2).sum(-1)


def networks():
    """name -> (module, input shape with its batch)."""
    return {
        "crnn": (Crnn(), (1, 1, 32, 64)),
        "gru_seq": (GruSeq(), (1, 20, 16)),
        "audio1d": (Audio1d(), (1, 1, 1024)),
        "r3d": (R3d(), (1, 3, 8, 32, 32)),
        "stn": (Stn(), (1, 1, 28, 28)),
        "deform": (Deform(), (1, 3, 16, 16)),
        "stft": (Stft(), (1, 1024)),
        "spectrum": (Spectrum(), (1, 512)),
    }


def randomize(net, gen):
    """Weights that keep activations near unit size (as make_models.py's)."""
    with torch.no_grad():
        for name, p in net.named_parameters():
            if p.dim() >= 2 and "weight" in name:
                bound = math.sqrt(3.0 / max(1, p[0].numel()))
                p.copy_((torch.rand(p.shape, generator=gen) * 2 - 1) * bound)
            elif "weight" in name:
                p.copy_(1 + 0.2 * torch.randn(p.shape, generator=gen))
            else:
                p.copy_(0.1 * torch.randn(p.shape, generator=gen))
        for name, b in net.named_buffers():
            if name.endswith("running_mean"):
                b.copy_(0.1 * torch.randn(b.shape, generator=gen))
            elif name.endswith("running_var"):
                b.copy_(0.5 + torch.rand(b.shape, generator=gen))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    os.makedirs(out, exist_ok=True)
    gen = torch.Generator().manual_seed(2069)
    for name, (net, shape) in networks().items():
        net.eval()
        randomize(net, gen)
        x = torch.rand(shape, generator=gen) * 2 - 1
        try:
            with tempfile.TemporaryDirectory() as work:
                pt = os.path.join(work, name + ".pt")
                pnnx.export(net, pt, (x,), check_trace=False, fp16=False)
                for ext in ("param", "bin"):
                    src = os.path.join(work, f"{name}.ncnn.{ext}")
                    shutil.copy(src, os.path.join(out, f"{name}.ncnn.{ext}"))
        except Exception as e:  # a network pnnx cannot convert: reported, skipped
            print(name, "not converted:", repr(e)[:300])
            continue
        with torch.no_grad():
            y = net(x)
        np.save(os.path.join(out, f"{name}.input.npy"), x[0].numpy())
        np.save(os.path.join(out, f"{name}.torch.npy"), y[0].numpy())
        print(name, tuple(x.shape), "->", tuple(y.shape))


if __name__ == "__main__":
    main()
