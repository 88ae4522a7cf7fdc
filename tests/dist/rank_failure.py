"""A rank that dies or stalls: the other rank must raise, not hang.

Started as two plain processes (torchrun would kill the survivor itself):
    RANK=r WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=p python rank_failure.py {dies,stalls}
Rank 0 prints "RAISED <seconds> <exception type>: <message>" and exits 0.
"""

import datetime
import os
import sys
import time

import torch
import torch.distributed as dist

RANK = int(os.environ["RANK"])
TIMEOUT_S = 10


def main():
    how = sys.argv[1]
    dist.init_process_group("tpu_dist", timeout=datetime.timedelta(seconds=TIMEOUT_S))
    x = torch.ones(4, device="tpu")
    dist.all_reduce(x)
    assert x.cpu().tolist() == [2.0] * 4
    if RANK == 1:
        if how == "dies":
            os._exit(3)
        time.sleep(3 * TIMEOUT_S)
        os._exit(0)
    start = time.time()
    try:
        dist.all_reduce(x)
        x.cpu()
    except Exception as e:  # noqa: BLE001 - any clear error is the point
        first_line = str(e).splitlines()[0] if str(e) else ""
        print(f"RAISED {time.time() - start:.1f} {type(e).__name__}: {first_line}", flush=True)
        os._exit(0)
    print("NO ERROR", flush=True)
    os._exit(1)


if __name__ == "__main__":
    main()
