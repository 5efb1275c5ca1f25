"""Complex values through torch.compile(backend="kiln") on the CPU plugin, against eager
PyTorch (an oracle that shares nothing with kiln): FFTs of every kind torch.fft offers on
complex64 (rfft/irfft, fft/ifft, the 2-d forms, every norm), complex inputs and outputs, a
complex parameter (a Fourier layer), a spectrogram through torch.stft, and complex arithmetic.
Every graph must run in kiln: a fallback to eager fails the test.

Needs KILN_LIBRARY (libkiln.so of the build under test)."""
import unittest
import warnings

import torch

from kiln import dynamo

# f32 sums of up to a few hundred terms, against pocketfft's.
TOLERANCE = dict(atol=2e-4, rtol=2e-4)


class FourierLayer(torch.nn.Module):
    """The spectral convolution of a Fourier neural operator: a complex weight on the lowest
    modes of a 2-d spectrum."""

    def __init__(self, channels, modes):
        super().__init__()
        self.modes = modes
        self.weight = torch.nn.Parameter(
            torch.randn(channels, channels, modes, modes, dtype=torch.complex64) / channels)

    def forward(self, x):
        spectrum = torch.fft.rfft2(x)
        low = spectrum[:, :, :self.modes, :self.modes]
        mixed = (low.unsqueeze(2) * self.weight).sum(1)  # channels in -> channels out
        padded = torch.cat([mixed, torch.zeros_like(spectrum[:, :, :self.modes, self.modes:])], -1)
        full = torch.cat([padded, torch.zeros_like(spectrum[:, :, self.modes:, :])], -2)
        return torch.fft.irfft2(full, s=x.shape[-2:]) + x


def spectrogram(x):
    s = torch.stft(x, 64, hop_length=16, window=torch.hann_window(64), return_complex=True)
    return s.abs().pow(2)


CASES = {
    "rfft_abs": (lambda x: torch.fft.rfft(x).abs(), lambda: (torch.randn(4, 33),)),
    "rfft_dim0_roundtrip": (
        lambda x: torch.fft.irfft(torch.fft.rfft(x, dim=0), n=x.shape[0], dim=0),
        lambda: (torch.randn(9, 4),)),
    "rfft2_times_complex_irfft2": (
        lambda x, w: torch.fft.irfft2(torch.fft.rfft2(x) * w, s=x.shape[-2:]),
        lambda: (torch.randn(2, 8, 16), torch.randn(8, 9, dtype=torch.complex64))),
    "fft_real_plus_ifft_imag": (
        lambda x: torch.fft.fft(x).real + torch.fft.ifft(x).imag, lambda: (torch.randn(4, 32),)),
    "fft_ortho_complex_output": (
        lambda x: torch.fft.fft(x, norm="ortho"), lambda: (torch.randn(3, 20),)),
    "ifft_forward_norm_complex_in_and_out": (
        lambda z: torch.fft.ifft(z * 2 + 1, norm="forward") / (z + 3),
        lambda: (torch.randn(5, 12, dtype=torch.complex64),)),
    "fft2_of_a_transposed_input": (
        lambda x: torch.view_as_real(torch.fft.fft2(x.t())),
        lambda: (torch.randn(7, 6),)),
    "complex_arithmetic": (
        lambda z, r: (z.conj() * z - r / (z + 2)).abs() + (z * r).sum(0).abs(),
        lambda: (torch.randn(6, 5, dtype=torch.complex64), torch.randn(6, 5))),
    "spectrogram": (spectrogram, lambda: (torch.randn(2, 512),)),
}


class Complex(unittest.TestCase):
    def check(self, fn, args):
        torch._dynamo.reset()
        dynamo.stats.reset()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = torch.compile(fn, backend="kiln")(*args)
        fallbacks = [str(w.message) for w in caught if "kiln:" in str(w.message)]
        self.assertEqual(fallbacks, [])
        self.assertGreater(dynamo.stats.compiled, 0)
        want = fn(*args)
        self.assertEqual(got.dtype, want.dtype)
        torch.testing.assert_close(got, want, **TOLERANCE)
        return got

    def test_cases(self):
        for name, (fn, make) in CASES.items():
            with self.subTest(name):
                torch.manual_seed(0)
                self.check(fn, make())

    def test_fourier_layer_with_a_complex_parameter(self):
        torch.manual_seed(0)
        layer = FourierLayer(channels=3, modes=4)
        x = torch.randn(2, 3, 16, 16)
        with torch.no_grad():
            self.check(layer, (x,))

    def test_an_op_without_a_complex_form_runs_eagerly_with_one_warning(self):
        torch._dynamo.reset()
        dynamo.stats.reset()

        def f(x):
            return torch.fft.rfft(x).exp().real * 2

        x = torch.randn(3, 5)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = torch.compile(f, backend="kiln")(x)
        torch.testing.assert_close(y, f(x))
        mine = [str(w.message) for w in caught if "kiln:" in str(w.message)]
        self.assertEqual(len(mine), 1, mine)
        self.assertIn("aten.exp.default", mine[0])
        self.assertIn("complex64", mine[0])


if __name__ == "__main__":
    unittest.main()
