"""The HTML report of `kiln bench`, looked at in a real browser: a small suite runs on two
plugins, report.html is written, and headless Chromium (no network: every host name resolves
to nothing) renders it to a PNG. The page must be self-contained (no address it would fetch),
carry both plots as inline SVG and the table, and the screenshot must show them: not blank,
with the plots' colours in it. Without Chromium the browser test is skipped, saying why
(scripts/install-deps.sh installs it).

Needs KILN_CLI (the kiln program of the build under test) and the kiln package on PYTHONPATH."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

from PIL import Image

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SUITE = os.path.join(ROOT, "bench", "suites", "plugins-small.yaml")


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class BenchReport(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        out = os.path.join(cls.dir.name, "out")
        run = subprocess.run([os.environ["KILN_CLI"], "bench", SUITE, "--out", out],
                             capture_output=True, text=True, timeout=900)
        if run.returncode != 0:
            raise AssertionError(f"kiln bench failed:\n{run.stdout}\n{run.stderr}")
        cls.report = os.path.join(out, "report.html")
        with open(cls.report, encoding="utf-8") as f:
            cls.html = f.read()

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def test_the_page_is_self_contained(self):
        # Namespace names inside SVG are not fetched; anything else with a scheme would be.
        fetched = [u for u in re.findall(r"(?:src|href)\s*=\s*[\"']([^\"']+)", self.html)
                   if not u.startswith("#")]
        self.assertEqual(fetched, [], "the report points at resources outside itself")
        self.assertNotIn("<script", self.html)
        self.assertEqual(self.html.count("<svg"), 2, "two inline plots")
        self.assertIn("<table>", self.html)
        self.assertEqual(self.html.count("<tr class"), 8, "one row per cell")

    def test_chromium_renders_the_plots(self):
        browser = chromium()
        if browser is None:
            self.skipTest("no Chromium on PATH (scripts/install-deps.sh installs it)")
        shot = os.path.join(self.dir.name, "report.png")
        run = subprocess.run(
            [browser, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
             "--host-resolver-rules=MAP * ~NOTFOUND", "--window-size=1400,1400",
             f"--screenshot={shot}", "file://" + self.report],
            capture_output=True, text=True, timeout=300)
        self.assertTrue(os.path.exists(shot), f"no screenshot:\n{run.stdout}\n{run.stderr}")
        image = Image.open(shot).convert("RGB")
        self.assertEqual(image.size, (1400, 1400))
        raw = image.tobytes()
        pixels = [tuple(raw[i:i + 3]) for i in range(0, len(raw), 3)]
        inked = sum(1 for p in pixels if p != (255, 255, 255)) / len(pixels)
        self.assertGreater(inked, 0.03, "the page rendered almost blank")
        # matplotlib's first two colours: the bars and points of the two targets.
        blue, orange = (0x1F, 0x77, 0xB4), (0xFF, 0x7F, 0x0E)
        near = lambda p, c: all(abs(a - b) <= 12 for a, b in zip(p, c))  # noqa: E731
        self.assertGreater(sum(1 for p in pixels if near(p, blue)), 200, "no first-target marks")
        self.assertGreater(sum(1 for p in pixels if near(p, orange)), 200, "no second-target marks")


if __name__ == "__main__":
    if "KILN_CLI" not in os.environ:
        sys.exit("set KILN_CLI to the kiln program")
    unittest.main()
