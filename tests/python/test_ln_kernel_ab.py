"""scripts/device/ln_kernel_ab.py without a GPU: the PTX edits it times, on a PTX excerpt in
the shape of torch.compile's LayerNorm kernel (statistics loads before the first bar.sync,
output-pass loads of x, gamma and beta and the store after it).
Run: python3 -m unittest tests/python/test_ln_kernel_ab.py"""

import sys
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts/device"))

import ln_kernel_ab as ab  # noqa: E402

PTX = """.visible .entry triton_red_fused_native_layer_norm_0(
\tcreatepolicy.fractional.L2::evict_last.b64 %rd2, 1.0;
\t@%p1 ld.global.L1::evict_last.L2::cache_hint.v4.b32 { %r1, %r2, %r3, %r4 }, [ %rd1 + 0 ], %rd2;
\t@%p1 ld.global.L1::evict_last.L2::cache_hint.v4.b32 { %r6, %r7, %r8, %r9 }, [ %rd3 + 0 ], %rd4;
\tbar.sync \t0;
\t@%p1 ld.global.L1::evict_first.L2::cache_hint.v4.b32 { %r25, %r26, %r27, %r28 }, [ %rd5 + 0 ], %rd6;
\t@%p1 ld.global.L1::evict_last.L2::cache_hint.v4.b32 { %r29, %r30, %r31, %r32 }, [ %rd7 + 0 ], %rd8;
\t@%p1 st.global.v4.b32 [ %rd11 + 0 ], { %r37, %r38, %r39, %r40 };
"""


def changed(a, b):
    return [(x.strip(), y.strip()) for x, y in zip(a.split("\n"), b.split("\n")) if x != y]


class PtxVariants(unittest.TestCase):
    def test_each_variant_changes_only_the_accesses_it_names(self):
        v = dict(ab.ptx_variants(PTX))
        self.assertEqual(v["as-is"], PTX)
        pass1 = changed(PTX, v["pass1-plain"])
        self.assertEqual(len(pass1), 2)
        self.assertEqual(pass1[0][1], "@%p1 ld.global.v4.b32 { %r1, %r2, %r3, %r4 }, [ %rd1 + 0 ];")
        self.assertEqual([n for _, n in changed(PTX, v["pass1-cs"])][1],
                         "@%p1 ld.global.cs.v4.b32 { %r6, %r7, %r8, %r9 }, [ %rd3 + 0 ];")
        self.assertEqual(changed(PTX, v["pass2x-plain"]),
                         [(PTX.split("\n")[5].strip(),
                           "@%p1 ld.global.v4.b32 { %r25, %r26, %r27, %r28 }, [ %rd5 + 0 ];")])
        self.assertEqual([n for _, n in changed(PTX, v["gb-plain"])],
                         ["@%p1 ld.global.v4.b32 { %r29, %r30, %r31, %r32 }, [ %rd7 + 0 ];"])
        self.assertEqual([n for _, n in changed(PTX, v["store-cs"])],
                         ["@%p1 st.global.cs.v4.b32 [ %rd11 + 0 ], { %r37, %r38, %r39, %r40 };"])

    def test_all_plain_and_our_hints_touch_every_access(self):
        v = dict(ab.ptx_variants(PTX))
        self.assertEqual(len(changed(PTX, v["all-plain"])), 4)  # loads only; the store was plain
        ours = [n for _, n in changed(PTX, v["cs-like-ours"])]
        self.assertEqual(len(ours), 5)
        self.assertTrue(all("cache_hint" not in n for n in ours))
        self.assertIn("ld.global.nc.v4.b32 { %r29", ours[3])
        self.assertIn("st.global.cs.v4.b32", ours[4])
        self.assertNotIn("createpolicy", "".join(ours))

    def test_a_kernel_without_a_barrier_is_refused(self):
        with self.assertRaisesRegex(ValueError, "bar.sync"):
            ab.ptx_variants(PTX.replace("bar.sync", "membar.gl"))


class Specs(unittest.TestCase):
    def test_a_spec_is_read_and_a_bad_one_names_itself_and_the_form(self):
        self.assertEqual(ab.parse_spec("32768x4096:f32:layernorm_regs_f32_v4_n4:256:256"),
                         ("32768x4096", 32768, 4096, "f32", "layernorm_regs_f32_v4_n4", 256, 256))
        for bad in ("32768x4096:f32", "32768x4096:f64:k:256:256", "32768:f32:k:256:256",
                    "32768x4096:f32:k:many:256"):
            with self.assertRaises(SystemExit) as e:
                ab.parse_spec(bad)
            self.assertIn(repr(bad), str(e.exception.code))
            self.assertIn("ROWSxCOLS:DTYPE:KERNEL:TPR:BLOCK", str(e.exception.code))


if __name__ == "__main__":
    unittest.main()
