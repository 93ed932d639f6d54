"""Writes networks the zoo lacks as ncnn `.param` files for `fpshader bench` (weights zero: the
timing does not depend on them):

    python3 bench/make_params.py bench/nets

- realesrgan_x4plus.param (23 RRDB blocks) and realesrgan_x4plus_anime_6b.param (6): Real-ESRGAN's
  generator (RRDBNet), 64 features, growth 32, 4× by two nearest upsamplings, input 256² × 3: the
  layers and shapes of Real-ESRGAN's published ncnn models (their dense blocks' concats chained
  two at a time, the same values). bench/torch_rrdb.py is PyTorch's counterpart.
- r3d_18.param: torchvision's r3d_18 as pnnx writes it (batch norms folded into the
  convolutions), input 16 × 112² × 3, 400 classes; bench/seq_bench.py times PyTorch's.
- dcnv2.param: bench/seq_bench.py's DCNv2 block as pnnx writes it (a stride-2 stem to 128
  channels, the offsets and the sigmoid mask by 3×3 convolutions, DeformConv2d 128 → 128, ReLU),
  input 256² × 3: an 8 MB output, so the way back to the host weighs as much as the layers.
"""
import os
import sys


class Writer:
    def __init__(self):
        self.layers = []
        self.n = 0

    def blob(self, prefix):
        self.n += 1
        return f"{prefix}{self.n}"

    def add(self, kind, name, inputs, outputs, params):
        self.layers.append(f"{kind:<16} {name:<24} {len(inputs)} {len(outputs)} "
                           + " ".join(inputs + outputs) + (" " + params if params else ""))

    def split(self, x, count):
        outs = [self.blob("s") for _ in range(count)]
        self.add("Split", self.blob("split"), [x], outs, "")
        return outs

    def conv3d(self, x, cin, cout, k, stride, pad, relu):
        """k, stride and pad as (d, h, w)"""
        y = self.blob("c")
        kd, kh, kw = k
        sd, sh, sw = stride
        pd, ph, pw = pad
        self.add("Convolution3D", self.blob("conv"), [x], [y],
                 f"0={cout} 1={kw} 11={kh} 21={kd} 3={sw} 13={sh} 23={sd} 4={pw} 14={ph} 24={pd} "
                 f"5=1 6={cout * cin * kd * kh * kw}" + (" 9=1" if relu else ""))
        return y

    def basic_block(self, x, cin, cout, stride):
        """r3d_18's BasicBlock: two 3×3×3 convolutions, the shortcut a strided 1×1×1 one where
        the shape changes, the sum through a ReLU"""
        x_main, x_short = self.split(x, 2)
        y = self.conv3d(x_main, cin, cout, (3, 3, 3), (stride,) * 3, (1, 1, 1), True)
        y = self.conv3d(y, cout, cout, (3, 3, 3), (1, 1, 1), (1, 1, 1), False)
        if stride != 1 or cin != cout:
            x_short = self.conv3d(x_short, cin, cout, (1, 1, 1), (stride,) * 3, (0, 0, 0), False)
        s = self.blob("e")
        self.add("BinaryOp", self.blob("add"), [y, x_short], [s], "0=0")
        z = self.blob("r")
        self.add("ReLU", self.blob("relu"), [s], [z], "")
        return z

    def conv(self, x, cin, cout, lrelu):
        y = self.blob("c")
        self.add("Convolution", self.blob("conv"), [x], [y],
                 f"0={cout} 1=3 4=1 5=1 6={cout * cin * 9}")
        if not lrelu:
            return y
        z = self.blob("r")
        self.add("ReLU", self.blob("lrelu"), [y], [z], "0=2.000000e-01")
        return z

    def scaled_sum(self, a, b):
        """0.2 a + b"""
        y = self.blob("e")
        self.add("Eltwise", self.blob("sum"), [a, b], [y], "0=1 -23301=2,2.000000e-01,1.000000e+00")
        return y

    def concat(self, a, b):
        y = self.blob("k")
        self.add("Concat", self.blob("cat"), [a, b], [y], "")
        return y

    def rdb(self, x):
        x_conv, cat, x_res = self.split(x, 3)
        cin = 64
        for i in range(4):
            # the first growth convolution reads x; the others the concat so far
            src, cat = (x_conv, cat) if i == 0 else self.split(cat, 2)
            cat = self.concat(cat, self.conv(src, cin, 32, True))
            cin += 32
        out = self.conv(cat, cin, 64, False)
        return self.scaled_sum(out, x_res)

    def rrdb(self, x):
        x_in, x_res = self.split(x, 2)
        y = x_in
        for _ in range(3):
            y = self.rdb(y)
        return self.scaled_sum(y, x_res)

    def text(self):
        blobs = set()
        for line in self.layers:
            f = line.split()
            ins, outs = int(f[2]), int(f[3])
            blobs.update(f[4 + ins:4 + ins + outs])
        return "7767517\n" + f"{len(self.layers)} {len(blobs)}\n" + "\n".join(self.layers) + "\n"


