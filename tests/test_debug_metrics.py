"""torch_tpu.debug's counters: reset_metrics() zeroes every one of them."""


def test_reset_metrics_clears_cpu_fallback_counts_and_warns_once():
    # In a child: the fallback is switched on by the environment there.
    import os
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent("""
        import warnings, torch, torch_tpu
        from torch_tpu import debug
        x = torch.rand(1, 1, 4, 4, device="tpu")
        up = lambda: torch.special.airy_ai(x)  # no tpu lowering
        with warnings.catch_warnings(record=True) as first:
            warnings.simplefilter("always")
            want = up().cpu()
        assert debug.metrics()["cpu_fallbacks"] >= 1
        debug.reset_metrics()
        assert debug.metrics()["cpu_fallbacks"] == 0, debug.metrics()
        assert debug.fallback_ops() == {}, debug.fallback_ops()
        with warnings.catch_warnings(record=True) as again:
            warnings.simplefilter("always")
            got = up().cpu()
        assert debug.metrics()["cpu_fallbacks"] >= 1
        assert any("no tpu lowering" in str(w.message) for w in first)
        assert not any("no tpu lowering" in str(w.message) for w in again)
        assert torch.equal(got, want)
        print("ok")
    """)
    env = dict(os.environ, TORCH_TPU_CPU_FALLBACK="1")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0 and "ok" in r.stdout, r.stderr[-3000:]
