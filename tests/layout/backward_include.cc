// Compiled with only the base library's include root: an include that runs against the
// libraries' direction (base may include nothing of cstool) must not compile. The
// layout_rejects_backward_include test builds this and expects that failure.
#include "sched/state_machine.h"

int main() { return 0; }
