// Dropping buffer handles off the caller's thread.
//
// PJRT_Buffer_Destroy on a buffer that was donated to an execution blocks
// until that execution has taken the donation, which the CPU plugin does
// only once the execution starts, after the programs it depends on have run.
// A caller that drops such a handle right after launching (an in-place op,
// a compiled graph rewriting its inputs) would wait for the device each
// time, and no launch could run ahead of the device. Those handles are
// handed here instead and dropped on a background thread once the
// execution's completion event fires (by then the donation was taken and
// the destroy returns at once).
#pragma once

#include <vector>

#include "pjrt/buffer.h"
#include "pjrt/event.h"

namespace torch_tpu::pjrt {

// Keeps `buffers` until `done` fires (with or without an error), then drops
// them on the release thread. With no event the buffers are dropped here.
// In a forked child they are dropped here too (they are never destroyed
// there: see fork_guard.h).
void release_when_done(EventPtr done, std::vector<BufferPtr> buffers);

// Blocks until every release handed over so far has been done (tests).
void drain_deferred_releases();

}  // namespace torch_tpu::pjrt
