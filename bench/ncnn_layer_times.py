"""ncnn's CPU time per layer, the counterpart of `fpshader bench M.param --cpu --profile`.

python3 bench/ncnn_layer_times.py M.param [LOOPS [THREADS]]: zero weights, the input its
Input layer declares. For each layer, a fresh extractor (light mode off, so every blob stays)
computes the layer's inputs untimed, then the layer alone is timed by extracting its first
output; the fastest of LOOPS such runs is printed per layer and per type, as fpshader prints
its own. ncnn converts each input to the layer's layout inside that call, so the figure is the
conversion and the forward together (fpshader's two columns); an in-place layer's figure also
holds the copy ncnn makes of its input outside light mode.
"""
import sys
import time

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from ncnn_zoo_bench import load  # noqa: E402


def layers(path):
    """(type, name, bottoms, tops) of every layer but Input and Split."""
    out = []
    with open(path) as f:
        lines = f.read().split("\n")[2:]
    for line in lines:
        fields = line.split()
        if not fields or fields[0] in ("Input", "Split"):
            continue
        nb, nt = int(fields[2]), int(fields[3])
        out.append((fields[0], fields[1], fields[4:4 + nb], fields[4 + nb:4 + nb + nt]))
    return out


def main():
    path = sys.argv[1]
    loops = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    threads = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    net, name, x, _ = load(path, threads, False)

    def once(bottoms, top):
        ex = net.create_extractor()
        ex.set_light_mode(False)
        ex.input(name, x)
        for b in bottoms:
            ex.extract(b)
        t = time.perf_counter()
        ex.extract(top)
        return (time.perf_counter() - t) * 1e3

    rows, by_type = [], {}
    for ty, lname, bottoms, tops in layers(path):
        once(bottoms, tops[0])
        best = min(once(bottoms, tops[0]) for _ in range(loops))
        rows.append((ty, lname, best))
        n, t = by_type.get(ty, (0, 0.0))
        by_type[ty] = (n + 1, t + best)
    total = sum(r[2] for r in rows)
    print(f"ncnn CPU time per layer, fastest of {loops} run(s), threads {threads}: {total:.3f} ms")
    for ty, lname, best in rows:
        print(f"{ty:>24} {lname:<32} {best:9.3f} ms")
    print("per layer type:")
    for ty, (n, t) in sorted(by_type.items(), key=lambda kv: -kv[1][1]):
        print(f"{ty:>24} {n:4} layer(s) {t:9.3f} ms {100 * t / max(total, 1e-9):5.1f}%")


if __name__ == "__main__":
    main()
