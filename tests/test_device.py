"""torch.tpu device module, autoload and plugin selection."""

import os
import subprocess
import sys

import pytest
import torch

import torch_tpu


def run_python(code, **env):
    full_env = dict(os.environ, **env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=full_env, timeout=300)


def test_autoload_without_import():
    r = run_python("import torch; print(torch.ones(3, device='tpu').cpu().tolist())")
    assert r.returncode == 0, r.stderr
    assert "[1.0, 1.0, 1.0]" in r.stdout


def test_autoload_can_be_disabled():
    r = run_python("import torch, sys; print('torch_tpu' in sys.modules)",
                   TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "False"


def test_device_module_basics():
    assert torch.tpu.is_available()
    assert torch.tpu.device_count() == 1
    assert torch.tpu.current_device() == 0
    torch.tpu.set_device(0)
    torch.tpu.synchronize()
    props = torch.tpu.get_device_properties(0)
    assert props.platform == "cpu"
    assert props.pjrt_api_version.startswith("0.")
    assert props.plugin_path.endswith(".so")
    assert props.total_memory > 0
    assert torch.tpu.get_device_name() == props.name
    with torch.tpu.device(0):
        assert torch.tpu.current_device() == 0


def test_memory_api_as_torch_cuda():
    """The torch.cuda memory calls training scripts use, under torch.tpu."""
    torch.tpu.init()
    torch.tpu.reset_peak_memory_stats()
    x = torch.ones(1000, device="tpu")
    nested = torch.tpu.memory_stats_as_nested_dict()
    assert nested["allocated_bytes"]["all"]["current"] == torch.tpu.memory_allocated() >= 4000
    summary = torch.tpu.memory_summary()
    assert "tpu memory summary, device ID 0" in summary and "Allocated memory" in summary
    with pytest.warns(FutureWarning, match="renamed to torch.tpu.memory_reserved"):
        assert torch.tpu.memory_cached() == torch.tpu.memory_reserved()
    with pytest.warns(FutureWarning, match="resets /all/ peak memory stats"):
        torch.tpu.reset_max_memory_allocated()
    assert torch.tpu.OutOfMemoryError is torch.cuda.OutOfMemoryError
    del x


def test_per_process_memory_fraction():
    assert torch.tpu.get_per_process_memory_fraction() == 1.0
    total = torch.tpu.get_device_properties().total_memory
    try:
        torch.tpu.set_per_process_memory_fraction(1e-6)
        assert torch.tpu.get_per_process_memory_fraction() == 1e-6
        with pytest.raises(torch.tpu.OutOfMemoryError, match="allowed to this process"):
            torch.empty(total // 10**5, dtype=torch.uint8, device="tpu")
    finally:
        torch.tpu.set_per_process_memory_fraction(1.0)
    assert torch.empty(total // 10**5, dtype=torch.uint8, device="tpu").numel() > 0
    # the device's own size is unchanged by the fraction
    assert torch.tpu.mem_get_info()[1] == total
    with pytest.raises(ValueError, match="Allowed range: 0~1"):
        torch.tpu.set_per_process_memory_fraction(1.5)
    with pytest.raises(TypeError, match="must be `float`"):
        torch.tpu.set_per_process_memory_fraction(1)


def test_accelerator_reports_tpu():
    assert torch.accelerator.is_available()
    assert torch.accelerator.current_accelerator().type == "tpu"


def test_every_torch_accelerator_call_works_on_tpu():
    """torch.accelerator's whole API, in a child (a missing registration
    used to segfault: empty_host_cache() asked a host allocator tpu had not
    registered)."""
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent("""
        import torch
        torch.ones(3, device="tpu").sum().item()
        a = torch.accelerator
        pinned = torch.ones(1000).pin_memory()
        assert pinned.is_pinned()
        a.empty_host_cache()
        a.empty_cache()
        a.synchronize()
        a.reset_peak_memory_stats()
        a.reset_accumulated_memory_stats()
        assert a.memory_allocated() >= 0 and a.max_memory_allocated() >= 0
        assert isinstance(a.memory_stats(), dict)
        free, total = a.get_memory_info()
        assert 0 < free <= total
        assert a.device_count() >= 1 and a.current_device_index() == 0
        assert a.current_stream().device.type == "tpu"
        del pinned
        a.empty_host_cache()
        print("ok")
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "ok" in r.stdout, (r.returncode, r.stderr[-2000:])


def test_tensor_and_module_methods():
    x = torch.ones(2).tpu()
    assert x.is_tpu and x.device.type == "tpu"
    m = torch.nn.Linear(2, 2).tpu()
    assert m.weight.device.type == "tpu"


def test_rng_state():
    torch.tpu.manual_seed(1234)
    assert torch.tpu.initial_seed() == 1234
    state = torch.tpu.get_rng_state()
    assert state.dtype == torch.uint8 and state.numel() >= 16
    seed = int.from_bytes(bytes(state[-16:-8].tolist()), "little")
    assert seed == 1234
    torch.tpu.manual_seed(99)
    torch.tpu.set_rng_state(state)
    assert torch.tpu.initial_seed() == 1234
    torch.tpu.manual_seed_all(5)
    assert torch.tpu.initial_seed() == 5
    g = torch.Generator(device="tpu")
    assert g.device.type == "tpu"


def test_streams_and_events():
    s = torch.tpu.Stream()
    assert s.device.type == "tpu"
    with torch.tpu.stream(s):
        assert torch.tpu.current_stream() == s
        x = torch.full((128,), 2.0, device="tpu")
        x.copy_(torch.arange(128.0))
        e = torch.tpu.Event()
        e.record()
    e.synchronize()
    assert e.query()
    assert s.query()
    s.synchronize()
    assert x.cpu()[5].item() == 5.0
    assert torch.tpu.current_stream() == torch.tpu.default_stream()


def test_cpu_device_count_env():
    r = run_python("import torch; print(torch.tpu.device_count()); "
                   "x = torch.ones(2, device='tpu:1'); print(x.device, x.cpu().tolist())",
                   TORCH_TPU_CPU_DEVICE_COUNT="2")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[0] == "2"
    assert "tpu:1 [1.0, 1.0]" in r.stdout


def test_plugin_override(plugin_path):
    code = ("import torch; x = torch.arange(6.0, device='tpu').reshape(2, 3); "
            "x.t()[0].fill_(9); print(x.cpu().tolist()); "
            "print(torch.tpu.get_device_properties().pjrt_api_version)")
    r = run_python(code, TORCH_TPU_PJRT_PLUGIN=plugin_path)
    assert r.returncode == 0, r.stderr
    assert "[[9.0, 1.0, 2.0], [9.0, 4.0, 5.0]]" in r.stdout


def test_bad_plugin_path_is_an_error_not_a_crash():
    r = run_python("import torch\ntry:\n    torch.ones(1, device='tpu')\n"
                   "except RuntimeError as e:\n    print('RuntimeError', e)",
                   TORCH_TPU_PJRT_PLUGIN="/nonexistent/plugin.so")
    assert r.returncode == 0, r.stderr
    assert "RuntimeError" in r.stdout and "/nonexistent/plugin.so" in r.stdout


def test_metrics_count_work():
    torch_tpu.debug.reset_metrics()
    x = torch.arange(10.0, device="tpu")
    y = (x[2:5] * 1.5).cpu()
    m = torch_tpu.debug.metrics()
    assert m["executions"] >= 1
    assert m["d2h_transfers"] >= 1 and m["d2h_bytes"] >= 12
    torch.ones(7, device="tpu").copy_(torch.zeros(7))
    m2 = torch_tpu.debug.metrics()
    assert m2["h2d_transfers"] > m["h2d_transfers"]
    assert m2["h2d_bytes"] >= m["h2d_bytes"] + 28
    # A second identical program is a cache hit, not a compile.
    before = torch_tpu.debug.metrics()
    (x[2:5] * 1.5).cpu()
    after = torch_tpu.debug.metrics()
    assert after["compiles"] == before["compiles"]
    assert after["cache_hits"] > before["cache_hits"]
    report = torch_tpu.debug.metrics_report()
    assert "programs compiled" in report
    assert y.tolist() == [3.0, 4.5, 6.0]


def test_runtime_scalar_is_uploaded_once_per_value():
    # Scalars are program arguments (a new value never recompiles) and each
    # distinct value is uploaded once, not on every launch.
    x = torch.arange(6.0, device="tpu")
    x.mul(2.75)
    before = torch_tpu.debug.metrics()
    for _ in range(5):
        y = x.mul(2.75)
    after = torch_tpu.debug.metrics()
    assert after["h2d_transfers"] == before["h2d_transfers"]
    assert after["compiles"] == before["compiles"]
    z = x.mul(-1.3125)  # a value no other test uses: one upload, still no compile
    again = torch_tpu.debug.metrics()
    assert again["h2d_transfers"] == after["h2d_transfers"] + 1
    assert again["compiles"] == after["compiles"]
    assert y.cpu().tolist() == [i * 2.75 for i in range(6)]
    assert z.cpu().tolist() == [i * -1.3125 for i in range(6)]
    # Same bytes, different type: a separate buffer with the right value.
    xi = torch.arange(6, device="tpu")
    assert (xi * 3).cpu().tolist() == [i * 3 for i in range(6)]
    assert (x * 3).cpu().tolist() == [i * 3.0 for i in range(6)]


def test_fill_is_pending_until_read():
    x = torch.full((16,), 3.0, device="tpu")
    assert torch_tpu._C._storage_state(x)["state"] == "pending"
    before = torch_tpu.debug.metrics()
    assert x.cpu().tolist() == [3.0] * 16
    after = torch_tpu.debug.metrics()
    assert after["pending_materializations"] == before["pending_materializations"] + 1
    assert torch_tpu._C._storage_state(x)["state"] == "materialized"
    # Overwriting a pending fill never runs it.
    y = torch.zeros(16, device="tpu")
    y.copy_(torch.ones(16))
    assert torch_tpu._C._storage_state(y)["state"] == "materialized"
    assert torch_tpu.debug.metrics()["pending_materializations"] == after["pending_materializations"]


def test_eager_modes():
    assert torch_tpu.get_eager_mode() == "strict"
    with torch_tpu.eager_mode("debug"):
        assert torch_tpu.get_eager_mode() == "debug"
        assert torch.ones(3, device="tpu").cpu().sum().item() == 3
    assert torch_tpu.get_eager_mode() == "strict"
    with pytest.raises(ValueError):
        torch_tpu.set_eager_mode("fast")
    r = run_python("import torch_tpu; print(torch_tpu.get_eager_mode())",
                   TORCH_TPU_LAUNCH_BLOCKING="1")
    assert r.stdout.strip() == "debug", r.stderr


def test_host_access_to_device_pointer_crashes_loudly():
    # The fake device addresses are PROT_NONE: reading one must fault rather
    # than return garbage. Run in a child and expect a segfault signal.
    code = ("import ctypes, torch; x = torch.ones(4, device='tpu'); "
            "ctypes.c_float.from_address(x.data_ptr()).value")
    # Under the sanitizer job the fault is expected, not a finding: let it
    # kill the child instead of AddressSanitizer reporting it.
    r = run_python(code, ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":handle_segv=0")
    assert r.returncode < 0  # killed by SIGSEGV
