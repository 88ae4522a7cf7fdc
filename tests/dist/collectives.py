"""Every tpu_dist collective against its math, run under torchrun.

Each rank builds every rank's input deterministically, so each check
computes the expected result locally. Prints "PASS <name>" per check; any
failure raises (non-zero exit).
"""

import os
import sys
import time

import torch
import torch.distributed as dist
from params_check import finish

RANK = int(os.environ["RANK"])
WORLD = int(os.environ["WORLD_SIZE"])
DEV = torch.device("tpu")


def value(rank, shape=(6,), dtype=torch.float32, salt=0):
    """Rank `rank`'s input: distinct per rank, exact in every dtype used."""
    n = 1
    for s in shape:
        n *= s
    base = torch.arange(n, dtype=torch.float64).reshape(shape)
    v = (base % 5) + rank + 1 + salt
    if dtype == torch.bool:
        return (base.long() + rank) % 2 == 0
    return v.to(dtype)


def close(actual, expected, name):
    actual = actual.cpu()
    if actual.dtype != expected.dtype or actual.shape != expected.shape:
        raise AssertionError(f"{name}: got {actual.dtype}{list(actual.shape)}, "
                             f"expected {expected.dtype}{list(expected.shape)}")
    if expected.is_floating_point():
        tol = 1e-2 if expected.dtype in (torch.bfloat16, torch.float16) else 1e-6
        ok = torch.allclose(actual.double(), expected.double(), rtol=tol, atol=tol)
    else:
        ok = torch.equal(actual, expected)
    if not ok:
        raise AssertionError(f"{name}: got {actual} expected {expected}")


def passed(name):
    print(f"PASS {name}", flush=True)


def reduce_all(op, tensors):
    out = tensors[0].clone()
    for t in tensors[1:]:
        if op == dist.ReduceOp.SUM or op == dist.ReduceOp.AVG:
            out = out + t
        elif op == dist.ReduceOp.PRODUCT:
            out = out * t
        elif op == dist.ReduceOp.MIN:
            out = torch.minimum(out, t)
        elif op == dist.ReduceOp.MAX:
            out = torch.maximum(out, t)
        elif op == dist.ReduceOp.BAND:
            out = out & t
        elif op == dist.ReduceOp.BOR:
            out = out | t
        elif op == dist.ReduceOp.BXOR:
            out = out ^ t
    if op == dist.ReduceOp.AVG:
        out = out / len(tensors)
    return out.to(tensors[0].dtype)


def check_all_reduce():
    R = dist.ReduceOp
    cases = [(dt, op) for dt in (torch.float32, torch.bfloat16, torch.float64)
             for op in (R.SUM, R.AVG, R.PRODUCT, R.MIN, R.MAX)]
    cases += [(dt, op) for dt in (torch.int64, torch.int32, torch.uint8)
              for op in (R.SUM, R.PRODUCT, R.MIN, R.MAX, R.BAND, R.BOR, R.BXOR)]
    cases += [(torch.bool, R.MAX), (torch.bool, R.MIN)]
    for dtype, op in cases:
        x = value(RANK, (2, 3), dtype).to(DEV)
        dist.all_reduce(x, op=op)
        close(x, reduce_all(op, [value(r, (2, 3), dtype) for r in range(WORLD)]),
              f"all_reduce {dtype} {op}")
    passed("all_reduce dtypes and ops")


def check_views():
    # A strided view: only its elements are reduced, the rest of the base
    # is untouched (Gloo alone writes x[1:4] for x[1::2] on CPU).
    for device in (DEV, torch.device("cpu")):
        base = torch.full((8,), -1.0, device=device)
        base[1::2] = RANK + 1.0
        dist.all_reduce(base[1::2])
        expected = torch.full((8,), -1.0)
        expected[1::2] = sum(r + 1.0 for r in range(WORLD))
        close(base, expected, f"all_reduce strided view on {device}")
    # A transposed view and a view at an offset.
    m = value(RANK, (3, 4)).to(DEV)
    dist.all_reduce(m.t())
    close(m, sum(value(r, (3, 4)) for r in range(WORLD)), "all_reduce transposed")
    b = torch.zeros(10, device=DEV)
    b[3:7] = value(RANK, (4,)).to(DEV)
    dist.broadcast(b[3:7], src=WORLD - 1)
    expected = torch.zeros(10)
    expected[3:7] = value(WORLD - 1, (4,))
    close(b, expected, "broadcast into an offset view")
    passed("views")


