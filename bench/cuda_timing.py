"""The timing protocol of the GPU comparison scripts: a sample is `per_sample` calls back to
back between two CUDA events, divided by that count; the median of `runs` samples after a
warm-up of three calls."""
import statistics

import torch


def median_ms(fn, runs, per_sample):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(per_sample):
            fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / per_sample)
    return statistics.median(times)
