"""bench/reductions.py on the CPU: the cases, their byte counts and the table
read from a recorded result (no GPU)."""
import contextlib
import io
import json
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(sys.argv.pop(1), "bench"))
import reductions as R  # noqa: E402


class Reductions(unittest.TestCase):
    def test_every_case_at_least_256_mb(self):
        for name, *_ in R.CASES:
            self.assertGreaterEqual(R.numel(R.case_shape(name)) * 4, 256 << 20, name)

    def test_bytes_rules(self):
        # A norm: two reads and one write of 64 x 48 x 192 x 180 floats.
        n = 64 * 48 * 192 * 180
        self.assertEqual(R.min_bytes("batch_norm2d_few_channels"), 4 * 3 * n)
        # A sum over dim 0 of 8192 x 8192: one read, 8192 outputs.
        self.assertEqual(R.min_bytes("sum_dim0"), 4 * (8192 * 8192 + 8192))
        # A 3x3 stride-2 max pool with padding 1 on 128 x 128: 64 x 64 out.
        self.assertEqual(R.min_bytes("max_pool2d"),
                         4 * (32 * 128 * 128 * 128 + 32 * 128 * 64 * 64))
        # Softmax: one read and one write.
        self.assertEqual(R.min_bytes("softmax_last"), 4 * 2 * 65536 * 1024)

    def test_emit_writes_kernelbench_tasks(self):
        with tempfile.TemporaryDirectory() as d:
            with contextlib.redirect_stdout(io.StringIO()):
                R.emit(d)
            files = sorted(os.listdir(d))
            self.assertEqual(len(files), len(R.CASES))
            with open(os.path.join(d, "19_sum_dim0.py")) as f:
                text = f.read()
            self.assertIn("return x.sum(dim=0)", text)
            self.assertIn("torch.randn(8192, 8192)", text)
            self.assertIn("def get_init_inputs", text)

    def test_table_from_a_recorded_run(self):
        res = {"tasks": [{"task": "19_sum_dim0.py", "eager_ms": 0.082,
                          "compile_ms": 0.094, "new_ms": 0.083,
                          "forward_choice": "original",
                          "regions": [{"status": "slower"}]},
                         {"task": "3_batch_norm3d.py", "eager_ms": 3.874,
                          "compile_ms": 0.509, "new_ms": 0.673,
                          "forward_choice": "new",
                          "regions": [{"status": "verified"}]}],
               "kernels": {"sum_dim0": {"status": "accepted", "kernel_ms": 0.0916},
                           "batch_norm3d": {"status": "accepted", "kernel_ms": 0.427},
                           "mean_middle": {"status": "nan_mismatch"}}}
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            R.table(res, 4212.0)
        text = out.getvalue()
        # 268468224 bytes in 0.0916 ms at a 4212 GB/s copy: 70%.
        self.assertIn("| sum_dim0 | leading dim (8192 of 8192) | 268 | 0.082 | 0.094 | "
                      "0.092 | 70% | 1.03x | 0.082 | slower (forward fell back) |", text)
        self.assertIn("| mean_middle |", text)
        self.assertIn("nan_mismatch", text)
        # batch_norm3d (91% of copy, 1.19x compile) is the one case not listed.
        self.assertIn("| batch_norm3d | few long rows (C=16, 3D) | 1636 | 3.874 | 0.509 | "
                      "0.427 | 91% | 1.19x | 0.673 | verified |", text)
        self.assertIn(f"without a kernel: {len(R.CASES) - 1} of {len(R.CASES)}", text)
        self.assertNotIn(", batch_norm3d,", text.split("without a kernel")[1])


class KernelPhase(unittest.TestCase):
    """The kernel measurement's plumbing on the CPU: export on the meta
    device, kb-rewrite codegen, and a stand-in kb-verify that answers the
    job with a verdict as the real one prints it."""

    def test_verdicts_per_case(self):
        kb_rewrite = shutil.which(os.environ.get("KB_REWRITE", "kb-rewrite"))
        if not kb_rewrite:
            self.skipTest("no kb-rewrite on PATH")
        with tempfile.TemporaryDirectory() as d:
            with contextlib.redirect_stdout(io.StringIO()):
                R.emit(d)
            fake = os.path.join(d, "fake-kb-verify")
            with open(fake, "w") as f:
                f.write("#!/bin/sh\n"
                        "grep -q linalg_vector_norm \"$2\" && exit 3\n"
                        "echo '{\"status\": \"accepted\", \"detail\": \"\", "
                        "\"candidate_timing\": {\"median_ms\": 0.09}, "
                        "\"eager_timing\": {\"median_ms\": 0.08}, "
                        "\"copy_bandwidth_gbs\": 4200.0}'\n")
            os.chmod(fake, 0o755)
            out = io.StringIO()
            seen = []
            with contextlib.redirect_stdout(out):
                k = R.kernel_phase(d, kb_rewrite, fake, device="meta",
                                   only={"sum_dim0", "vector_norm_last"},
                                   done=lambda o: seen.append(sorted(o)))
        self.assertEqual(set(k), {"sum_dim0", "vector_norm_last"})
        self.assertEqual(k["sum_dim0"]["status"], "accepted")
        self.assertEqual(k["sum_dim0"]["kernel_ms"], 0.09)
        self.assertEqual(k["sum_dim0"]["aten_ms"], 0.08)
        # A verifier that prints nothing: the case says so, the run goes on.
        self.assertEqual(k["vector_norm_last"]["status"], "verify_failed")
        # The caller saw the results after each case, failed ones included
        # (what it saves survives a command cut short by its time limit).
        self.assertEqual(seen, [["sum_dim0"], ["sum_dim0", "vector_norm_last"]])


if __name__ == "__main__":
    unittest.main(verbosity=2)
