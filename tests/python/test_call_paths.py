"""The bridge's two per-call paths on the same compiled graphs: the C one (_kiln_call.abi3.so,
capi/python_call/kiln_call.c) and the ctypes one (kiln.runtime._Call). Both must give the
same bits, on every dtype, broadcast, strided, 0-d and empty tensors, into fresh and into
given (poisoned) outputs; arguments the C path leaves to ctypes must come out as the ctypes
path says; runtime errors must be the same KilnError; a closed graph must be an error, never
a crash; concurrent calls must each read their own tensors; and no call may leak a reference.

Needs KILN_LIBRARY; KILN_EXPECT_C_CALL=1 (set where the build made the module) makes a
missing C path a failure instead of a skip."""
import gc
import json
import os
import sys
import threading
import unittest
import weakref
from unittest import mock

import torch

import kiln
from kiln import _fast_call, runtime

CODES = {torch.bool: "bool", torch.int8: "i8", torch.uint8: "u8", torch.int16: "i16",
         torch.int32: "i32", torch.int64: "i64", torch.float16: "f16",
         torch.bfloat16: "bf16", torch.float32: "f32", torch.float64: "f64"}


def graph(inputs, nodes, outputs):
    return json.dumps({"format": "kiln.graph/1",
                       "inputs": [{"name": n, "dtype": CODES[d], "shape": list(s)}
                                  for n, d, s in inputs],
                       "nodes": [{"name": n, "op": op, "args": args} for n, op, args in nodes],
                       "outputs": outputs})


def select_graph(dtype, rows=5, cols=7):
    """z = where(m, x + y, -x) with y broadcast along rows; w = x * x."""
    return graph([("x", dtype, (rows, cols)), ("y", dtype, (cols,)), ("m", torch.bool, (rows, cols))],
                 [("s", "aten.add.Tensor", ["%x", "%y"]), ("n", "aten.neg.default", ["%x"]),
                  ("z", "aten.where.self", ["%m", "%s", "%n"]), ("w", "aten.mul.Tensor", ["%x", "%x"])],
                 ["%z", "%w"])


def random_of(dtype, shape, generator):
    if dtype == torch.bool:
        return torch.rand(shape, generator=generator) < 0.5
    if dtype.is_floating_point:
        return (torch.randn(shape, generator=generator) * 3).to(dtype)
    low = 0 if dtype == torch.uint8 else -9
    return torch.randint(low, 10, shape, generator=generator, dtype=dtype)


def poisoned_like(t):
    out = torch.empty_like(t)
    if t.dtype.is_floating_point:
        out.fill_(float("nan"))
    else:
        out.fill_(-7 if t.dtype != torch.uint8 and t.dtype != torch.bool else 1)
    return out