def rrdbnet(blocks, size=256):
    w = Writer()
    w.add("Input", "in0", [], ["in0"], f"0={size} 1={size} 2=3")
    feat = w.conv("in0", 3, 64, False)
    feat_body, feat_res = w.split(feat, 2)
    y = feat_body
    for _ in range(blocks):
        y = w.rrdb(y)
    y = w.conv(y, 64, 64, False)
    y2 = w.blob("e")
    w.add("BinaryOp", w.blob("add"), [y, feat_res], [y2], "0=0")
    y = y2
    for _ in range(2):
        up = w.blob("u")
        w.add("Interp", w.blob("up"), [y], [up], "0=1 1=2.000000e+00 2=2.000000e+00")
        y = w.conv(up, 64, 64, True)
    y = w.conv(y, 64, 64, True)
    out = w.conv(y, 64, 3, False)
    # the last blob is the output: name it out0
    w.layers[-1] = w.layers[-1].replace(f" {out} ", " out0 ")
    return w.text()


def r3d_18(frames=16, size=112, classes=400):
    w = Writer()
    w.add("Input", "in0", [], ["in0"], f"0={size} 1={size} 11={frames} 2=3")
    y = w.conv3d("in0", 3, 64, (3, 7, 7), (1, 2, 2), (1, 3, 3), True)
    cin = 64
    for i, cout in enumerate([64, 128, 256, 512]):
        y = w.basic_block(y, cin, cout, 1 if i == 0 else 2)
        y = w.basic_block(y, cout, cout, 1)
        cin = cout
    g = w.blob("g")
    w.add("Pooling3D", w.blob("gap"), [y], [g], "0=1 4=1")
    w.add("InnerProduct", w.blob("fc"), [g], ["out0"], f"0={classes} 1=1 2={classes * 512}")
    return w.text()


def dcnv2(size=256, ch=128):
    w = Writer()
    w.add("Input", "in0", [], ["in0"], f"0={size} 1={size} 2=3")
    x = w.blob("c")
    w.add("Convolution", w.blob("stem"), ["in0"], [x],
          f"0={ch} 1=3 3=2 4=1 5=1 6={ch * 27} 9=1")
    x_off, x_mask, x_in = w.split(x, 3)
    off, mask, y = w.blob("o"), w.blob("m"), w.blob("d")
    w.add("Convolution", w.blob("offset"), [x_off], [off], f"0=18 1=3 4=1 5=1 6={18 * ch * 9}")
    w.add("Convolution", w.blob("mask"), [x_mask], [mask], f"0=9 1=3 4=1 5=1 6={9 * ch * 9} 9=4")
    w.add("DeformableConv2D", w.blob("deform"), [x_in, off, mask], [y],
          f"0={ch} 1=3 4=1 5=1 6={ch * ch * 9}")
    w.add("ReLU", w.blob("relu"), [y], ["out0"], "")
    return w.text()


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "bench/nets"
    os.makedirs(out, exist_ok=True)
    nets = [("realesrgan_x4plus", rrdbnet(23)), ("realesrgan_x4plus_anime_6b", rrdbnet(6)),
            ("r3d_18", r3d_18()), ("dcnv2", dcnv2())]
    for name, text in nets:
        with open(os.path.join(out, name + ".param"), "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
