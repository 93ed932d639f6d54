"""Runs an ncnn model with ncnn's own wheel (CPU, plain fp32) for fpshader's tests.

Argument: a JSON object (or `@FILE` holding one) {"param" (a .param, or a .param.bin whose blobs are named by index),
"bin", "inputs": [{"name", "file", "shape"}], "outputs":
[{"name", "file"}]}; inputs are raw little-endian fp32 in numpy (c, h, w) order. Prints a JSON
list of the outputs' shapes.
"""
import json
import sys

import ncnn
import numpy as np

arg = sys.argv[1]
if arg.startswith("@"):
    # a batch of many cases passes its spec in a file: too long for an argument
    with open(arg[1:]) as f:
        spec = json.load(f)
else:
    spec = json.loads(arg)
net = ncnn.Net()
net.opt.use_vulkan_compute = False
net.opt.num_threads = 1
for flag in ("use_packing_layout", "use_fp16_packed", "use_fp16_storage",
             "use_fp16_arithmetic", "use_bf16_storage"):
    setattr(net.opt, flag, False)
binary = spec["param"].endswith(".param.bin")
load = net.load_param_bin if binary else net.load_param
if load(spec["param"]) != 0:
    sys.exit("ncnn could not load the param")
if net.load_model(spec["bin"]) != 0:
    sys.exit("ncnn could not load the model")

def bf16_blobs(path):
    """The blobs a Cast to bf16 (`1=4`) writes: ncnn's Mat does not say which 16-bit type it
    holds, and its buffer reads as fp16."""
    if binary:
        return set()
    blobs = set()
    with open(path) as f:
        for line in f.read().splitlines()[2:]:
            words = line.split()
            if len(words) < 4 or words[0] != "Cast":
                continue
            bottoms, tops = int(words[2]), int(words[3])
            names = words[4 + bottoms:4 + bottoms + tops]
            if "1=4" in words[4 + bottoms + tops:]:
                blobs.update(names)
    return blobs


bf16 = bf16_blobs(spec["param"])
ex = net.create_extractor()
for i in spec["inputs"]:
    x = np.fromfile(i["file"], dtype=np.float32).reshape(i["shape"])
    if i.get("int"):
        # indices (Embed): ncnn reads them as int32
        x = x.astype(np.int32)
    # ncnn.Mat(array) wraps the array's memory; clone so in-place layers own their data
    ex.input(int(i["name"]) if binary else i["name"], ncnn.Mat(x).clone())
shapes = []
for o in spec["outputs"]:
    ret, out = ex.extract(int(o["name"]) if binary else o["name"])
    if ret != 0:
        sys.exit(f"ncnn extract {o['name']} failed: {ret}")
    if out.empty():
        # no detection: an empty mat, which numpy cannot take
        np.zeros((0,), dtype=np.float32).tofile(o["file"])
        shapes.append([0])
        continue
    if out.elempack != 1:
        # a Packing layer's output keeps its layout even with packing off: unpack it as ncnn's
        # own net would for a user
        out = ncnn.convert_packing(out, 1)
    if o["name"] in bf16:
        bits = np.array(out).view(np.uint16).astype(np.uint32) << 16
        a = bits.view(np.float32)
    else:
        a = np.array(out, dtype=np.float32)
    a.tofile(o["file"])
    shapes.append(list(a.shape))
print(json.dumps(shapes))
