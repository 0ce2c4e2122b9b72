"""bench/peers/comm_peers.py without a GPU: the plan read from a comm artifact, the tolerance
and buffer lengths of src/comm/reference.rs, the per-sample mean over ranks, each rank's median
in the notes, and the rows as
`comm_bench --merge` reads them.
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
