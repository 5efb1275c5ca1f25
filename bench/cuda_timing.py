"""The timing protocol of the GPU comparison scripts: a sample is `per_sample` calls back to
back between two CUDA events, divided by that count; the median of `runs` samples after a
warm-up of three calls. And each kernel's own GPU time per call, from torch.profiler."""
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


def kernel_us_per_call(fn, calls):
    """{kernel name: GPU µs per call} over `calls` calls of `fn` (torch.profiler's device
    events, summed by name)."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
    totals = {}
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            totals[e.name] = totals.get(e.name, 0.0) + e.device_time_total / calls
    return totals
