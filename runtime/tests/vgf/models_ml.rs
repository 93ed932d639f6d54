//! The ML models run against numpy: the check script and the TOSA graphs of small networks.

use super::*;

/// numpy's side of the end-to-end test: `prepare` writes seeded inputs (`input_<i>.npy` for
/// the scenario runner, `.raw` for fpshader); `check` computes the model's outputs with numpy
/// and compares every `<run>.out<j>.npy|.raw` in the folder against them.
pub(crate) const NUMPY_CHECK: &str = r#"
import glob, json, os, sys
import numpy as np
d, model, mode = sys.argv[1], sys.argv[2], sys.argv[3]

def window(x, kh, kw, stride, pad, dil, fill):
    n, h, w, c = x.shape
    xp = np.pad(x, ((0, 0), (pad[0], pad[1]), (pad[2], pad[3]), (0, 0)), constant_values=fill)
    oh = (h - 1 + pad[0] + pad[1] - (kh - 1) * dil[0]) // stride[0] + 1
    ow = (w - 1 + pad[2] + pad[3] - (kw - 1) * dil[1]) // stride[1] + 1
    out = np.empty((n, oh, ow, kh, kw, c), np.float64)
    for ky in range(kh):
        for kx in range(kw):
            y, x0 = ky * dil[0], kx * dil[1]
            out[:, :, :, ky, kx, :] = xp[:, y:y + (oh - 1) * stride[0] + 1:stride[0],
                                         x0:x0 + (ow - 1) * stride[1] + 1:stride[1], :]
    return out

def conv2d(x, w, b, pad, stride, dil):
    return np.einsum('nyxhwc,ohwc->nyxo', window(x, w.shape[1], w.shape[2], stride, pad, dil, 0), w) + b

def depthwise(x, w, b, pad, stride, dil):
    r = np.einsum('nyxhwc,hwcm->nyxcm', window(x, w.shape[0], w.shape[1], stride, pad, dil, 0), w)
    return r.reshape(r.shape[:3] + (-1,)) + b

def max_pool(x, k, stride, pad):
    return window(x, k[0], k[1], stride, pad, (1, 1), -np.inf).max(axis=(3, 4))

def avg_pool(x, k, stride, pad):
    s = window(x, k[0], k[1], stride, pad, (1, 1), 0).sum(axis=(3, 4))
    return s / window(np.ones_like(x), k[0], k[1], stride, pad, (1, 1), 0).sum(axis=(3, 4))

def transpose_conv(x, w, b, out_pad, stride):
    n, ih, iw, _ = x.shape
    oc, kh, kw, _ = w.shape
    o = np.zeros((n, (ih - 1) * stride[0] + out_pad[0] + out_pad[1] + kh,
                  (iw - 1) * stride[1] + out_pad[2] + out_pad[3] + kw, oc))
    for iy in range(ih):
        for ix in range(iw):
            for ky in range(kh):
                for kx in range(kw):
                    o[:, iy * stride[0] + out_pad[0] + ky, ix * stride[1] + out_pad[2] + kx, :] += \
                        x[:, iy, ix, :] @ w[:, ky, kx, :].T
    return o + b

def apply_scale(v, m, s, dbl):
    r = 1 << (s - 1)
    if dbl and s > 31:
        r += (1 << 30) if v >= 0 else -(1 << 30)
    return (v * m + r) >> s

def resize(x, scale, offset, border, mode):
    n, ih, iw, c = x.shape
    syn, syd, sxn, sxd = scale
    oh = ((ih - 1) * syn - offset[0] + border[0]) // syd + 1
    ow = ((iw - 1) * sxn - offset[1] + border[1]) // sxd + 1
    out = np.zeros((n, oh, ow, c))
    cl = lambda v, hi: min(max(v, 0), hi - 1)
    for oy in range(oh):
        for ox in range(ow):
            y, xx = oy * syd + offset[0], ox * sxd + offset[1]
            iy, ix = y // syn, xx // sxn
            fy, fx = (y - iy * syn) / syn, (xx - ix * sxn) / sxn
            if mode == 'nearest':
                out[:, oy, ox] = x[:, cl(iy + (fy >= 0.5), ih), cl(ix + (fx >= 0.5), iw)]
            else:
                v = lambda a, b: x[:, cl(iy + a, ih), cl(ix + b, iw)]
                out[:, oy, ox] = v(0, 0) * (1 - fy) * (1 - fx) + v(0, 1) * (1 - fy) * fx + \
                    v(1, 0) * fy * (1 - fx) + v(1, 1) * fy * fx
    return out