def check_broadcast_reduce():
    for src in range(WORLD):
        x = value(RANK, (5,), torch.bfloat16).to(DEV)
        dist.broadcast(x, src=src)
        close(x, value(src, (5,), torch.bfloat16), f"broadcast src={src}")
    x = value(RANK, (4,)).to(DEV)
    dist.reduce(x, dst=0, op=dist.ReduceOp.MAX)
    if RANK == 0:
        close(x, reduce_all(dist.ReduceOp.MAX, [value(r, (4,)) for r in range(WORLD)]), "reduce")
    passed("broadcast and reduce")


def check_gathers():
    x = value(RANK, (2, 3), torch.int64).to(DEV)
    out = [torch.empty(2, 3, dtype=torch.int64, device=DEV) for _ in range(WORLD)]
    dist.all_gather(out, x)
    for r in range(WORLD):
        close(out[r], value(r, (2, 3), torch.int64), "all_gather")
    flat = torch.empty(WORLD * 2, 3, device=DEV)
    dist.all_gather_into_tensor(flat, value(RANK, (2, 3)).to(DEV))
    close(flat, torch.cat([value(r, (2, 3)) for r in range(WORLD)]), "all_gather_into_tensor")
    # Coalesced, as FSDP2 issues it.
    outs = [torch.empty(WORLD * 4, device=DEV), torch.empty(WORLD * 2, device=DEV)]
    with dist._coalescing_manager():
        dist.all_gather_into_tensor(outs[0], value(RANK, (4,)).to(DEV))
        dist.all_gather_into_tensor(outs[1], value(RANK, (2,), salt=7).to(DEV))
    close(outs[0], torch.cat([value(r, (4,)) for r in range(WORLD)]), "coalesced all_gather 0")
    close(outs[1], torch.cat([value(r, (2,), salt=7) for r in range(WORLD)]),
          "coalesced all_gather 1")
    gathered = [torch.empty(3, device=DEV) for _ in range(WORLD)] if RANK == 0 else None
    dist.gather(value(RANK, (3,)).to(DEV), gathered, dst=0)
    if RANK == 0:
        for r in range(WORLD):
            close(gathered[r], value(r, (3,)), "gather")
    got = torch.empty(3, device=DEV)
    chunks = [value(r, (3,), salt=10).to(DEV) for r in range(WORLD)] if RANK == 1 else None
    dist.scatter(got, chunks, src=1)
    close(got, value(RANK, (3,), salt=10), "scatter")
    passed("all_gather, gather, scatter")


def check_reduce_scatter():
    pieces = [value(RANK, (3,), salt=j).to(DEV) for j in range(WORLD)]
    out = torch.empty(3, device=DEV)
    dist.reduce_scatter(out, pieces)
    close(out, sum(value(r, (3,), salt=RANK) for r in range(WORLD)), "reduce_scatter")
    full = value(RANK, (WORLD * 2, 2)).to(DEV)
    out = torch.empty(2, 2, device=DEV)
    dist.reduce_scatter_tensor(out, full, op=dist.ReduceOp.AVG)
    expected = sum(value(r, (WORLD * 2, 2)) for r in range(WORLD)) / WORLD
    close(out, expected[RANK * 2:(RANK + 1) * 2], "reduce_scatter_tensor AVG")
    passed("reduce_scatter")


def check_all_to_all():
    ins = [value(RANK, (2,), salt=j).to(DEV) for j in range(WORLD)]
    outs = [torch.empty(2, device=DEV) for _ in range(WORLD)]
    dist.all_to_all(outs, ins)
    for j in range(WORLD):
        close(outs[j], value(j, (2,), salt=RANK), "all_to_all")
    # Uneven splits: rank r sends r + j + 1 rows to rank j.
    send = [RANK + j + 1 for j in range(WORLD)]
    recv = [j + RANK + 1 for j in range(WORLD)]
    x = torch.cat([value(RANK, (send[j], 2), salt=j) for j in range(WORLD)]).to(DEV)
    out = torch.empty(sum(recv), 2, device=DEV)
    dist.all_to_all_single(out, x, output_split_sizes=recv, input_split_sizes=send)
    expected = torch.cat([value(j, (recv[j], 2), salt=RANK) for j in range(WORLD)])
    close(out, expected, "all_to_all_single uneven")
    passed("all_to_all")


