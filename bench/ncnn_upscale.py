"""The same upscale through ncnn's own wheel, for `cargo xtask demo`: the whole picture in one
run (edge pixels repeated `prepadding` wide around it, right and bottom padded to `align`), the
output PNG, the time of the run, and the PSNR of fpshader's PNG against ncnn's.

    python ncnn_upscale.py MODEL.param MODEL.bin IN.png NCNN_OUT.png FPSHADER_OUT.png \
        [--prepadding 7] [--align 1] [--scale 2] [--input NAME] [--output NAME]
"""

import argparse
import time

import ncnn
import numpy as np
from PIL import Image


def main():
    ap = argparse.ArgumentParser()
    for name in ["param", "bin", "image", "out", "fpshader_out"]:
        ap.add_argument(name)
    ap.add_argument("--prepadding", type=int, default=7)
    ap.add_argument("--align", type=int, default=1)
    ap.add_argument("--scale", type=int, default=2)
    ap.add_argument("--input", default="Input1")
    ap.add_argument("--output", default=None)
    args = ap.parse_args()

    rgb = np.asarray(Image.open(args.image).convert("RGB"), dtype=np.float32) / 255.0
    h, w, _ = rgb.shape
    p, s = args.prepadding, args.scale
    extra = lambda n: -(-n // args.align) * args.align - n
    ey, ex = extra(h + 2 * p), extra(w + 2 * p)
    padded = np.pad(rgb, ((p, p + ey), (p, p + ex), (0, 0)), mode="edge")
    x = np.ascontiguousarray(padded.transpose(2, 0, 1))

    net = ncnn.Net()
    gpu = ncnn.get_gpu_count() > 0
    net.opt.use_vulkan_compute = gpu
    net.load_param(args.param)
    net.load_model(args.bin)
    output = args.output
    if output is None:
        names = net.output_names()
        output = names[-1]

    def once():
        ex_ = net.create_extractor()
        ex_.input(args.input, ncnn.Mat(x).clone())
        _, y = ex_.extract(output)
        return np.array(y)

    once()  # warm-up: pipelines
    t = time.perf_counter()
    y = once()
    ms = (time.perf_counter() - t) * 1e3
    yh, yw = y.shape[1:]
    ih, iw = x.shape[1:]
    oy = s * p + (yh - s * ih) // 2
    ox = s * p + (yw - s * iw) // 2
    y = y[:, oy : oy + s * h, ox : ox + s * w].transpose(1, 2, 0)
    ours = np.asarray(Image.open(args.fpshader_out).convert("RGB"), dtype=np.float64)
    theirs = np.clip(np.round(y * 255.0), 0, 255)
    Image.fromarray(theirs.astype(np.uint8)).save(args.out)
    mse = np.mean((ours - theirs) ** 2)
    psnr = float("inf") if mse == 0 else 10 * np.log10(255.0**2 / mse)
    where = "Vulkan" if gpu else "CPU"
    print(f"ncnn ({where}): {ms:.1f} ms for the whole picture in one run -> {args.out}")
    print(f"PSNR fpshader vs ncnn: {psnr:.2f} dB")


if __name__ == "__main__":
    main()
