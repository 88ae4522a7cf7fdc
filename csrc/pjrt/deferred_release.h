// Dropping donated buffer handles without waiting for the device.
//
// PJRT_Buffer_Destroy on a buffer that was donated to an execution blocks
// until that execution has taken the donation, which the CPU plugin does
// only once the execution starts, after the programs it depends on have run.
// A caller that drops such a handle right after launching (an in-place op,
// a compiled graph rewriting its inputs) would wait for the device each
// time, and no launch could run ahead of the device. Those handles are
// handed here instead and kept until the execution's completion event has
// fired (by then the donation was taken and the destroy returns at once):
// each hand-over drops the handles of executions that have finished since,
// on the caller's thread. (A background thread did this before; waking it
// for every in-place op cost more than the op.) A handle left pending holds
// no device memory: the donation moved that to the execution's result.
#pragma once

#include <vector>

#include "pjrt/buffer.h"
#include "pjrt/event.h"

namespace torch_tpu::pjrt {

// Keeps `buffers` until `done` has fired (with or without an error); they
// are dropped by a later call once it has. With no event the buffers are
// dropped here. In a forked child they are dropped here too (they are never
// destroyed there: see fork_guard.h).
void release_when_done(EventPtr done, std::vector<BufferPtr> buffers);

// Waits for every pending release's event and drops its buffers (tests).
void drain_deferred_releases();

}  // namespace torch_tpu::pjrt