def resize_int(x, scale, offset, border, mode):
    n, ih, iw, c = x.shape
    syn, syd, sxn, sxd = scale
    oh = ((ih - 1) * syn - offset[0] + border[0]) // syd + 1
    ow = ((iw - 1) * sxn - offset[1] + border[1]) // sxd + 1
    out = np.zeros((n, oh, ow, c), np.int64)
    cl = lambda v, hi: min(max(v, 0), hi - 1)
    for oy in range(oh):
        for ox in range(ow):
            y, xx = oy * syd + offset[0], ox * sxd + offset[1]
            iy, ix = y // syn, xx // sxn
            dy, dx = y - iy * syn, xx - ix * sxn
            if mode == 'nearest':
                out[:, oy, ox] = x[:, cl(iy + (2 * dy >= syn), ih), cl(ix + (2 * dx >= sxn), iw)]
            else:
                v = lambda a, b: x[:, cl(iy + a, ih), cl(ix + b, iw)]
                out[:, oy, ox] = v(0, 0) * (syn - dy) * (sxn - dx) + v(0, 1) * (syn - dy) * dx + \
                    v(1, 0) * dy * (sxn - dx) + v(1, 1) * dy * dx
    return out

TABLE = np.array([(k * 37) % 256 - 128 for k in range(256)])