def check_point_to_point():
    peer = (RANK + 1) % WORLD
    prev = (RANK - 1) % WORLD
    got = torch.empty(4, device=DEV)
    ops = [dist.P2POp(dist.isend, value(RANK, (4,)).to(DEV), peer),
           dist.P2POp(dist.irecv, got, prev)]
    for work in dist.batch_isend_irecv(ops):
        work.wait()
    close(got, value(prev, (4,)), "batch_isend_irecv ring")
    if RANK == 0:
        dist.send(value(0, (3,), torch.bfloat16).to(DEV), dst=1)
    elif RANK == 1:
        got = torch.empty(3, dtype=torch.bfloat16, device=DEV)
        dist.recv(got, src=0)
        close(got, value(0, (3,), torch.bfloat16), "send/recv")
    passed("send/recv")


def check_point_to_point_patterns():
    peer = (RANK + 1) % WORLD
    prev = (RANK - 1) % WORLD
    # irecv posted before a blocking send that the peer can only finish
    # once this rank's recv takes its payload (no wait() on the irecv yet)
    got = torch.empty(5, device=DEV)
    work = dist.irecv(got, src=prev)
    dist.send(value(RANK, (5,)).to(DEV), dst=peer)
    work.wait()
    close(got, value(prev, (5,)), "irecv before send")
    # several messages from one peer on one tag, of different sizes, waited
    # for in reverse order: each lands in its own tensor
    sizes = [2, 7, 3]
    sends = [dist.isend(value(RANK, (n,), salt=n).to(DEV), dst=peer) for n in sizes]
    gots = [torch.empty(n, device=DEV) for n in sizes]
    recvs = [dist.irecv(g, src=prev) for g in gots]
    for w in reversed(recvs + sends):
        w.wait()
    for n, g in zip(sizes, gots):
        close(g, value(prev, (n,), salt=n), f"message of {n} in order")
    # from any source: rank 0 takes one message from every other rank
    if RANK == 0:
        seen = set()
        for _ in range(WORLD - 1):
            got = torch.empty(4, device=DEV)
            src = dist.recv(got)
            close(got, value(src, (4,)), "recv from any source")
            seen.add(src)
        assert seen == set(range(1, WORLD)), seen
    else:
        dist.send(value(RANK, (4,)).to(DEV), dst=0)
    dist.barrier()
    passed("point-to-point patterns")


def check_point_to_point_mismatch_raises():
    # Gloo aborts a process that receives a message larger than its tensor;
    # tpu_dist raises on the receiving rank and leaves the tensor alone.
    if RANK == 0:
        dist.send(value(0, (3,)).to(DEV), dst=1)
        dist.send(value(0, (3,)).to(DEV), dst=1)
    elif RANK == 1:
        for n in (2, 4):
            got = torch.full((n,), -1.0, device=DEV)
            try:
                dist.recv(got, src=0)
            except RuntimeError as e:
                assert "tpu_dist recv" in str(e) and "3 elements of Float" in str(e), str(e)
                assert f"{n} elements of Float" in str(e), str(e)
            else:
                raise AssertionError(f"recv of 3 elements into {n} did not raise")
            close(got, torch.full((n,), -1.0), "tensor left as it was")
    # the pair still works afterwards
    if RANK == 0:
        dist.send(value(0, (3,)).to(DEV), dst=1)
    elif RANK == 1:
        got = torch.empty(3, device=DEV)
        dist.recv(got, src=0)
        close(got, value(0, (3,)), "send/recv after a mismatch")
    dist.barrier()
    passed("mismatched send/recv raises")


