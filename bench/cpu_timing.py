"""What the CPU comparison scripts share: wall-time medians of whole calls and the kiln
config for the cpp_openmp plugin at a thread count."""
import statistics
import time


def median_ms(fn, runs, warmup=2):
    """Median wall time of `fn()` in ms over `runs` calls after `warmup` calls (a CPU call
    returns when its work is done)."""
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t) * 1e3)
    return statistics.median(samples)


def interleaved_median_ms(fns, runs, warmup=2):
    """Median wall times of each of `fns` in ms over `runs` calls each, called in turn with the
    order rotated every round (a, b, c; b, c, a; ...), so that drift in the machine's speed
    falls on all alike and each is first, second and last equally often. What one call leaves
    behind (cache contents, freed memory) is not balanced: with three, each follows the same
    one in two rounds of three."""
    for _ in range(warmup):
        for fn in fns:
            fn()
    samples = [[] for _ in fns]
    for i in range(runs):
        for k in range(len(fns)):
            j = (i + k) % len(fns)
            t = time.perf_counter()
            fns[j]()
            samples[j].append((time.perf_counter() - t) * 1e3)
    return [statistics.median(s) for s in samples]


def paired_median_ms(fa, fb, runs, warmup=2):
    """interleaved_median_ms of two functions."""
    return tuple(interleaved_median_ms([fa, fb], runs, warmup))


def config(threads, cache, extra="", vector_width="auto"):
    """A kiln config: cpp_openmp on cpu:0 with `threads` threads and `vector_width` lanes,
    its cache in `cache`."""
    return (f"plugins:\n  - name: cpp_openmp\n"
            f"    options: {{threads: {threads}, vector_width: {vector_width}}}\n"
            f"devices: [cpu:0]\nselection: first-available\ncache: {{dir: {cache}}}\n"
            f"log: {{level: warn}}\n{extra}")
