"""The persistent executable cache (issue 12): each test starts fresh
processes on a cache directory of its own and checks what they compiled,
what they loaded, and that their results are right and identical, also when
entries are truncated, corrupt, written by two processes at once, or the
directory cannot be created."""

import hashlib
import json
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

# A training step (forward, backward, AdamW) on a small MLP; prints the final
# weights' bytes as hex and the metrics that matter, as JSON.
PROGRAM = textwrap.dedent(
    """
    import json, os, sys, time, torch, torch_tpu
    from torch_tpu import debug
    if os.environ.get("TEST_WAIT_FOR_PREFETCH"):
        # the first program starts the warm-start thread; then it has time
        torch.zeros(1, device="tpu").cpu()
        time.sleep(float(os.environ["TEST_WAIT_FOR_PREFETCH"]))
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3))
    model.to("tpu")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    x, y = torch.randn(5, 8).to("tpu"), torch.randint(0, 3, (5,)).to("tpu")
    for _ in range(2):
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    weights = torch.cat([p.detach().cpu().flatten() for p in model.parameters()])
    m = debug.metrics()
    print(json.dumps({
        "weights": weights.numpy().tobytes().hex(),
        "compiles": m["compiles"],
        "hits": m["persistent_cache_hits"],
        "writes": m["persistent_cache_writes"],
        "prefetched": m["persistent_cache_prefetched"],
        "stats": torch_tpu.cache.stats(),
    }))
    """
)


def run(cache_dir, extra_env=None, program=PROGRAM):
    env = dict(os.environ)
    env["TORCH_TPU_CACHE_DIR"] = str(cache_dir)
    env.update(extra_env or {})
    proc = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc.stderr


def entries(cache_dir):
    return sorted(Path(cache_dir).glob("*.xc"))


def test_a_warm_process_compiles_nothing_and_gets_identical_bits(tmp_path):
    cache = tmp_path / "cache"
    cold, _ = run(cache)
    assert cold["compiles"] > 0 and cold["writes"] == cold["compiles"] and cold["hits"] == 0
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    assert len(entries(cache)) == cold["writes"]
    warm, _ = run(cache)
    assert warm["compiles"] == 0 and warm["writes"] == 0, warm
    assert warm["hits"] == cold["compiles"]
    assert warm["weights"] == cold["weights"]  # bit-identical
    assert warm["stats"]["entries"] == cold["writes"] and warm["stats"]["enabled"]


def test_entries_compiled_under_other_compiler_flags_are_not_reused(tmp_path):
    # XLA_FLAGS changes what the plugin compiles (here: its older elemental
    # emitters instead of the fusion emitters), so a process with other
    # flags compiles its own programs, and one with the same flags reuses them.
    cache = tmp_path / "cache"
    cold, _ = run(cache)
    flags = {"XLA_FLAGS": "--xla_cpu_use_fusion_emitters=false"}
    other, _ = run(cache, flags)
    assert other["hits"] == 0 and other["compiles"] == cold["compiles"], other
    again, _ = run(cache, flags)
    assert again["compiles"] == 0 and again["hits"] == cold["compiles"], again
    assert other["weights"] == again["weights"]


def test_an_entry_carries_the_sha256_of_its_payload(tmp_path):
    cache = tmp_path / "cache"
    run(cache)
    for path in entries(cache):
        data = path.read_bytes()
        header = 8 + 64 + 8 + 32
        assert data[:8] == b"TTPUXC01" and data[8:72].decode() == path.stem
        assert int.from_bytes(data[72:80], "little") == len(data) - header
        assert data[80:header] == hashlib.sha256(data[header:]).digest()


@pytest.mark.parametrize("damage,ahead", [
    ("truncated", False), ("random", False), ("empty", False), ("foreign", False),
    # the warm-start thread's loads go through the same checks
    ("truncated", True), ("foreign", True)])