def check_async_work():
    x = value(RANK, (64,)).to(DEV)
    work = dist.all_reduce(x, async_op=True)
    work.wait()
    y = x * 2  # device work after wait() sees the reduced values
    close(y, 2 * sum(value(r, (64,)) for r in range(WORLD)), "async all_reduce")
    x = value(RANK, (16,)).to(DEV)
    work = dist.all_reduce(x, async_op=True)
    while not work.is_completed():  # polling, no wait(): the values are in place
        time.sleep(0.001)
    close(x, sum(value(r, (16,)) for r in range(WORLD)), "polled all_reduce")
    x = value(RANK, (8,)).to(DEV)
    fut = dist.all_reduce(x, async_op=True).get_future()
    result = fut.wait()
    close(result[0], sum(value(r, (8,)) for r in range(WORLD)), "future value")
    close(x, sum(value(r, (8,)) for r in range(WORLD)), "future write-back")
    dist.barrier()
    passed("async work and barrier")


class Probe:
    """A Python object with a weak reference, to see who keeps it alive."""


class PassThroughMode(torch.overrides.TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def check_works_hold_no_python_objects():
    """A work keeps none of the caller's Python thread state: backward()
    stashes a Python object in it (as below) while DDP launches all-reduces,
    and a Gloo thread that dropped the last reference to one during
    interpreter shutdown aborted the process at exit."""
    import weakref

    launches = {
        "all_reduce": lambda: dist.all_reduce(torch.ones(4, device=DEV), async_op=True),
        "broadcast": lambda: dist.broadcast(torch.ones(4, device=DEV), src=0, async_op=True),
        "all_gather_into_tensor": lambda: dist.all_gather_into_tensor(
            torch.empty(4 * WORLD, device=DEV), torch.ones(4, device=DEV), async_op=True),
        "barrier": lambda: dist.barrier(async_op=True),
    }
    for name, launch in launches.items():
        probe = Probe()
        alive = weakref.ref(probe)
        torch._C._stash_obj_in_tls("torch_tpu_probe", probe)
        mode_probe = PassThroughMode()
        mode_alive = weakref.ref(mode_probe)
        with mode_probe:
            work = launch()
        torch._C._remove_obj_from_tls("torch_tpu_probe")
        work.wait()
        del probe, mode_probe
        if alive() is not None or mode_alive() is not None:
            raise AssertionError(f"a {name} work keeps the caller's Python objects alive")
        del work
    passed("works hold no Python objects")


def check_objects():
    objs = [None] * WORLD
    dist.all_gather_object(objs, {"rank": RANK})
    assert objs == [{"rank": r} for r in range(WORLD)], objs
    lst = [RANK * 10]
    dist.broadcast_object_list(lst, src=1)
    assert lst == [10], lst
    passed("object collectives")


def check_mismatch_raises():
    shape = (4,) if RANK == 0 else (6,)
    try:
        dist.all_reduce(torch.ones(shape, device=DEV))
    except RuntimeError as e:
        assert "tpu_dist all_reduce" in str(e) and "do not match" in str(e), str(e)
    else:
        raise AssertionError("mismatched all_reduce did not raise")
    try:
        dist.broadcast(torch.ones(3, device=DEV), src=RANK)  # roots differ
    except RuntimeError as e:
        assert "root" in str(e), str(e)
    else:
        raise AssertionError("mismatched broadcast roots did not raise")
    # The group still works afterwards.
    x = torch.ones(2, device=DEV)
    dist.all_reduce(x)
    close(x, torch.full((2,), float(WORLD)), "all_reduce after a mismatch")
    passed("mismatched calls raise")


def main():
    dist.init_process_group("tpu_dist")
    assert dist.get_backend() == "tpu_dist"
    start = time.time()
    for check in (check_all_reduce, check_views, check_broadcast_reduce, check_gathers,
                  check_reduce_scatter, check_all_to_all, check_point_to_point,
                  check_point_to_point_patterns, check_point_to_point_mismatch_raises,
                  check_async_work, check_works_hold_no_python_objects, check_objects,
                  check_mismatch_raises):
        check()
    finish()
    print(f"DONE rank {RANK} in {time.time() - start:.1f} s", flush=True)


if __name__ == "__main__":
    sys.exit(main())
