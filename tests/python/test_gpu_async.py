"""Asynchronous runs on a GPU (run.asynchronous: true), through torch.compile with the ptx
plugin: results equal eager PyTorch's over many calls queued back to back, and a kernel's
error (an index out of range) fails a later call, once, naming the kernel, after which runs
go on. Without a CUDA device it exits 77 (ctest: skipped), saying why.

Needs KILN_LIBRARY (libkiln.so of the build under test) and a configs/ directory beside it
or in the source tree."""
import os
import sys
import tempfile
import unittest
import warnings

import torch

import kiln
from kiln import KilnError

CONFIG = """plugins:
  - name: ptx
    options: { arch: auto }
devices: [cuda:0]
run: { asynchronous: true }
log: { level: warn }
"""


def compiled(fn, config):
    torch._dynamo.reset()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.compile(fn, backend=kiln.torch_backend, options={"config": config})


class AsynchronousRuns(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        cls.config = os.path.join(cls.dir.name, "async.yaml")
        with open(cls.config, "w") as f:
            f.write(CONFIG)

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def test_calls_queued_back_to_back_match_eager(self):
        def f(x, y):
            return torch.softmax(x * 2 + y, -1).cumsum(-1)

        g = compiled(f, self.config)
        xs = [torch.randn(64, 1000, device="cuda") for _ in range(20)]
        y = torch.randn(1000, device="cuda")
        outs = [g(x, y) for x in xs]  # no wait between them
        torch.cuda.synchronize()
        for x, out in zip(xs, outs):
            torch.testing.assert_close(out, f(x, y), atol=1e-5, rtol=1e-5)

    def test_an_index_error_fails_a_later_call_once(self):
        def gather(table, index):
            return table[index] * 2

        g = compiled(gather, self.config)
        table = torch.randn(100, 8, device="cuda")
        good = torch.randint(0, 100, (32,), device="cuda")
        bad = good.clone()
        bad[7] = 1000
        torch.testing.assert_close(g(table, good), table[good] * 2)
        g(table, bad)  # returns before its kernel has run
        torch.cuda.synchronize()
        with self.assertRaises(KilnError) as ctx:
            g(table, good)
        self.assertIn("an index is out of range", str(ctx.exception))
        self.assertIn("in an earlier run", str(ctx.exception))
        torch.testing.assert_close(g(table, good), table[good] * 2)  # reported once


if __name__ == "__main__":
    if not torch.cuda.is_available():
        print("skipped: no CUDA device (torch.cuda.is_available() is False)")
        sys.exit(77)
    unittest.main()
