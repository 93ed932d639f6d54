"""Writes the pnnx networks of tests/pnnx/: small ConvNeXt, ViT and EfficientViT (MIT and MSRA)
from torchvision's and timm's definitions with random weights, converted by pnnx (ncnn's own
converter), plus one input and PyTorch's output for it.

Needs torch, torchvision, timm and pnnx (PyPI); the tests read the committed files and never run
this. Usage: python tests/pnnx/make_models.py [OUT_DIR]   (default: this script's folder)
"""

import math
import os
import shutil
import sys
import tempfile

import numpy as np
import pnnx
import timm
import torch
import torchvision
from torchvision.models.convnext import CNBlockConfig, ConvNeXt


def networks():
    """name -> (module, input side), each scaled down from its published configuration."""
    return {
        # torchvision's ConvNeXt: depthwise 7x7, LayerNorm over channels, Linear (Gemm), GELU,
        # layer scale, Permute
        "convnext": (
            ConvNeXt(
                [CNBlockConfig(16, 32, 1), CNBlockConfig(32, 64, 1), CNBlockConfig(64, None, 2)],
                num_classes=10,
            ),
            64,
        ),
        # torchvision's ViT: patch embedding, class token, nn.MultiheadAttention, MLP
        "vit": (
            torchvision.models.VisionTransformer(
                image_size=32, patch_size=8, num_layers=2, num_heads=4, hidden_dim=64,
                mlp_dim=128, num_classes=10,
            ),
            32,
        ),
        # timm's EfficientViT (MIT): multi-scale linear attention (MatMul), HardSwish
        "efficientvit": (
            timm.models.efficientvit_mit.EfficientVit(
                widths=(8, 16, 24, 32, 64), depths=(1, 1, 1, 1, 1), head_dim=16,
                head_widths=(48, 64), num_classes=10,
            ),
            64,
        ),
        # timm's EfficientViT (MSRA): cascaded group attention (MatMul, Softmax), attention biases
        "efficientvit_msra": (
            timm.models.efficientvit_msra.EfficientVitMsra(
                img_size=64, embed_dim=(32, 48, 64), key_dim=(8, 8, 8), depth=(1, 1, 1),
                num_heads=(2, 2, 2), window_size=(4, 4, 4), num_classes=10,
            ),
            64,
        ),
    }


def randomize(net, gen):
    """Weights that keep activations near unit size through the depth (the published inits
    leave heads at zero and layer scales at 1e-6, which would test nothing)."""
    with torch.no_grad():
        for name, p in net.named_parameters():
            if p.dim() >= 2 and name.endswith("weight"):
                bound = math.sqrt(3.0 / max(1, p[0].numel()))
                p.copy_((torch.rand(p.shape, generator=gen) * 2 - 1) * bound)
            elif "layer_scale" in name or "gamma" in name:
                p.copy_(0.5 + 0.1 * torch.randn(p.shape, generator=gen))
            elif name.endswith("weight"):
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
    gen = torch.Generator().manual_seed(2025)
    for name, (net, side) in networks().items():
        net.eval()
        randomize(net, gen)
        x = torch.rand(1, 3, side, side, generator=gen)
        with tempfile.TemporaryDirectory() as work:
            pt = os.path.join(work, name + ".pt")
            # fp32 weights, so that PyTorch's output is a reference too; the trace check
            # compares graphs of two runs, which differ in names only for torchvision's ViT
            pnnx.export(net, pt, (x,), check_trace=False, fp16=False)
            for ext in ("param", "bin"):
                shutil.copy(os.path.join(work, f"{name}.ncnn.{ext}"), os.path.join(out, f"{name}.ncnn.{ext}"))
        with torch.no_grad():
            y = net(x)
        np.save(os.path.join(out, f"{name}.input.npy"), x[0].numpy())
        np.save(os.path.join(out, f"{name}.torch.npy"), y[0].numpy())
        print(name, tuple(x.shape), "->", tuple(y.shape))


if __name__ == "__main__":
    main()
