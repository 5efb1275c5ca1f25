"""kiln as a PyTorch backend, on the CPU plugin: each model of models.py exported and run
through libkiln.so, and through torch.compile(backend="kiln") (forward, and gradients of a
GPT-2-shaped training step), against eager PyTorch. Prints, per model, the ops exported, the
ops kiln ran on the host interpreter, the largest error, graph breaks and recompiles.

Needs KILN_LIBRARY (libkiln.so of the build under test) and KILN_CLI (its `kiln`)."""
import copy
import json
import os
import subprocess
import sys
import tempfile
import unittest
import warnings

import torch

sys.path.insert(0, os.path.dirname(__file__))
import kiln  # noqa: E402
from kiln import dynamo, fx_graph  # noqa: E402
import models  # noqa: E402

# f32 models: accumulation order differs from eager's.
TOLERANCE = dict(atol=1e-4, rtol=1e-4)


def max_error(actual, expected):
    return max((a.double() - e.double()).abs().max().item() for a, e in zip(actual, expected))


def as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def dynamo_counts():
    from torch._dynamo.utils import counters

    return (sum(counters["graph_break"].values()), counters["stats"]["unique_graphs"])


class Models(unittest.TestCase):
    def test_export_and_run_through_libkiln(self):
        for name, module, args in models.inference_cases():
            with self.subTest(model=name):
                graph, weights = kiln.export(module, args, name=name)
                compiled = kiln.compile(graph, weights)
                with torch.no_grad():
                    expected = as_list(module(*args))
                actual = compiled(*args)
                for a, e in zip(actual, expected):
                    torch.testing.assert_close(a, e, **TOLERANCE)
                ops = fx_graph.ops_of(__import__("json").loads(graph))
                host = compiled.stats["host_ops"]
                print(f"\nexport {name}: {len(ops)} ops, {compiled.stats['kernels']} kernels, "
                      f"{compiled.stats['library_calls']} library calls, {len(host)} host steps "
                      f"{sorted({h.split('(')[-1].rstrip(')') for h in host})}, "
                      f"max error {max_error(actual, expected):.2e}, "
                      f"copied {compiled.last_run_copied_bytes} bytes")
                self.assertEqual(compiled.last_run_copied_bytes, 0, "CPU tensors are used in place")
                again = kiln.compile(graph, weights)
                self.assertTrue(again.from_cache, "the compiled-graph cache takes its own entry back")
                for a, e in zip(again(*args), expected):
                    torch.testing.assert_close(a, e, **TOLERANCE)

    def test_interpolation_matches_eager_as_kernels(self):
        torch.manual_seed(5)
        module, x = models.Interpolations(), torch.randn(2, 3, 6, 7)
        graph, weights = kiln.export(module, (x,), name="interpolations")
        compiled = kiln.compile(graph, weights)
        for a, e in zip(compiled(x), module(x)):
            torch.testing.assert_close(a, e, **TOLERANCE)
        self.assertEqual(compiled.stats["host_ops"], [])

    def test_distances_match_eager_as_kernels(self):
        torch.manual_seed(6)
        module, args = models.Distances(), (torch.randn(2, 9, 5), torch.randn(2, 4, 5))
        graph, weights = kiln.export(module, args, name="distances")
        compiled = kiln.compile(graph, weights)
        for a, e in zip(compiled(*args), module(*args)):
            torch.testing.assert_close(a, e, **TOLERANCE)
        self.assertEqual(compiled.stats["host_ops"], [])

    def test_col2im_matches_aten_as_a_kernel(self):
        # Export turns F.fold into index_put; a graph that names col2im runs it as a kernel.
        cols = torch.randn(2, 18, 16)
        args = [[7, 8], [2, 3], [1, 2], [1, 0], [2, 1]]
        graph = json.dumps({
            "format": "kiln.graph/1", "name": "col2im",
            "inputs": [{"name": "cols", "dtype": "f32", "shape": [2, 18, 16]}],
            "nodes": [{"name": "y", "op": "aten.col2im.default", "args": ["%cols"] + args}],
            "outputs": ["%y"]})
        compiled = kiln.compile(graph)
        expected = torch.ops.aten.col2im(cols, *args)
        torch.testing.assert_close(compiled(cols)[0], expected, **TOLERANCE)
        self.assertEqual(compiled.stats["host_ops"], [])

    def test_scans_and_sorts_match_eager_as_kernels(self):
        torch.manual_seed(8)
        x = torch.randn(4, 37)
        x[1, 3] = x[2, 30] = float("nan")
        ints = torch.randint(-5, 5, (3, 9))

        def f(x, ints):
            return (torch.cumsum(x, 1), torch.cumsum(x, 0), torch.cumsum(ints, 1),
                    torch.cumprod(x, 1), torch.cumprod(ints, 0),
                    *torch.sort(x, 1), *torch.sort(x, 0, descending=True),
                    *torch.topk(x, 5, 1), *torch.topk(x, 2, 0, largest=False))

        torch._dynamo.reset()
        dynamo.stats.reset()
        got = torch.compile(f, backend="kiln")(x, ints)
        for a, e in zip(got, f(x, ints)):
            torch.testing.assert_close(a, e, **TOLERANCE, equal_nan=True)
        self.assertEqual(dynamo.stats.eager, [])
        self.assertEqual(sorted(dynamo.stats.host_ops), [])

    def test_scatter_family_matches_eager_as_kernels(self):
        torch.manual_seed(12)
        x, src = torch.randn(5, 7), torch.randn(6, 9)
        cols = torch.randint(0, 7, (4, 6))
        rows = torch.randint(0, 5, (9,))
        mask = torch.rand(5, 7) > 0.4
        weight = torch.randn(11, 6)
        flat = torch.randint(0, 11, (13,))
        offsets = torch.tensor([0, 4, 4, 9])

        def f(x, src, cols, rows, mask, weight, flat, offsets):
            outs = [x.scatter_add(1, cols, src), x.index_put((rows,), src[:, :7][:1], accumulate=True),
                    x.masked_scatter(mask, src)]
            for reduce in ("sum", "prod", "mean", "amax", "amin"):
                for include_self in (True, False):
                    outs.append(x.scatter_reduce(1, cols, src, reduce, include_self=include_self))
            for mode in ("sum", "mean", "max"):
                outs.append(torch.nn.functional.embedding_bag(flat, weight, offsets, mode=mode))
            return outs

        args = (x, src, cols, rows, mask, weight, flat, offsets)
        torch._dynamo.reset()
        dynamo.stats.reset()
        got = torch.compile(f, backend="kiln")(*args)
        for a, e in zip(got, f(*args)):
            torch.testing.assert_close(a, e, **TOLERANCE)
        self.assertEqual(dynamo.stats.eager, [])
        self.assertEqual(sorted(dynamo.stats.host_ops), [])

    def test_deterministic_algorithms_compile_in_deterministic_mode(self):
        torch.manual_seed(13)
        src = torch.randn(3000)
        rows = torch.randint(0, 16, (3000,))

        def f(src, rows):
            return torch.zeros(16).index_add(0, rows, src)

        torch._dynamo.reset()
        dynamo.stats.reset()
        torch.use_deterministic_algorithms(True)
        try:
            g = torch.compile(f, backend="kiln")
            got, again = g(src, rows), g(src, rows)
        finally:
            torch.use_deterministic_algorithms(False)
        torch.testing.assert_close(got, f(src, rows), **TOLERANCE)
        self.assertTrue(torch.equal(got, again))
        self.assertGreaterEqual(dynamo.stats.compiled, 1)
        self.assertEqual(dynamo.stats.deterministic, dynamo.stats.compiled)
        # Off again: the same function compiles in the default mode.
        torch._dynamo.reset()
        dynamo.stats.reset()
        torch.testing.assert_close(torch.compile(f, backend="kiln")(src, rows), got, **TOLERANCE)
        self.assertGreaterEqual(dynamo.stats.compiled, 1)
        self.assertEqual(dynamo.stats.deterministic, 0)

    def test_tf32_flags_reach_the_compiled_graph(self):
        """PyTorch's TF32 permissions at compile time become the graph's (a CPU plugin lists
        no TF32 library, so the numbers stay f32's)."""
        torch.manual_seed(17)
        x, w, a = torch.randn(2, 3, 9, 7), torch.randn(5, 3, 3, 3), torch.randn(7, 4)

        def f(x, w, a):
            return torch.nn.functional.conv2d(x, w, padding=1), x[0, 0] @ a

        saved = (torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32)
        try:
            for conv, matmul in ((True, False), (False, True)):
                torch.backends.cudnn.allow_tf32 = conv
                torch.backends.cuda.matmul.allow_tf32 = matmul
                torch._dynamo.reset()
                dynamo.stats.reset()
                got = torch.compile(f, backend="kiln")(x, w, a)
                for g, e in zip(got, f(x, w, a)):
                    torch.testing.assert_close(g, e, **TOLERANCE)
                [graph] = dynamo.stats.graphs
                self.assertEqual((graph.stats["conv_tf32"], graph.stats["matmul_tf32"]),
                                 (conv, matmul))
        finally:
            torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = saved

    def test_dropout_trains_through_kernels_and_repeats_under_a_seed(self):
        def dropout(x):
            return torch.nn.functional.dropout(x, 0.3, training=True)

        def make():
            torch.manual_seed(13)
            return torch.compile(dropout, backend="kiln")

        torch._dynamo.reset()
        dynamo.stats.reset()
        x = (torch.rand(64, 100) + 0.5).requires_grad_()
        drop = make()
        y = drop(x)
        y.sum().backward()
        kept = y != 0
        self.assertAlmostEqual(kept.float().mean().item(), 0.7, delta=0.03)
        torch.testing.assert_close(y[kept], (x / 0.7)[kept].detach(), **TOLERANCE)
        # The backward reads the forward's mask: gradient 1/0.7 where kept, 0 where dropped.
        torch.testing.assert_close(x.grad, kept.float() / 0.7, **TOLERANCE)
        self.assertFalse(torch.equal(drop(x), y), "a second call draws a new mask")
        torch._dynamo.reset()
        self.assertTrue(torch.equal(make()(x), y), "the same torch seed repeats the same masks")
        self.assertEqual(dynamo.stats.eager, [])
        self.assertIn("aten.native_dropout.default", dynamo.stats.ops)
        self.assertEqual(sorted(dynamo.stats.host_ops), [])

    def test_grid_sample_matches_eager_as_a_kernel(self):
        torch.manual_seed(9)
        x, grid = torch.randn(2, 3, 5, 7), torch.rand(2, 4, 6, 2) * 2.6 - 1.3

        def f(x, grid):
            return [torch.nn.functional.grid_sample(x, grid, mode=m, padding_mode=p, align_corners=a)
                    for m in ("bilinear", "nearest") for p in ("zeros", "border", "reflection")
                    for a in (False, True)]

        torch._dynamo.reset()
        dynamo.stats.reset()
        got = torch.compile(f, backend="kiln")(x, grid)
        for a, e in zip(got, f(x, grid)):
            torch.testing.assert_close(a, e, **TOLERANCE)
        self.assertIn("aten.grid_sampler_2d.default", dynamo.stats.ops)
        self.assertEqual(sorted(dynamo.stats.host_ops), [])

    def test_exported_files_run_in_the_cli(self):
        name, module, args = models.inference_cases()[2]  # gpt2
        with tempfile.TemporaryDirectory() as tmp:
            graph_path, weights_path = kiln.exporter.save(module, args, os.path.join(tmp, name))
            run = subprocess.run([os.environ["KILN_CLI"], "run", graph_path, "--weights", weights_path,
                                  "--check"], capture_output=True, text=True)
            self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
            self.assertIn(" ok", run.stdout)

    def test_torch_compile_matches_eager(self):
        for name, module, args in models.inference_cases():
            with self.subTest(model=name):
                torch._dynamo.reset()
                dynamo.stats.reset()
                breaks0, graphs0 = dynamo_counts()
                compiled = torch.compile(module, backend="kiln")
                with torch.no_grad():
                    expected = as_list(module(*args))
                    actual = as_list(compiled(*args))
                    again = as_list(compiled(*args))  # no recompile on a second call
                for a, e in zip(actual + again, expected + expected):
                    torch.testing.assert_close(a, e, **TOLERANCE)
                breaks, graphs = dynamo_counts()
                s = dynamo.stats
                print(f"\ntorch.compile {name}: {s.compiled} graphs through kiln, "
                      f"{len(s.eager)} eager {s.eager}, graph breaks {breaks - breaks0}, "
                      f"graphs {graphs - graphs0}, max error {max_error(actual, expected):.2e}")
                self.assertEqual(s.eager, [])
                self.assertGreaterEqual(s.compiled, 1)

    def test_training_step_gives_eager_gradients(self):
        torch.manual_seed(7)
        model = models.Gpt2().train()
        twin = copy.deepcopy(model)
        ids = torch.randint(0, 100, (2, 16))
        targets = torch.randint(0, 100, (2, 16))

        def step(m, fn):
            m.zero_grad()
            loss = torch.nn.functional.cross_entropy(fn(ids).reshape(-1, 100), targets.reshape(-1))
            loss.backward()
            return loss.detach(), {n: p.grad.detach().clone() for n, p in m.named_parameters()}

        torch._dynamo.reset()
        dynamo.stats.reset()
        eager_loss, eager_grads = step(twin, twin)
        kiln_loss, kiln_grads = step(model, torch.compile(model, backend="kiln"))
        torch.testing.assert_close(kiln_loss, eager_loss, **TOLERANCE)
        worst = 0.0
        for n, g in eager_grads.items():
            torch.testing.assert_close(kiln_grads[n], g, **TOLERANCE, msg=lambda m, n=n: f"grad of {n}: {m}")
            worst = max(worst, (kiln_grads[n] - g).abs().max().item())
        s = dynamo.stats
        print(f"\ntraining gpt2: {s.compiled} graphs through kiln (forward and backward), "
              f"eager {s.eager}, host ops {sorted(s.host_ops)}, max gradient error {worst:.2e}")
        self.assertGreaterEqual(s.compiled, 2, "the backward graph goes through kiln too")
        self.assertEqual(sorted(s.host_ops), [], "embedding gradients are kernels too")
        # Transposed weights the forward saves reach the backward in the layout the backward
        # was compiled for: nothing of the step goes through kiln's host staging.
        self.assertEqual([g.last_run_copied_bytes for g in s.graphs], [0] * len(s.graphs))

    def test_cnns_train_with_eager_gradients_and_no_host_steps(self):
        torch.manual_seed(11)
        for name, model, shapes in models.training_cases():
            with self.subTest(model=name):
                twin = copy.deepcopy(model)
                args = [torch.randn(*s, requires_grad=True) for s in shapes]
                twin_args = [a.detach().clone().requires_grad_() for a in args]
                torch._dynamo.reset()
                dynamo.stats.reset()
                expected = twin(*twin_args)
                expected.backward()
                loss = torch.compile(model, backend="kiln")(*args)
                loss.backward()
                torch.testing.assert_close(loss, expected, **TOLERANCE)
                for (n, p), (_, q) in zip(model.named_parameters(), twin.named_parameters()):
                    torch.testing.assert_close(p.grad, q.grad, **TOLERANCE,
                                               msg=lambda m, n=n: f"grad of {n}: {m}")
                for a, b in zip(args, twin_args):
                    torch.testing.assert_close(a.grad, b.grad, **TOLERANCE)
                for (n, a), (_, b) in zip(model.named_buffers(), twin.named_buffers()):
                    torch.testing.assert_close(a, b, **TOLERANCE, msg=lambda m, n=n: f"buffer {n}: {m}")
                s = dynamo.stats
                backward_ops = sorted(o for o in s.ops if "backward" in o)
                print(f"\ntraining {name}: {s.compiled} graphs through kiln, backward ops {backward_ops}, "
                      f"host ops {sorted(s.host_ops)}")
                self.assertTrue(backward_ops)
                self.assertGreaterEqual(s.compiled, 2)
                self.assertEqual(s.eager, [])
                self.assertEqual(sorted(s.host_ops), [], "the forward and backward run as kernels")

    def test_outputs_keep_the_strides_the_trace_gave_them(self):
        # Transposed outputs leave kiln in memory order and are viewed back: the caller (and
        # the backward graph that reads a saved transposed weight) sees eager's strides.
        class Transposes(torch.nn.Module):
            def forward(self, x, w):
                return w.t(), (x @ w).permute(2, 0, 1), x * 2

        torch._dynamo.reset()
        args = (torch.randn(2, 5, 7), torch.randn(7, 3))
        expected = Transposes()(*args)
        with torch.no_grad():
            actual = torch.compile(Transposes(), backend="kiln")(*args)
        for a, e in zip(actual, expected):
            torch.testing.assert_close(a, e, **TOLERANCE)
            self.assertEqual(a.stride(), e.stride())
        self.assertEqual(fx_graph._memory_order(torch.empty(4, 6).t()), [1, 0])
        self.assertIsNone(fx_graph._memory_order(torch.empty(4, 6)[:, ::2]), "not dense")
        self.assertIsNone(fx_graph._memory_order(torch.empty(4, 6)), "row-major already")