def test_damaged_entries_are_recompiled_never_trusted(tmp_path, damage, ahead):
    cache = tmp_path / "cache"
    # loaded-ahead: the warm-start thread meets every damaged entry first
    env = {"TEST_WAIT_FOR_PREFETCH": "1"} if ahead else {"TORCH_TPU_CACHE_PREFETCH": "0"}
    cold, _ = run(cache, env)
    paths = entries(cache)
    rng = __import__("random").Random(0)
    for i, path in enumerate(paths):
        data = path.read_bytes()
        if damage == "truncated":
            path.write_bytes(data[: len(data) // 2])
        elif damage == "random":
            path.write_bytes(bytes(rng.randrange(256) for _ in range(len(data))))
        elif damage == "empty":
            path.write_bytes(b"")
        else:  # a sound entry of another program (another name) under this name
            other = format(int(path.stem, 16) ^ 1, "064x").encode()
            path.write_bytes(data[:8] + other + data[72:])
    again, _ = run(cache, env)
    assert again["compiles"] == cold["compiles"] and again["hits"] == 0
    assert again["weights"] == cold["weights"]
    # The damaged entries were replaced by sound ones.
    warm, _ = run(cache, env)
    assert warm["compiles"] == 0 and warm["weights"] == cold["weights"]


def test_a_warm_process_has_its_previous_runs_programs_loaded_ahead(tmp_path):
    cache = tmp_path / "cache"
    wait = {"TEST_WAIT_FOR_PREFETCH": "1.5"}
    cold, _ = run(cache, wait)
    assert cold["prefetched"] == 0
    warm, _ = run(cache, wait)
    assert warm["compiles"] == 0 and warm["hits"] == cold["compiles"]
    # every program after the one that started the thread was ready
    assert warm["hits"] - 2 <= warm["prefetched"] <= warm["hits"], warm
    assert warm["stats"]["loaded_ahead"] == 0  # all used
    assert warm["weights"] == cold["weights"]
    # several loading threads: the same programs, each loaded once
    three, _ = run(cache, {**wait, "TORCH_TPU_CACHE_PREFETCH_THREADS": "3"})
    assert three["compiles"] == 0 and three["hits"] == warm["hits"]
    assert three["hits"] - 2 <= three["prefetched"] <= three["hits"], three
    assert three["stats"]["loaded_ahead"] == 0
    assert three["weights"] == cold["weights"]
    off, _ = run(cache, {**wait, "TORCH_TPU_CACHE_PREFETCH": "0"})
    assert off["prefetched"] == 0 and off["hits"] == warm["hits"]
    assert off["weights"] == cold["weights"]
    for name, value, message in [
            ("TORCH_TPU_CACHE_PREFETCH", "-1", "must be a non-negative integer"),
            ("TORCH_TPU_CACHE_PREFETCH_THREADS", "0", "must be a positive integer")]:
        bad = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True,
                             env=dict(os.environ, TORCH_TPU_CACHE_DIR=str(cache), **{name: value}),
                             timeout=300)
        assert bad.returncode != 0
        assert f"{name} {message}" in bad.stderr, bad.stderr[-2000:]


def test_loading_ahead_starts_with_the_device_not_at_the_first_program(tmp_path):
    # A model's weights moving to the device run no program; the entries
    # load meanwhile.
    cache = tmp_path / "cache"
    run(cache)
    program = textwrap.dedent(
        """
        import json, time, torch, torch_tpu
        from torch_tpu import debug
        w = torch.randn(64, 64).to("tpu")
        time.sleep(1.5)
        m = debug.metrics()
        print(json.dumps({"programs": m["compiles"] + m["persistent_cache_hits"],
                          "stats": torch_tpu.cache.stats()}))
        """
    )
    result, _ = run(cache, program=program)
    assert result["programs"] == 0
    assert result["stats"]["loaded_ahead"] == result["stats"]["entries"] == len(entries(cache))


# Another program than PROGRAM: one add, then it waits for the warm-start thread.
SMALL = textwrap.dedent(
    """
    import json, time, torch, torch_tpu
    from torch_tpu import debug
    y = (torch.ones(7, device="tpu") + 2).cpu()
    time.sleep(1.5)
    print(json.dumps({"hits": debug.metrics()["persistent_cache_hits"],
                      "stats": torch_tpu.cache.stats()}))
    """
)


def test_entries_loaded_ahead_and_not_used_are_not_stamped_as_used(tmp_path):
    # (else a guess the next runs do not need would keep itself the most
    # recently used, and would not age out of the directory's bound)
    cache = tmp_path / "cache"
    run(cache)
    old = 1_000_000_000
    before = entries(cache)
    for path in before:
        os.utime(path, (old, old))
    other, _ = run(cache, program=SMALL)
    assert other["stats"]["loaded_ahead"] > 0  # PROGRAM's, loaded and not used
    # only the entries SMALL used were stamped
    unstamped = [p for p in before if p.stat().st_mtime == old]
    assert len(unstamped) == len(before) - other["hits"]


def test_a_process_that_exits_while_loading_ahead_exits_cleanly(tmp_path):
    cache = tmp_path / "cache"
    fill = "import torch, torch_tpu\nfor n in range(1, 161): (torch.ones(n, device='tpu') * 3).cpu()"
    run(cache, program=fill + "\nprint('{}')")
    assert len(entries(cache)) >= 160
    for _ in range(3):
        proc = subprocess.run([sys.executable, "-c", "import torch, torch_tpu\n"
                               "torch.ones(2, device='tpu').cpu()"], capture_output=True,
                              text=True, env=dict(os.environ, TORCH_TPU_CACHE_DIR=str(cache)),
                              timeout=300)
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert "terminate" not in proc.stderr and "Abort" not in proc.stderr


def test_two_processes_filling_one_cold_cache(tmp_path):
    cache = tmp_path / "cache"
    env = dict(os.environ, TORCH_TPU_CACHE_DIR=str(cache))
    procs = [subprocess.Popen([sys.executable, "-c", PROGRAM], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err[-3000:]
        results.append(json.loads(out.strip().splitlines()[-1]))
    assert results[0]["weights"] == results[1]["weights"]
    # Each program was written once; no half entry is left.
    total = results[0]["compiles"] + results[1]["compiles"]
    writes = results[0]["writes"] + results[1]["writes"]
    assert writes == len(entries(cache)) <= total
    assert not list(cache.glob("*.tmp.*"))
    warm, _ = run(cache)
    assert warm["compiles"] == 0 and warm["weights"] == results[0]["weights"]


def test_an_uncreatable_directory_means_memory_only_with_one_warning(tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    result, stderr = run(blocker / "cache")
    assert result["compiles"] > 0 and result["writes"] == 0
    assert not result["stats"]["enabled"]
    assert stderr.count("persistent executable cache is off") == 1, stderr
    plain, _ = run(tmp_path / "fine")
    assert plain["weights"] == result["weights"]


def test_an_empty_setting_turns_the_disk_tier_off(tmp_path):
    result, stderr = run("")
    assert result["writes"] == 0 and not result["stats"]["enabled"]
    assert "persistent executable cache" not in stderr


def test_the_directory_stays_within_its_byte_bound(tmp_path):
    cache = tmp_path / "cache"
    cold, _ = run(cache)
    sizes = sorted(p.stat().st_size for p in entries(cache))
    bound = sum(sizes) // 2
    bounded = tmp_path / "bounded"
    result, _ = run(bounded, {"TORCH_TPU_CACHE_MAX_BYTES": str(bound)})
    assert result["weights"] == cold["weights"]
    assert sum(p.stat().st_size for p in entries(bounded)) <= bound


def test_clear_empties_the_directory(tmp_path):
    cache = tmp_path / "cache"
    run(cache)
    program = "import torch_tpu; torch_tpu.cache.clear(); print(torch_tpu.cache.stats()['entries'])"
    env = dict(os.environ, TORCH_TPU_CACHE_DIR=str(cache))
    out = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "0" and not entries(cache)


# A compiled training step (torch.compile(backend="tpu") on the loss, fused
# AdamW) of a model whose activation is chosen by argv[1]: Tanh and
# Softsign have the same parameters and shapes, so only the programs' text
# tells the two models apart.
COMPILED_PROGRAM = textwrap.dedent(
    """
    import json, os, sys, time, torch, torch_tpu
    from torch_tpu import debug
    if os.environ.get("TEST_WAIT_FOR_PREFETCH"):
        # the first program starts the warm-start thread; then it has time
        torch.zeros(1, device="tpu").cpu()
        time.sleep(float(os.environ["TEST_WAIT_FOR_PREFETCH"]))
    torch.manual_seed(0)
    act = getattr(torch.nn, sys.argv[1])()
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), act, torch.nn.Linear(16, 3)).to("tpu")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2, fused=True)
    loss_fn = torch.compile(lambda m, x, y: torch.nn.functional.cross_entropy(m(x), y),
                            backend="tpu")
    x, y = torch.randn(5, 8).to("tpu"), torch.randint(0, 3, (5,)).to("tpu")
    for _ in range(3):
        opt.zero_grad()
        loss_fn(model, x, y).backward()
        opt.step()
    weights = torch.cat([p.detach().cpu().flatten() for p in model.parameters()])
    m = debug.metrics()
    print(json.dumps({"weights": weights.numpy().tobytes().hex(), "compiles": m["compiles"],
                      "hits": m["persistent_cache_hits"], "replays": m["graph_replays"]}))
    """
)


def run_compiled(cache_dir, activation):
    env = dict(os.environ, TORCH_TPU_CACHE_DIR=str(cache_dir))
    proc = subprocess.run([sys.executable, "-c", COMPILED_PROGRAM, activation], env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_a_warm_compiled_process_replays_and_a_changed_model_does_not_reuse_entries(tmp_path):
    cache = tmp_path / "cache"
    cold = run_compiled(cache, "Tanh")
    assert cold["compiles"] > 0 and cold["replays"] > 0
    warm = run_compiled(cache, "Tanh")
    assert warm["compiles"] == 0 and warm["hits"] == cold["compiles"]
    assert warm["replays"] == cold["replays"]
    assert warm["weights"] == cold["weights"]
    # Another model over the same shapes: its graphs compile anew and train
    # to what a process without any cache gets.
    changed = run_compiled(cache, "Softsign")
    assert changed["compiles"] > 0
    fresh = run_compiled("", "Softsign")
    assert changed["weights"] == fresh["weights"] != cold["weights"]