def reference(i):
    if model == 'ops':
        c = np.tile(np.array([0.5, 1.5, 2.0, -1.0]), 16)
        return [(np.clip(i[0], -1, 30) * c).reshape(8, 8).T,
                conv2d(i[1], np.full((4, 3, 3, 3), 0.25), np.arange(4.0), (1, 1, 1, 1), (1, 1), (1, 1))]
    if model == 'pool':
        dw = depthwise(i[0], np.full((3, 3, 4, 2), 0.125), np.arange(8) * 0.1, (1, 1, 1, 1), (2, 2), (1, 1))
        k = np.array(MATMUL_B)
        return [max_pool(dw, (3, 3), (2, 2), (1, 1, 1, 1)), avg_pool(dw, (2, 2), (1, 1), (0, 1, 0, 1)),
                transpose_conv(i[1], np.full((5, 3, 3, 3), 0.5), np.ones(5), (0, 0, 0, 0), (2, 2)),
                i[2] @ k]
    if model == 'shader':
        return [np.exp(np.abs(i[0]) * 2 + i[1])]
    if model == 'glsl':
        return [np.exp(np.abs(i[0]) * 2 + i[1])]
    if model == 'hlsl':
        return [np.abs(i[0]) * 2 + i[1]]
    if model == 'passthrough':
        return [i[0], np.abs(i[0]) * 2 + i[1]]
    if model == 'sets':
        return [np.exp(np.abs(i[0]) * 2 + i[1])]
    if model == 'count':
        # four workgroups of 16: Arm's reading of workgroup_sizes [4, 1, 1]
        return [np.exp(np.abs(i[0]) * 2 + i[1] + 4)]
    if model == 'constant_shader':
        return [i[0] * 2 + 0.5]
    if model == 'shape_ops':
        import math
        x, y = i[0], i[1]
        return [x[1:3, 2:5], np.tile(x, (2, 2)), np.pad(x, ((1, 1), (2, 1)), constant_values=-2.5),
                np.concatenate([x, y], 1), x.sum(1, keepdims=True), x.max(0, keepdims=True),
                np.vectorize(math.erf)(x), y.min(1, keepdims=True), y.prod(0, keepdims=True)]
    if model == 'index_ops':
        x, y = i[0], i[1]
        idx, sidx = np.array([[4, 0, 2, 2], [1, 3, 0, 4]]), np.array([[4, 0, 2, 1], [1, 3, 0, 2]])
        g = np.stack([x[b][idx[b]] for b in range(2)])
        sc = x.copy()
        for b in range(2):
            sc[b][sidx[b]] = y[b]
        c = np.rint(x).astype(np.int32)
        return [np.argmax(x, 1).astype(np.int32), x[:, ::-1, :], g, sc, c, c.astype(np.float64)]
    if model == 'bool_ops':
        x, y = i[0], i[1]
        k = np.clip(x, 0, 1)
        e, g, ge = k == x, x > y, y >= k
        return [e, e & g, e | ge, g ^ ge, ~g, np.where(g, x, y)]
    if model == 'tensor_shader':
        return [i[0] * 2]
    if model == 'tensor_ml_shader_ml':
        return [np.exp(np.abs(i[0]) * 2)]
    if model == 'tensor_constant':
        return [np.full(64, 1.0)]
    if model == 'tensor_transpose':
        return [i[0].T]
    if model == 'tensor_bounds':
        o = np.zeros((8, 8))
        o[:, :4] = i[0][:, 4:]
        return [o]
    if model == 'resize':
        return [resize(i[0], (2, 1, 2, 1), (0, 0), (0, 0), 'bilinear'),
                resize(i[0], (4, 3, 5, 2), (1, -1), (1, -1), 'nearest')]
    if model == 'int_resize':
        x = i[0].astype(np.int64)
        return [resize_int(x, (2, 1, 2, 1), (0, 0), (0, 0), 'bilinear').astype(np.int32),
                resize_int(x, (4, 3, 5, 2), (1, -1), (1, -1), 'nearest').astype(np.int8)]
    if model == 'casts':
        x = np.float32(i[0] * 300)
        i8 = np.clip(np.rint(x), -128, 127).astype(np.int8)
        i32 = np.rint(x).astype(np.int64)
        return [i8, ((i32 + 128) % 256 - 128).astype(np.int8), i8.astype(np.float64),
                (i32 != 0).astype(np.int32), i[0].astype(np.float16), i[0].astype(np.float16).astype(np.float64)]
    if model == 'int_ops':
        x, y = i[0].astype(np.int64), i[1].astype(np.int64)
        i32 = lambda v: (np.asarray(v, np.int64) & 0xffffffff).astype(np.uint32).view(np.int32)
        return [i32(x & y), i32(x | y), i32(x ^ y), i32(~x), i32(x << 3), i32((x & 0xffffffff) >> 3),
                i32((x >> 3) + ((x >> 2) & 1)), i32(np.fix(x / 7)),
                np.array([32 - (int(v) & 0xffffffff).bit_length() for v in x], np.int32)]
    if model == 'fp16_ops':
        x, y = i[0], i[1]
        h = lambda v: np.asarray(v).astype(np.float16)
        return [h(x + y), h(1 / (1 + np.exp(-x))), h(x.T), h(y.sum(1, keepdims=True)), h(x * y),
                h((x @ x.T)[None])]
    if model == 'int8_conv':
        x, a = i[0], i[1]
        pat = lambda n, mul, mod, shape: (np.arange(n) * mul % mod - mod // 2).reshape(shape).astype(np.float64)
        w = pat(144, 37, 11, (4, 3, 3, 4))
        dw = pat(72, 29, 13, (3, 3, 4, 2))
        mb = pat(24, 7, 9, (1, 6, 4))
        conv = conv2d(x - 2, w + 1, np.array([10, -20, 30, 0]), (1, 1, 1, 1), (1, 1), (1, 1))
        dwo = depthwise(x - 2, dw + 1, np.arange(1, 9), (1, 0, 1, 0), (2, 2), (1, 1))
        mm = (a - 1) @ mb
        h, wd, c = x.shape[1:]
        avg = np.zeros(x.shape)
        for yy in range(h):
            for xx in range(wd):
                for ch in range(c):
                    vals = [int(x[0, iy, ix, ch]) - 1 for iy in range(yy - 1, yy + 2)
                            for ix in range(xx - 1, xx + 2) if 0 <= iy < h and 0 <= ix < wd]
                    k = 0 if len(vals) == 1 else (len(vals) - 1).bit_length()
                    m = (((1 << 30) + 1) << k) // len(vals)
                    avg[0, yy, xx, ch] = min(max(apply_scale(sum(vals), m, 30 + k, False) - 3, -128), 127)
        mx = max_pool(x, (2, 2), (2, 2), (0, 0, 0, 0))
        tw = pat(32, 5, 7, (2, 2, 2, 4))
        tc = transpose_conv(x - 2, tw + 1, np.array([5, -5]), (0, 0, 0, 0), (2, 2))
        return [conv.astype(np.int32), dwo.astype(np.int32), mm.astype(np.int32), avg.astype(np.int8),
                mx.astype(np.int8), tc.astype(np.int32)]
    if model == 'int8_ops':
        scale = apply_scale
        x = [int(v) for v in i[0]]
        a = [scale(v - 3, 1073741824, 31, False) - 7 for v in x]
        out = [min(max(scale(v, 1518500250, 33, True) - 5, -128), 127) for v in a]
        return [np.array(out, np.int8), np.array([(v * v + 4) >> 3 for v in a], np.int32)]
    if model == 'fft':
        f = np.fft.fft2(np.abs(i[0]) + 1j * i[1])
        g = np.fft.ifft2(i[0] + 1j * i[1]) * 32
        r = np.fft.rfft2(i[2])
        return [f.real, f.imag, g.real, g.imag, r.real, r.imag]
    if model == 'image_storage':
        return [i[0] * 2]
    if model == 'image_sampled':
        a = np.abs(i[0][0])
        t = np.stack([np.stack([a[(y + 2) % 4, min(x + 1, 3)] for x in range(4)]) for y in range(4)])
        return [np.exp(t * 3)[None]]
    if model == 'image_linear':
        a = np.abs(i[0][0]).astype(np.float16).astype(np.float64)
        t = np.stack([np.stack([(a[y, x] + a[y, min(x + 1, 3)]) / 2 for x in range(4)]) for y in range(4)])
        # the shader's fp16 image rounds t / 2 once more (to nearest or toward zero, as Vulkan
        # lets a device convert), within the fp16 tolerance
        return [np.exp(t * 0.5).astype(np.float16)[None]]
    if model == 'fft_chain':
        return [32 * (i[0] + i[1])]
    if model == 'table':
        return [TABLE[i[0].astype(np.int64) + 128].astype(np.int8)]
    raise SystemExit('unknown model ' + model)

if mode == 'prepare':
    rng = np.random.default_rng(7)
    for n, shape in enumerate(json.loads(sys.argv[4])):
        if model in ('table', 'int8_ops', 'int8_conv', 'int_resize'):
            x = rng.integers(-128, 128, shape).astype(np.int8)
        elif model == 'int_ops':
            x = rng.integers(-100000, 100000, shape).astype(np.int32)
        elif model in ('fp16_ops', 'image_linear'):
            x = rng.uniform(-1, 1, shape).astype(np.float16)
        else:
            x = rng.uniform(-1, 1, shape).astype(np.float32)
        np.save(os.path.join(d, 'input_%d.npy' % n), x)
        x.tofile(os.path.join(d, 'input_%d.raw' % n))
    sys.exit(0)

inputs = [np.load(f).astype(np.float64) for f in sorted(glob.glob(os.path.join(d, 'input_*.npy')))]
refs = reference(inputs)
runs = sys.argv[4:]
bad = 0
for run in runs:
    for j, ref in enumerate(refs):
        rt = np.asarray(ref).dtype
        dtype = np.int8 if rt == np.int8 else np.uint8 if rt.kind == 'b' else np.int32 if rt.kind in 'iu' \
            else np.float16 if rt == np.float16 else np.float32
        files = glob.glob(os.path.join(d, '%s.out%d.*' % (run, j)))
        if len(files) != 1:
            print('%s: output %d missing' % (run, j)); bad += 1; continue
        f = files[0]
        got = np.load(f) if f.endswith('.npy') else np.fromfile(f, dtype)
        if run.endswith('-cli'):
            got = got.astype(dtype)  # `fpshader run` writes float32 values
        if got.dtype != dtype:
            got = got.view(dtype)  # the scenario runner writes buffers as bytes
        if got.size != ref.size:
            print('%s: output %d has %d values, numpy %d' % (run, j, got.size, ref.size)); bad += 1; continue
        ref = ref.astype(np.float64)
        err = np.abs(got.reshape(ref.shape).astype(np.float64) - ref).max() / max(1.0, np.abs(ref).max())
        print('%s output %d %s: max relative error %.2e' % (run, j, ref.shape, err))
        # fp16 results: each rounded once, by us and by numpy; a sum rounded apart by one unit
        bad += err > (2e-3 if dtype == np.float16 else 1e-4)
sys.exit(1 if bad else 0)
"#;

/// The second matmul operand of the `pool` model, as MLIR writes it and numpy reads it.
pub(crate) const MATMUL_B: &str = "[[[1.0, 0.0, -1.0], [0.5, 0.5, 0.5], [2.0, -2.0, 0.0], [0.0, 1.0, 0.0], \
                        [-1.0, 0.25, 3.0], [1.0, 1.0, 1.0]]]";

/// ML-only models exercising every lowering the end-to-end test checks: (name, MLIR).
pub(crate) fn ml_models() -> Vec<(&'static str, String)> {
    let c: Vec<&str> = ["0.5", "1.5", "2.0", "-1.0"].repeat(16);
    let ops = format!(
        "func.func @main(%arg0: tensor<64xf32>, %arg1: tensor<1x8x8x3xf32>) -> (tensor<8x8xf32>, tensor<1x8x8x4xf32>) {{
  %c = \"tosa.const\"() <{{values = dense<[{}]> : tensor<64xf32>}}> : () -> tensor<64xf32>
  %1 = tosa.clamp %arg0 {{min_val = -1.0 : f32, max_val = 30.0 : f32}} : (tensor<64xf32>) -> tensor<64xf32>
  %shift = \"tosa.const\"() <{{values = dense<0> : tensor<1xi8>}}> : () -> tensor<1xi8>
  %2 = tosa.mul %1, %c, %shift : (tensor<64xf32>, tensor<64xf32>, tensor<1xi8>) -> tensor<64xf32>
  %s = tosa.const_shape {{values = dense<[8, 8]> : tensor<2xindex>}} : () -> !tosa.shape<2>
  %3 = tosa.reshape %2, %s : (tensor<64xf32>, !tosa.shape<2>) -> tensor<8x8xf32>
  %4 = tosa.transpose %3 {{perms = array<i32: 1, 0>}} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %w = \"tosa.const\"() <{{values = dense<0.25> : tensor<4x3x3x3xf32>}}> : () -> tensor<4x3x3x3xf32>
  %b = \"tosa.const\"() <{{values = dense<[0.0, 1.0, 2.0, 3.0]> : tensor<4xf32>}}> : () -> tensor<4xf32>
  %zp = \"tosa.const\"() <{{values = dense<0.0> : tensor<1xf32>}}> : () -> tensor<1xf32>
  %5 = tosa.conv2d %arg1, %w, %b, %zp, %zp {{acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>}} : (tensor<1x8x8x3xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x8x8x4xf32>
  return %4, %5 : tensor<8x8xf32>, tensor<1x8x8x4xf32>
}}
",
        c.join(", ")
    );
    let pool = format!(
        "func.func @main(%arg0: tensor<1x9x9x4xf32>, %arg1: tensor<1x4x4x3xf32>, %arg2: tensor<1x4x6xf32>) -> (tensor<1x3x3x8xf32>, tensor<1x5x5x8xf32>, tensor<1x9x9x5xf32>, tensor<1x4x3xf32>) {{
  %zp = \"tosa.const\"() <{{values = dense<0.0> : tensor<1xf32>}}> : () -> tensor<1xf32>
  %w = \"tosa.const\"() <{{values = dense<0.125> : tensor<3x3x4x2xf32>}}> : () -> tensor<3x3x4x2xf32>
  %b = \"tosa.const\"() <{{values = dense<[0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]> : tensor<8xf32>}}> : () -> tensor<8xf32>
  %d = tosa.depthwise_conv2d %arg0, %w, %b, %zp, %zp {{acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 2, 2>}} : (tensor<1x9x9x4xf32>, tensor<3x3x4x2xf32>, tensor<8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x5x5x8xf32>
  %m = tosa.max_pool2d %d {{kernel = array<i64: 3, 3>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 2, 2>}} : (tensor<1x5x5x8xf32>) -> tensor<1x3x3x8xf32>
  %a = tosa.avg_pool2d %d, %zp, %zp {{acc_type = f32, kernel = array<i64: 2, 2>, pad = array<i64: 0, 1, 0, 1>, stride = array<i64: 1, 1>}} : (tensor<1x5x5x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x5x5x8xf32>
  %w2 = \"tosa.const\"() <{{values = dense<0.5> : tensor<5x3x3x3xf32>}}> : () -> tensor<5x3x3x3xf32>
  %b2 = \"tosa.const\"() <{{values = dense<1.0> : tensor<5xf32>}}> : () -> tensor<5xf32>
  %t = tosa.transpose_conv2d %arg1, %w2, %b2, %zp, %zp {{acc_type = f32, out_pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>}} : (tensor<1x4x4x3xf32>, tensor<5x3x3x3xf32>, tensor<5xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x9x9x5xf32>
  %k = \"tosa.const\"() <{{values = dense<{MATMUL_B}> : tensor<1x6x3xf32>}}> : () -> tensor<1x6x3xf32>
  %mm = tosa.matmul %arg2, %k, %zp, %zp : (tensor<1x4x6xf32>, tensor<1x6x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x3xf32>
  return %m, %a, %t, %mm : tensor<1x3x3x8xf32>, tensor<1x5x5x8xf32>, tensor<1x9x9x5xf32>, tensor<1x4x3xf32>
}}
"
    );
    let table: Vec<String> = (0..256)
        .map(|k| ((k * 37) % 256 - 128).to_string())
        .collect();
    let table = format!(
        "func.func @main(%arg0: tensor<64xi8>) -> tensor<64xi8> {{
  %t = \"tosa.const\"() <{{values = dense<[{}]> : tensor<256xi8>}}> : () -> tensor<256xi8>
  %0 = tosa.table %arg0, %t : (tensor<64xi8>, tensor<256xi8>) -> tensor<64xi8>
  return %0 : tensor<64xi8>
}}
",
        table.join(", ")
    );
    // data movement, reductions and erf (TOSA 1.0's shape operands as `tosa.const_shape`)
    let shape_ops = "func.func @main(%arg0: tensor<4x6xf32>, %arg1: tensor<4x3xf32>) -> (tensor<2x3xf32>, tensor<8x12xf32>, tensor<6x9xf32>, tensor<4x9xf32>, tensor<4x1xf32>, tensor<1x6xf32>, tensor<4x6xf32>, tensor<4x1xf32>, tensor<1x3xf32>) {
  %start = tosa.const_shape {values = dense<[1, 2]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %size = tosa.const_shape {values = dense<[2, 3]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %0 = tosa.slice %arg0, %start, %size : (tensor<4x6xf32>, !tosa.shape<2>, !tosa.shape<2>) -> tensor<2x3xf32>
  %m = tosa.const_shape {values = dense<[2, 2]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %1 = tosa.tile %arg0, %m : (tensor<4x6xf32>, !tosa.shape<2>) -> tensor<8x12xf32>
  %p = tosa.const_shape {values = dense<[1, 1, 2, 1]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %pc = \"tosa.const\"() <{values = dense<-2.5> : tensor<1xf32>}> : () -> tensor<1xf32>
  %2 = tosa.pad %arg0, %p, %pc : (tensor<4x6xf32>, !tosa.shape<4>, tensor<1xf32>) -> tensor<6x9xf32>
  %3 = tosa.concat %arg0, %arg1 {axis = 1 : i32} : (tensor<4x6xf32>, tensor<4x3xf32>) -> tensor<4x9xf32>
  %4 = tosa.reduce_sum %arg0 {axis = 1 : i32} : (tensor<4x6xf32>) -> tensor<4x1xf32>
  %5 = tosa.reduce_max %arg0 {axis = 0 : i32} : (tensor<4x6xf32>) -> tensor<1x6xf32>
  %6 = tosa.erf %arg0 : (tensor<4x6xf32>) -> tensor<4x6xf32>
  %7 = tosa.reduce_min %arg1 {axis = 1 : i32} : (tensor<4x3xf32>) -> tensor<4x1xf32>
  %8 = tosa.reduce_product %arg1 {axis = 0 : i32} : (tensor<4x3xf32>) -> tensor<1x3xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8 : tensor<2x3xf32>, tensor<8x12xf32>, tensor<6x9xf32>, tensor<4x9xf32>, tensor<4x1xf32>, tensor<1x6xf32>, tensor<4x6xf32>, tensor<4x1xf32>, tensor<1x3xf32>
}
".to_string();
    // indexing and casts: i32 results, indices and casts both ways
    let index_ops = "func.func @main(%arg0: tensor<2x5x3xf32>, %arg1: tensor<2x4x3xf32>) -> (tensor<2x3xi32>, tensor<2x5x3xf32>, tensor<2x4x3xf32>, tensor<2x5x3xf32>, tensor<2x5x3xi32>, tensor<2x5x3xf32>) {
  %0 = tosa.argmax %arg0 {axis = 1 : i32} : (tensor<2x5x3xf32>) -> tensor<2x3xi32>
  %1 = tosa.reverse %arg0 {axis = 1 : i32} : (tensor<2x5x3xf32>) -> tensor<2x5x3xf32>
  %idx = \"tosa.const\"() <{values = dense<[[4, 0, 2, 2], [1, 3, 0, 4]]> : tensor<2x4xi32>}> : () -> tensor<2x4xi32>
  %2 = tosa.gather %arg0, %idx : (tensor<2x5x3xf32>, tensor<2x4xi32>) -> tensor<2x4x3xf32>
  %sidx = \"tosa.const\"() <{values = dense<[[4, 0, 2, 1], [1, 3, 0, 2]]> : tensor<2x4xi32>}> : () -> tensor<2x4xi32>
  %3 = tosa.scatter %arg0, %sidx, %arg1 : (tensor<2x5x3xf32>, tensor<2x4xi32>, tensor<2x4x3xf32>) -> tensor<2x5x3xf32>
  %4 = tosa.cast %arg0 : (tensor<2x5x3xf32>) -> tensor<2x5x3xi32>
  %5 = tosa.cast %4 : (tensor<2x5x3xi32>) -> tensor<2x5x3xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<2x3xi32>, tensor<2x5x3xf32>, tensor<2x4x3xf32>, tensor<2x5x3xf32>, tensor<2x5x3xi32>, tensor<2x5x3xf32>
}
".to_string();
    vec![
        ("ops", ops),
        ("pool", pool),
        ("table", table),
        ("shape_ops", shape_ops),
        ("index_ops", index_ops),
        ("bool_ops", BOOL_OPS.to_string()),
        ("resize", RESIZE.to_string()),
        ("int_resize", INT_RESIZE.to_string()),
        ("int8_ops", INT8_OPS.to_string()),
        ("int8_conv", int8_conv()),
        ("fp16_ops", FP16_OPS.to_string()),
        ("int_ops", INT_OPS.to_string()),
        ("casts", CASTS.to_string()),
        ("fft", FFT.to_string()),
        ("fft_chain", FFT_CHAIN.to_string()),
    ]
}