class Calls(unittest.TestCase):
    def test_each_call_reads_its_own_tensors_whatever_their_layout(self):
        # A compiled graph keeps its argument structs between calls and rebuilds one only when
        # a tensor's layout changes: every call must still read the tensors it was given.
        compiled = kiln.compile('{"format": "kiln.graph/1", "inputs": [{"name": "x", "dtype": "f32", '
                                '"shape": [3, 4]}, {"name": "y", "dtype": "f32", "shape": [3, 4]}], '
                                '"nodes": [{"name": "z", "op": "aten.mul.Tensor", "args": ["%x", "%y"]}], '
                                '"outputs": ["%z"]}')
        dense = torch.randn(3, 4)
        strided = torch.randn(4, 3).t()  # the same sizes, columns first
        sliced = torch.randn(3, 8)[:, ::2]
        out = torch.empty(3, 4)
        for x, y in [(dense, dense), (strided, dense), (dense, sliced), (strided, strided),
                     (dense.clone(), torch.randn(3, 4))]:
            torch.testing.assert_close(compiled(x, y)[0], x * y)
            got = compiled(x, y, out=[out])[0]
            self.assertIs(got, out)
            torch.testing.assert_close(out, x * y)


class BadInput(unittest.TestCase):
    def test_an_op_kiln_lacks_falls_back_with_one_warning(self):
        torch._dynamo.reset()
        dynamo.stats.reset()

        def f(x):  # kiln has no Bessel functions: the graph stays with PyTorch
            return torch.special.bessel_j0(x) * 2

        x = torch.randn(3, 5)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = torch.compile(f, backend="kiln")(x)
        torch.testing.assert_close(y, f(x))
        mine = [w for w in caught if "kiln:" in str(w.message)]
        self.assertEqual(len(mine), 1, [str(w.message) for w in mine])
        self.assertIn("aten.special_bessel_j0.default", str(mine[0].message))

    def test_nonzero_runs_in_pytorch_between_kiln_graphs(self):
        # Its output shape depends on the data: Dynamo breaks the graph there and kiln compiles
        # the pieces before and after it (kiln ops says so).
        torch._dynamo.reset()
        dynamo.stats.reset()

        def f(x):
            return (x * 2).relu().nonzero().float().sum() + (x - 1).sum()

        x = torch.randn(6, 5)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = torch.compile(f, backend="kiln")(x)
        torch.testing.assert_close(y, f(x))
        self.assertGreaterEqual(dynamo.stats.compiled, 2)
        self.assertEqual([str(w.message) for w in caught if "kiln:" in str(w.message)], [])
        self.assertNotIn("aten.nonzero.default", dynamo.stats.ops)

    def test_dynamic_shapes_fall_back_with_a_message(self):
        torch._dynamo.reset()
        dynamo.stats.reset()

        def f(x):
            return torch.relu(x) + 1

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            g = torch.compile(f, backend="kiln", dynamic=True)
            for n in (3, 5):
                x = torch.randn(n, 4)
                torch.testing.assert_close(g(x), f(x))
        messages = [str(w.message) for w in caught if "kiln:" in str(w.message)]
        self.assertTrue(messages and all("dynamic shape" in m for m in messages), messages)

    def test_wrong_inputs_are_errors_not_crashes(self):
        compiled = kiln.compile('{"format": "kiln.graph/1", "inputs": [{"name": "x", "dtype": "f32", '
                                '"shape": [2, 3]}], "nodes": [{"name": "y", "op": "aten.relu.default", '
                                '"args": ["%x"]}], "outputs": ["%y"]}')
        for bad, says in [((torch.zeros(2, 3, dtype=torch.float64),), "is f64[2, 3] but the graph says f32[2, 3]"),
                          ((torch.zeros(3, 2),), "is f32[3, 2] but the graph says f32[2, 3]"),
                          ((), "takes 1 inputs, got 0"),
                          ((torch.zeros(2, 3, dtype=torch.complex64),), "dtype torch.complex64")]:
            with self.assertRaises(kiln.KilnError) as ctx:
                compiled(*bad)
            self.assertIn(says, str(ctx.exception))
            self.assertTrue(ctx.exception.user)
        with self.assertRaises(kiln.KilnError) as ctx:
            kiln.compile('{"format": "kiln.graph/1", "nodes": [{"name": "y", "op": "aten.nope.default", '
                         '"args": []}], "outputs": ["%y"]}')
        self.assertIn("aten.nope.default", str(ctx.exception))


