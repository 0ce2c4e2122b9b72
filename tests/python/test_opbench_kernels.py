"""python/opbench/kernels.py on the CPU path: the manifest it writes, and kernel_bench's points
returned as rows. Run by tests/python_entry.rs (cargo test) with OPBENCH_KERNEL_BENCH set."""

import sys
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))

from opbench import kernels as ok  # noqa: E402

LLMC = REPO / "tests/fixtures/kernels/llmc/layernorm_forward.cu"
ARGS = ["out", "mean", "rstd", "inp", "weight", "bias", "N", "C"]


def buffers():
    return [
        ok.buffer("out", "f32", "N * C", "output", tolerance=1e-5),
        ok.buffer("mean", "f32", "N", "output", optional=True),
        ok.buffer("rstd", "f32", "N", "output", optional=True),
        ok.buffer("inp", "f32", "N * C", "input", init="normal(0, 1)"),
        ok.buffer("weight", "f32", "C", "input"),
        ok.buffer("bias", "f32", "C", "input"),
    ]


class OpbenchKernelsTest(unittest.TestCase):
    def test_cpu_rows_for_an_unmodified_file(self):
        k1 = ok.load_kernel(LLMC, "layernorm_forward_kernel1", block=[128, 256],
                            grid="ceil_div(N, block_x)")
        k4 = ok.load_kernel(LLMC, "layernorm_forward_kernel4<256, float>", block=256, grid="N")
        rows = ok.benchmark([k1, k4], buffers(), args=ARGS, device="cpu", N=[1024, 4096], C=[768])
        self.assertEqual(len(rows), 6)
        self.assertEqual(rows[0]["kernel"], "layernorm_forward_kernel1")
        self.assertTrue(rows[0]["reference"])
        self.assertEqual(rows[1]["block"], "256")
        self.assertEqual(rows[1]["grid"], [4, 1, 1])
        self.assertEqual(rows[2]["kernel"], "layernorm_forward_kernel4<256, float>")
        self.assertEqual(rows[2]["grid"], [1024, 1, 1])
        self.assertEqual(rows[5]["params"], {"C": 768, "N": 4096})

    def test_manifest_text(self):
        k = ok.load_kernel(LLMC, "layernorm_forward_kernel3", block=(32, 4), args=ARGS,
                           grid=["ceil_div(N * 32, threads)"])
        text = ok.manifest([k], buffers(), N=[64], C=768, flops="8 * N * C")
        self.assertIn('name = "layernorm_forward_kernel3"', text)
        self.assertIn("block = [[32, 4]]", text)
        self.assertIn("C = [768]", text)
        self.assertIn("optional = true", text)
        self.assertIn('flops = "8 * N * C"', text)
        self.assertIn(f'source = "{LLMC}"', text)

    def test_errors_come_from_kernel_bench(self):
        k = ok.load_kernel(LLMC, "layernorm_forward_kernel9", grid="N")
        with self.assertRaises(RuntimeError) as e:
            ok.benchmark([k], buffers(), args=ARGS, device="cpu", N=[64], C=[64])
        self.assertIn("layernorm_forward_kernel9", str(e.exception))
        self.assertIn("mean_kernel(float* mean", str(e.exception))
        with self.assertRaises(FileNotFoundError):
            ok.load_kernel(REPO / "no_such.cu", "k")

    def test_names_cannot_inject_into_the_manifest(self):
        k = ok.load_kernel(LLMC, "layernorm_forward_kernel3", block=32, args=ARGS, grid="N")
        for params in ({"n = [4096] #": [1000]}, {"x]\n[[kernel]]\nname = 'y": [1]},
                       {"\U0001F600": [1]}):
            with self.assertRaises(ValueError) as e:
                ok.manifest([k], buffers(), N=[64], C=[64], **params)
            self.assertIn("not a name", str(e.exception))
        with self.assertRaises(ValueError):
            ok.manifest([k], buffers(), N=[64], C=[64],
                        scalars={"eps = 1\nother": {"type": "f32", "value": 1}})
        with self.assertRaises(ValueError):
            ok.manifest([k], [dict(buffers()[0], **{"len = 1 #": 2})], N=[64], C=[64])
        # Text outside the Basic Multilingual Plane is written as itself: valid TOML.
        text = ok.manifest([k], buffers(), reference="k\U0001F600\x7f", N=[64], C=[64])
        self.assertIn('reference = "k\U0001F600\\u007f"', text)
        try:
            import tomllib
        except ImportError:
            return
        self.assertEqual(tomllib.loads(text)["reference"], "k\U0001F600\x7f")


if __name__ == "__main__":
    unittest.main()
