"""What the ptx plugin runs through torch.compile on a GPU. TF32 products: f32 convolutions
and matmuls follow torch.backends.cudnn.allow_tf32 and torch.backends.cuda.matmul.allow_tf32
as they stand when a graph compiles; allowed, a product is within TF32's error of the f64
result (and, for the matmul, visibly beyond f32's: the tensor cores ran); forbidden, within
f32's. Attention written out (scores, scale, mask, softmax, product) runs as one fused
attention call. Without a CUDA device it exits 77 (ctest: skipped), saying why.

Needs KILN_LIBRARY (libkiln.so of the build under test)."""
import sys
import unittest
import warnings

import torch

import kiln
from kiln import dynamo

CONFIG = """plugins:
  - name: ptx
    options: { arch: auto }
devices: [cuda:0]
log: { level: warn }
"""


def relative_error(got, exact):
    return ((got.double() - exact).abs().max() / exact.abs().max()).item()


class Compiled(unittest.TestCase):
    def run_compiled(self, fn, args, conv, matmul):
        saved = (torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32)
        torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = conv, matmul
        try:
            torch._dynamo.reset()
            dynamo.stats.reset()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                g = torch.compile(fn, backend=kiln.torch_backend, options={"config": CONFIG})
                out = g(*args)
            [graph] = dynamo.stats.graphs
            self.assertEqual((graph.stats["conv_tf32"], graph.stats["matmul_tf32"]),
                             (conv, matmul))
            self.assertEqual(dynamo.stats.eager, [])
            return out
        finally:
            torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = saved

    def test_convolutions_and_matmuls_follow_the_flags(self):
        torch.manual_seed(5)
        # A ResNet 3x3 block's shape, odd spatial size, channels-last input; a 1x1 convolution
        # (a matmul call that takes the convolution's choice); an odd-sized matmul.
        x = torch.randn(3, 64, 29, 31, device="cuda").to(memory_format=torch.channels_last)
        w3 = torch.randn(48, 64, 3, 3, device="cuda") / 24
        w1 = torch.randn(40, 48, 1, 1, device="cuda") / 7
        a = torch.randn(333, 517, device="cuda")
        b = torch.randn(517, 291, device="cuda") / 23

        def f(x, w3, w1, a, b):
            y = torch.nn.functional.conv2d(x, w3, padding=1)
            return torch.nn.functional.conv2d(y, w1), a @ b

        args = (x, w3, w1, a, b)
        y64 = torch.nn.functional.conv2d(x.double(), w3.double(), padding=1)
        exact = (torch.nn.functional.conv2d(y64, w1.double()), a.double() @ b.double())
        # TF32 keeps 10 of f32's 23 mantissa bits: inputs round by up to 2^-11. f32's bound
        # for the convolutions leaves room for cuDNN's exact-f32 Winograd engines.
        tf32_bound, f32_conv_bound, f32_matmul_bound = 2e-3, 1e-4, 1e-5
        for conv, matmul in ((True, True), (False, False), (True, False)):
            out = self.run_compiled(f, args, conv, matmul)
            conv_error, matmul_error = (relative_error(o, e) for o, e in zip(out, exact))
            self.assertLess(conv_error, tf32_bound if conv else f32_conv_bound)
            self.assertLess(matmul_error, tf32_bound if matmul else f32_matmul_bound)
            if matmul:
                self.assertGreater(matmul_error, f32_matmul_bound,
                                   "the matmul kept f32's precision")


    def test_attention_written_out_is_one_fused_call(self):
        torch.manual_seed(7)
        q, k, v = (torch.randn(2, 4, 77, 64, device="cuda", dtype=torch.bfloat16)
                   for _ in range(3))
        mask = torch.zeros(2, 1, 1, 77, device="cuda", dtype=torch.bfloat16)
        mask[1, ..., 60:] = torch.finfo(torch.bfloat16).min  # padding, as BERT masks it

        def f(q, k, v, mask):
            return (q @ k.transpose(-1, -2) / 8.0 + mask).softmax(-1) @ v

        out = self.run_compiled(f, (q, k, v, mask), True, False)
        [graph] = dynamo.stats.graphs
        self.assertEqual(graph.stats["library_calls"], 1, graph.stats)
        exact = (q.double() @ k.double().transpose(-1, -2) / 8.0 + mask.double()).softmax(-1)
        self.assertLess(relative_error(out, exact @ v.double()), 1e-2)


if __name__ == "__main__":
    if not torch.cuda.is_available():
        print("skipped: no CUDA device (torch.cuda.is_available() is False)")
        sys.exit(77)
    unittest.main()