class Cache(unittest.TestCase):
    def run_twice(self, script):
        """`script` in two processes sharing a fresh kiln cache; both must succeed."""
        with tempfile.TemporaryDirectory() as cache:
            env = dict(os.environ, KILN_CACHE_DIR=cache)
            runs = [subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
                    for _ in range(2)]
        for r in runs:
            self.assertEqual(r.returncode, 0, r.stderr)
        return runs

    def test_a_second_process_compiles_from_the_cache(self):
        runs = self.run_twice("import torch, kiln.dynamo as b\n"
                              "f = torch.compile(lambda x: torch.softmax(x * 3, -1), backend='kiln')\n"
                              "f(torch.ones(4, 8))\n"
                              "print('compiled', b.stats.compiled, 'hits', b.stats.cache_hits)\n")
        self.assertIn("compiled 1 hits 0", runs[0].stdout)
        self.assertIn("compiled 1 hits 1", runs[1].stdout)

    def test_a_second_process_takes_a_training_step_from_the_cache(self):
        # The backward graph of a GPT-2-shaped step reads each half of a cat at rows computed
        # from a flat position, in bounds only where the half's mask holds: the entry's bounds
        # check must see that, or every warm start compiles the backward again.
        runs = self.run_twice("import sys, torch, kiln.dynamo as b\n"
                              f"sys.path.insert(0, {os.path.dirname(__file__)!r})\n"
                              "import models\n"
                              "torch.manual_seed(3)\n"
                              "m = models.Gpt2().train()\n"
                              "ids = torch.randint(0, 100, (2, 16))\n"
                              "torch.compile(m, backend='kiln')(ids).sum().backward()\n"
                              "print('compiled', b.stats.compiled, 'hits', b.stats.cache_hits)\n")
        self.assertIn("compiled 2 hits 0", runs[0].stdout)
        self.assertIn("compiled 2 hits 2", runs[1].stdout, runs[1].stderr[-2000:])


if __name__ == "__main__":
    unittest.main(verbosity=2)
