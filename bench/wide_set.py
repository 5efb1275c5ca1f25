"""The wide benchmark set: memory-bound workloads as users meet them beyond the anchor set,
on any torch device. Reductions over each dim of 2-d, 3-d and 4-d tensors, permuted and
sliced inputs, broadcasting on each side, integer and bool ops, bf16/f16/f32, long rows,
masked softmax, and sizes from 64 KiB to 1 GiB (`scale` divides the element counts; the CPU
uses 1, and nothing here is chosen for what kiln is good at).

Each entry is (name, fn, args, outputs): fn(*args) is the workload; inputs and outputs give
its minimal bytes (inputs read once, outputs written once).
"""
import torch
import torch.nn.functional as F


def wide_workloads(device="cpu", scale=1):
    out = []
    gen = torch.Generator(device=device).manual_seed(0)

    def randn(*shape, dtype=torch.float32):
        return torch.randn(*shape, generator=gen, device=device).to(dtype)

    def randint(high, *shape, dtype=torch.int32):
        return torch.randint(0, high, shape, generator=gen, device=device).to(dtype)

    def empty(*shape, dtype=torch.float32):
        return torch.empty(*shape, device=device, dtype=dtype)

    def add(name, fn, args, outputs):
        out.append((name, fn, args, outputs))

    n = 4096 // scale
    m2 = randn(n, 4096)
    add("sum_dim0_2d", lambda x: x.sum(0), (m2,), [empty(4096)])
    add("sum_dim1_2d", lambda x: x.sum(1), (m2,), [empty(n)])
    add("amax_dim0_2d", lambda x: x.amax(0), (m2,), [empty(4096)])
    add("argmax_dim1_2d", lambda x: x.argmax(1), (m2,), [empty(n, dtype=torch.int64)])
    t3 = randn(64 // scale, 256, 512)
    for d in range(3):
        shape = [64 // scale, 256, 512]
        del shape[d]
        add(f"sum_dim{d}_3d", lambda x, d=d: x.sum(d), (t3,), [empty(*shape)])
    t4 = randn(32 // scale, 64, 32, 64)
    add("sum_dims02_4d", lambda x: x.sum((0, 2)), (t4,), [empty(64, 64)])
    nchw = randn(32 // scale, 256, 28, 28)
    add("mean_hw_nchw", lambda x: x.mean((2, 3)), (nchw,), [empty(32 // scale, 256)])
    bn = randn(8192 // scale, 512)
    add("softmax_dim0_2d", lambda x: torch.softmax(x, 0), (bn,), [bn])
    add("var_mean_dim0", lambda x: torch.var_mean(x, 0), (bn,), [empty(512), empty(512)])
    vocab = randn(1024 // scale, 32000, dtype=torch.bfloat16)
    add("softmax_32k_bf16", lambda x: torch.softmax(x, -1), (vocab,), [vocab])
    wide = randn(64 // scale, 262144)
    add("softmax_256k_f32", lambda x: torch.softmax(x, -1), (wide,), [wide])
    # GPT-2's vocabulary: a language model's loss over bf16 logits (one row per token).
    logits = randn(2048 // scale, 50257, dtype=torch.bfloat16)
    labels = randint(50257, 2048 // scale, dtype=torch.int64)
    add("cross_entropy_50k_bf16", lambda x, t: F.cross_entropy(x, t), (logits, labels),
        [empty(())])
    h = randn(2048 // scale, 8192, dtype=torch.float16)
    add("log_softmax_f16", lambda x: torch.log_softmax(x.float(), -1).to(x.dtype), (h,), [h])
    scores = randn(8 // scale, 16, 256, 256)
    causal = torch.ones(256, 256, device=device, dtype=torch.bool).tril()
    add("masked_scaled_softmax",
        lambda s, c: torch.softmax((s * 0.125).masked_fill(~c, float("-inf")), -1),
        (scores, causal), [scores])
    heads = randn(32 // scale, 128, 16, 64)
    add("permute_0213", lambda x: x.permute(0, 2, 1, 3).contiguous(), (heads,), [heads])
    sq = randn(n, 4096)
    add("sliced_cols_add", lambda x, y: x[:, ::2] + y[:, ::2], (sq, m2), [empty(n, 2048)])
    add("narrow_rows_mul", lambda x: x[n // 8:-(n // 8)] * 2, (sq,),
        [empty(n - n // 4, 4096)])
    va, vb = randn(4096), randn(4096)
    add("outer_bcast_mul", lambda a, b: a[:, None] * b[None, :], (va, vb), [empty(4096, 4096)])
    l3, r3 = randn(64 // scale, 1, 512), randn(1, 256, 512)
    add("bcast_both_3d", lambda a, b: a + b, (l3, r3), [empty(64 // scale, 256, 512)])
    ia, ib = randint(1000, n, 4096), randint(1000, n, 4096)
    add("int32_add_mul", lambda a, b: (a + b) * 3, (ia, ib), [ia])
    add("int32_rowsum_i64", lambda a: a.sum(1), (ia,), [empty(n, dtype=torch.int64)])
    add("bool_and_compare", lambda a, b: (a > 0) & (b < 0.5), (sq, m2),
        [empty(n, 4096, dtype=torch.bool)])
    mask = randn(n, 4096) > 0
    add("where_mask", lambda c, a, b: torch.where(c, a, b), (mask, sq, m2), [sq])
    g16 = randn(8192 // scale, 4096, dtype=torch.float16)
    add("gelu_f16", lambda x: F.gelu(x), (g16,), [g16])
    ga, gb = randn(4096 // scale, 11008, dtype=torch.bfloat16), randn(4096 // scale, 11008,
                                                                      dtype=torch.bfloat16)
    add("swiglu_bf16", lambda a, b: F.silu(a) * b, (ga, gb), [ga])
    add("cast_f32_bf16", lambda x: x.to(torch.bfloat16), (sq,), [empty(n, 4096,
                                                                        dtype=torch.bfloat16)])
    ln = randn(8192 // scale, 1024, dtype=torch.bfloat16)
    lw, lb = randn(1024, dtype=torch.bfloat16), randn(1024, dtype=torch.bfloat16)
    add("layernorm_bf16", lambda x, w, b: F.layer_norm(x, (1024,), w, b), (ln, lw, lb), [ln])
    cs = randn(1024 // scale, 4096)
    add("cumsum_dim1", lambda x: x.cumsum(1), (cs,), [cs])
    table = randn(50257, 768)
    ids = randint(50257, 8192 // scale, dtype=torch.int64)
    add("embedding_gather", lambda t, i: F.embedding(i, t), (table, ids),
        [empty(8192 // scale, 768)])
    # Bags of 32 rows summed (1-D offsets): the shape of bench/ops_gpu.py's embedding_bag row.
    bag_ids = randint(50257, 8192 // scale, dtype=torch.int64)
    offsets = torch.arange(0, 8192 // scale, 32, device=device)
    add("embedding_bag_sum", lambda t, i, o: F.embedding_bag(i, t, o, mode="sum"),
        (table, bag_ids, offsets), [empty(256 // scale, 768)])
    tiny = randn(16384)
    add("tiny_add_64k", lambda x: x + 1, (tiny,), [tiny])
    huge = randn((1 << 28) // scale)
    add("huge_add_1g", lambda x: x + 1, (huge,), [huge])
    return out
