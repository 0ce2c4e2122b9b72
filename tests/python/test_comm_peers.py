"""bench/peers/comm_peers.py without a GPU: the plan read from a comm artifact, the tolerance
and buffer lengths of src/comm/reference.rs, the per-sample mean over ranks, each rank's median
in the notes, and the rows as
`comm_bench --merge` reads them; and scripts/device/comm_bar.py's torch-against-NCCL summary.
Run: python3 -m unittest tests/python/test_comm_peers.py"""

import sys
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench/peers"))

import comm_peers as cp  # noqa: E402


def nccl_row(collective, nbytes, status="ok", n=40):
    row = {"benchmark": "comm", "implementation": "nccl", "status": status,
           "params": {"collective": collective, "dtype": "bf16", "bytes": nbytes,
                      "count": nbytes // 2, "world_size": 4}}
    if status == "ok":
        row["timing"] = {"method": "cuda_events", "warmup": 5, "launches_per_sample": 12,
                         "l2_cleared": False}
        row["stats"] = {"time_us": {"n": n}}
    return row


class Plan(unittest.TestCase):
    def test_points_mirror_nccls_timing_and_cap_the_samples(self):
        a = {"kind": "comm", "results": [
            nccl_row("all_reduce", 1024), nccl_row("all_gather", 2048, n=500),
            nccl_row("broadcast", 8, status="failed"),
            dict(nccl_row("all_reduce", 1024), implementation="torch")]}
        pts = cp.read_plan(a, 200)
        self.assertEqual(len(pts), 3)
        self.assertEqual((pts[0]["warmup"], pts[0]["per_sample"], pts[0]["samples"]), (5, 12, 40))
        self.assertEqual(pts[1]["samples"], 200)
        self.assertFalse(pts[2]["timed"])
        self.assertEqual(tuple(pts[0]["params"]), cp.POINT_PARAMS)

    def test_other_artifacts_are_refused(self):
        with self.assertRaises(SystemExit) as e:
            cp.read_plan({"kind": "layernorm", "results": []}, 10)
        self.assertIn("expected 'comm'", str(e.exception))
        with self.assertRaises(SystemExit) as e:
            cp.read_plan({"kind": "comm", "results": []}, 10)
        self.assertIn("run comm_bench first", str(e.exception))


class Rules(unittest.TestCase):
    def test_tolerance_and_lengths_are_the_rust_ones(self):
        # src/comm/reference.rs: copies exact, sums (n+1) unit roundoffs.
        self.assertEqual(cp.tolerance("all_gather", "bf16", 4), 0.0)
        self.assertEqual(cp.tolerance("all_reduce", "bf16", 4), 5 * 2.0 ** -8)
        self.assertEqual(cp.tolerance("reduce_scatter", "f32", 2), 3 * 2.0 ** -24)
        self.assertEqual(cp.lengths("all_gather", 64, 4), (16, 64))
        self.assertEqual(cp.lengths("reduce_scatter", 64, 4), (64, 16))
        self.assertEqual(cp.lengths("broadcast", 64, 4), (64, 64))

    def test_a_sample_is_the_mean_over_ranks(self):
        self.assertEqual(cp.mean_over_ranks([[10.0, 20.0], [12.0, 22.0]]), [11.0, 21.0])

    def test_each_ranks_median_is_noted_as_for_nccls_rows(self):
        self.assertEqual(cp.rank_medians_note([[3.0, 1.0, 2.0], [7.0, 4.0, 6.0, 5.0]]),
                         "each rank's own median (us): 0: 2.00, 1: 5.50")

    def test_rows_have_the_fields_the_merge_reads(self):
        pt = cp.read_plan({"kind": "comm", "results": [nccl_row("all_reduce", 1024)]}, 10)[0]
        r = cp.peer_row(pt, "ok", samples=[1, 2], timing={"method": cp.METHOD},
                        correctness={"passed": True}, notes=["", "x"])
        self.assertEqual(set(r), {"benchmark", "implementation", "status", "params",
                                  "samples_us", "timing", "correctness", "notes"})
        self.assertEqual((r["samples_us"], r["notes"]), ([1.0, 2.0], ["x"]))
        self.assertEqual(cp.finite(float("nan")), cp.NAN_ERR)


if __name__ == "__main__":
    unittest.main()


sys.path.insert(0, str(REPO / "scripts/device"))
import comm_bar  # noqa: E402


class Bar(unittest.TestCase):
    def test_torch_against_nccl_at_256_mib_and_more(self):
        def row(imp, nbytes, p50, notes=()):
            return {"implementation": imp, "status": "ok", "notes": list(notes),
                    "params": {"collective": "all_reduce", "dtype": "f32", "bytes": nbytes},
                    "stats": {"time_us": {"p50": p50}}}
        big = 256 << 20
        a = {"results": [row("nccl", big, 900.0), row("torch", big, 950.0, ["each rank's own "
                         "median (us): 0: 940.00, 1: 960.00"]),
                         row("nccl", 2 * big, 1700.0), row("torch", 2 * big, 1780.0),
                         row("nccl", 1024, 10.0), row("torch", 1024, 40.0),
                         dict(row("torch", 4 * big, 1.0), status="failed")]}
        m = comm_bar.medians(a)
        self.assertEqual(sorted(k[2] for k in m), [big, 2 * big])  # small and failed rows left out
        self.assertEqual(m[("all_reduce", "f32", big)]["torch"][1], "0: 940.00, 1: 960.00")
        un = comm_bar.unaligned_medians({"rows": [
            {"params": {"collective": "all_reduce", "dtype": "f32", "bytes": big},
             "samples_us": [1000.0, 990.0, 1010.0],
             "notes": [cp.rank_medians_note([[1000.0], [990.0]])]}]})
        self.assertEqual(un[("all_reduce", "f32", big)], (1000.0, "0: 1000.00, 1: 990.00"))
        self.assertEqual(comm_bar.within_count(m), (1, 2))  # 900/950 = 0.947: out; 1700/1780 in