class CallPaths(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if _fast_call.module() is None:
            if os.environ.get("KILN_EXPECT_C_CALL") == "1":
                raise AssertionError("the C call path did not load: " + _fast_call.reason())
            raise unittest.SkipTest("no C call path: " + _fast_call.reason())

    def paths(self, compiled):
        fast = compiled.caller()
        self.assertEqual(type(fast).__name__, "Caller")  # the C path, not the fallback
        return fast, runtime._Call(compiled)

    def assert_same_bits(self, got, want):
        self.assertEqual(len(got), len(want))
        for g, w in zip(got, want):
            self.assertEqual((g.dtype, g.shape), (w.dtype, w.shape))
            self.assertTrue(torch.equal(g.reshape(-1).contiguous().view(torch.uint8),
                                        w.reshape(-1).contiguous().view(torch.uint8)))

    def test_every_dtype_and_layout_gives_the_same_bits_on_both_paths(self):
        gen = torch.Generator().manual_seed(1)
        for dtype in [d for d in CODES if d != torch.bool]:
            compiled = kiln.compile(select_graph(dtype))
            fast, slow = self.paths(compiled)
            layouts = {
                "dense": lambda s: random_of(dtype, s, gen),
                "transposed": lambda s: random_of(dtype, s[::-1], gen).t() if len(s) == 2
                else random_of(dtype, s, gen),
                "sliced": lambda s: random_of(dtype, (*s[:-1], 2 * s[-1]), gen)[..., ::2],
            }
            for name, make in layouts.items():
                x, y = make((5, 7)), make((7,))
                m = random_of(torch.bool, (7, 5), gen).t()
                want_z = torch.where(m, x + y, -x)
                for out in (None, [poisoned_like(want_z), poisoned_like(want_z)]):
                    got = fast((x, y, m), out)
                    if out is not None:
                        self.assertIs(got[0], out[0])
                    again = slow((x, y, m), None)
                    self.assert_same_bits(got, again)
                    with self.subTest(dtype=dtype, layout=name, out=out is not None):
                        torch.testing.assert_close(got[0], want_z, atol=0, rtol=0)

    def test_0d_empty_and_many_tensors(self):
        scalar = kiln.compile(graph([("x", torch.float32, ())], [("y", "aten.add.Tensor", ["%x", "%x"])],
                                    ["%y"]))
        fast, slow = self.paths(scalar)
        x = torch.tensor(1.75)
        self.assert_same_bits(fast((x,), None), [torch.tensor(3.5)])
        empty = kiln.compile(graph([("x", torch.float32, (0, 3))], [("y", "aten.neg.default", ["%x"])],
                                   ["%y"]))
        fast, slow = self.paths(empty)
        self.assertEqual(fast((torch.empty(0, 3),), None)[0].shape, (0, 3))
        # More tensors than the C path keeps on its stack (8): its heap-allocated arguments.
        names = [f"x{i}" for i in range(11)]
        nodes, last = [], "%x0"
        for i, n in enumerate(names[1:]):
            nodes.append((f"s{i}", "aten.add.Tensor", [last, "%" + n]))
            last = f"%s{i}"
        many = kiln.compile(graph([(n, torch.float32, (3, 5)) for n in names], nodes, [last]))
        fast, slow = self.paths(many)
        xs = [torch.randn(3, 5) for _ in names]
        want = xs[0]
        for t in xs[1:]:
            want = want + t
        self.assert_same_bits(fast(xs, None), slow(xs, None))
        torch.testing.assert_close(fast(xs, None)[0], want, atol=0, rtol=0)

    def test_arguments_the_c_path_leaves_give_what_ctypes_gives(self):
        compiled = kiln.compile(select_graph(torch.float32, 2, 3))
        fast, slow = self.paths(compiled)
        x = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]  # a nested list: converted by torch.as_tensor
        y, m = torch.randn(3), torch.tensor([[True, False, True], [False, True, False]])
        self.assert_same_bits(fast((x, y, m), None), slow((x, y, m), None))
        for bad in (torch.zeros(2, 3, dtype=torch.complex64), torch.zeros(2, 3, device="meta")):
            messages = []
            for call in (fast, slow):
                with self.assertRaises(kiln.KilnError) as ctx:
                    call((bad, y, m), None)
                messages.append(str(ctx.exception))
            self.assertEqual(messages[0], messages[1])

    def test_runtime_errors_are_the_same_kiln_errors(self):
        compiled = kiln.compile(select_graph(torch.float32, 2, 3))
        fast, slow = self.paths(compiled)
        m = torch.ones(2, 3, dtype=torch.bool)
        for bad in ((torch.zeros(3, 2), torch.zeros(3), m),
                    (torch.zeros(2, 3, dtype=torch.float64), torch.zeros(3), m),
                    (torch.zeros(2, 3), torch.zeros(3))):
            errors = []
            for call in (fast, slow):
                with self.assertRaises(kiln.KilnError) as ctx:
                    call(bad, None)
                errors.append((str(ctx.exception), ctx.exception.user))
            self.assertEqual(errors[0], errors[1])
            self.assertTrue(errors[0][1])
        wrong_out = [torch.empty(3, 2), torch.empty(2, 3)]
        with self.assertRaises(kiln.KilnError) as ctx:
            fast((torch.zeros(2, 3), torch.zeros(3), m), wrong_out)
        self.assertIn("f32[3, 2]", str(ctx.exception))

    def test_a_closed_graph_is_an_error_on_both_paths(self):
        compiled = kiln.compile(select_graph(torch.float32, 2, 3))
        fast, slow = self.paths(compiled)
        args = (torch.randn(2, 3), torch.randn(3), torch.ones(2, 3, dtype=torch.bool))
        fast(args, None)
        compiled.close()
        for call in (fast, slow):
            with self.assertRaises(kiln.KilnError) as ctx:
                call(args, None)
            self.assertIn("closed", str(ctx.exception))

    def test_concurrent_calls_each_read_their_own_tensors(self):
        compiled = kiln.compile(select_graph(torch.float32, 33, 65))
        fast = compiled.caller()
        failures = []

        def worker(seed):
            gen = torch.Generator().manual_seed(seed)
            for _ in range(200):
                x, y = random_of(torch.float32, (33, 65), gen), random_of(torch.float32, (65,), gen)
                m = random_of(torch.bool, (33, 65), gen)
                z, w = fast((x, y, m), None)
                if not (torch.equal(z, torch.where(m, x + y, -x)) and torch.equal(w, x * x)):
                    failures.append(seed)
                    return

        threads = [threading.Thread(target=worker, args=(s,)) for s in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(failures, [])

    def test_calls_leak_no_references(self):
        compiled = kiln.compile(select_graph(torch.float32, 4, 6))
        fast, _ = self.paths(compiled)
        x, y, m = torch.randn(4, 6), torch.randn(6), torch.rand(4, 6) < 0.5
        out = [torch.empty(4, 6), torch.empty(4, 6)]
        fast((x, y, m), None)
        before = [sys.getrefcount(t) for t in (x, y, m, *out)]
        for _ in range(1000):
            fast((x, y, m), None)
            fast((x, y, m), out)
        self.assertEqual([sys.getrefcount(t) for t in (x, y, m, *out)], before)
        z = fast((x, y, m), None)[0]
        gone = weakref.ref(z)
        del z
        gc.collect()
        self.assertIsNone(gone())
        with self.assertRaises(kiln.KilnError):
            fast((x, y), None)  # an error path: nothing held either
        self.assertEqual([sys.getrefcount(t) for t in (x, y, m, *out)], before)

    def test_torch_compile_calls_the_c_path(self):
        torch._dynamo.reset()

        def f(x, y):
            return torch.relu(x) * y + 1

        g = torch.compile(f, backend=kiln.torch_backend)
        x, y = torch.randn(9, 13, requires_grad=True), torch.randn(13)
        torch.testing.assert_close(g(x, y), f(x, y))
        # The backward graph too, which AOTAutograd calls through torch._dynamo.disable's
        # wrapper: the caller's boxed mark must survive it.
        g(x, y).sum().backward()
        torch.testing.assert_close(x.grad, (x > 0).float() * y)
        compiled = kiln.dynamo.stats.graphs[-1]
        self.assertEqual(type(compiled.caller()).__name__, "Caller")

    def test_torch_compile_calls_through_ctypes_without_the_c_module(self):
        torch._dynamo.reset()

        def f(x, y):
            return torch.relu(x) - y * 2

        with mock.patch.object(_fast_call, "module", lambda: None):
            g = torch.compile(f, backend=kiln.torch_backend)
            x, y = torch.randn(9, 13, requires_grad=True), torch.randn(13)
            torch.testing.assert_close(g(x, y), f(x, y))
            g(x, y).sum().backward()  # the backward graph through the same path
            torch.testing.assert_close(x.grad, (x > 0).float())
            compiled = kiln.dynamo.stats.graphs[-1]
            self.assertIsInstance(compiled.caller(), runtime._Call)


GPU_CONFIG = """plugins:
  - name: ptx
    options: { arch: auto }
devices: [cuda:0]
run: { asynchronous: true }
log: { level: warn }
"""


@unittest.skipUnless(torch.cuda.is_available(), "no CUDA device")
class CudaCallPaths(unittest.TestCase):
    """The same on a GPU (ptx): CUDA tensors read in place, and work queued on another stream
    waited for before kiln's launches read it."""

    @classmethod
    def setUpClass(cls):
        if _fast_call.module() is None:
            raise unittest.SkipTest("no C call path: " + _fast_call.reason())

    def test_both_paths_give_the_same_bits_and_wait_for_the_current_stream(self):
        compiled = kiln.Session(GPU_CONFIG).compile(select_graph(torch.float32, 37, 129))
        fast, slow = compiled.caller(), runtime._Call(compiled)
        self.assertEqual(type(fast).__name__, "Caller")
        gen = torch.Generator().manual_seed(3)
        for layout in ("dense", "transposed"):
            x = random_of(torch.float32, (37, 129) if layout == "dense" else (129, 37), gen).cuda()
            x = x if layout == "dense" else x.t()
            y, m = random_of(torch.float32, (129,), gen).cuda(), (torch.rand(37, 129) < 0.5).cuda()
            got, again = fast((x, y, m), None), slow((x, y, m), None)
            torch.cuda.synchronize()
            for g, w in zip(got, again):
                self.assertTrue(torch.equal(g, w))
            torch.testing.assert_close(got[0], torch.where(m, x + y, -x), atol=0, rtol=0)
        side = torch.cuda.Stream()
        for _ in range(20):
            with torch.cuda.stream(side):
                # Written on a side stream just before the call: the call must wait for it.
                x = torch.randn(37, 129, device="cuda").mul_(2).add_(1)
                z = fast((x, y, m), None)[0]
            torch.cuda.synchronize()
            torch.testing.assert_close(z, torch.where(m, x + y, -x), atol=0, rtol=0)


if __name__ == "__main__":
    unittest.main()
