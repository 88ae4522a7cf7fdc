// A PJRT client does not survive fork(): the child inherits the plugin's
// memory but none of its threads, so a call into the plugin from the child
// can wait forever on a lock or an event that a vanished thread owned.
// Once a plugin is loaded, a forked child refuses every PJRT call (Error,
// FAILED_PRECONDITION) and destroys nothing it inherited.
#pragma once

namespace torch_tpu::pjrt {

// Starts watching for fork(); idempotent. Api::load calls it.
void watch_for_fork();
// True in a process forked after watch_for_fork() ran in an ancestor.
bool in_forked_child();
// The message every refused call carries.
const char* forked_child_message();

}  // namespace torch_tpu::pjrt
