"""PyTorch's column of the zoo table: torchvision's counterparts of ncnn's benchmark models.

python3 bench/torch_zoo_bench.py [LOOPS [NAME,...]]: each model (or the named ones) with random
weights (no download), batch 1, 224×224 (227 for squeezenet and alexnet, as ncnn's params; r3d_18
16 frames of 112², as bench/nets/r3d_18.param), CUDA eager fp32 and fp16, three
warm-up runs, then LOOPS timed forwards each ending in a synchronize. Prints the lines
`fpshader bench` prints: `NAME  min = …  max = …  median = …` (ms), one block per precision.
Models without a torchvision counterpart (ncnn's mobilenet v1) are left out.
"""
import sys
import time

import torch
import torchvision.models as tvm

MODELS = {
    "alexnet": (tvm.alexnet, 227),
    "efficientnet_b0": (tvm.efficientnet_b0, 224),
    "googlenet": (lambda: tvm.googlenet(aux_logits=False, init_weights=True), 224),
    "mnasnet": (tvm.mnasnet1_0, 224),
    "mobilenet_v2": (tvm.mobilenet_v2, 224),
    "mobilenet_v3": (tvm.mobilenet_v3_large, 224),
    "regnety_400m": (tvm.regnet_y_400mf, 224),
    "resnet18": (tvm.resnet18, 224),
    "resnet50": (tvm.resnet50, 224),
    "shufflenet_v2": (tvm.shufflenet_v2_x1_0, 224),
    "squeezenet": (tvm.squeezenet1_1, 227),
    "vgg16": (tvm.vgg16, 224),
    "r3d_18": (tvm.video.r3d_18, (3, 16, 112, 112)),
}


def main():
    loops = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    names = sys.argv[2].split(",") if len(sys.argv) > 2 else list(MODELS)
    dev = torch.device("cuda")
    for dtype in (torch.float32, torch.float16):
        print(f"PyTorch {torch.__version__} {torch.cuda.get_device_name(0)} {dtype}, eager, loops {loops}")
        for name in names:
            make, size = MODELS[name]
            model = make().eval().to(dev, dtype)
            shape = size if isinstance(size, tuple) else (3, size, size)
            x = torch.rand(1, *shape, device=dev, dtype=dtype)
            times = []
            with torch.inference_mode():
                for i in range(loops + 3):
                    torch.cuda.synchronize()
                    t = time.perf_counter()
                    model(x)
                    torch.cuda.synchronize()
                    if i >= 3:
                        times.append((time.perf_counter() - t) * 1e3)
            times.sort()
            print(f"{name:>20}  min = {times[0]:8.2f}  max = {times[-1]:8.2f}  median = {times[len(times) // 2]:8.2f}")


if __name__ == "__main__":
    main()
