// The C headers of libtracefs 1.6 and kbuffer, made usable from C++: they lack
// extern "C", and tracefs.h's inline tracefs_hist_start() passes a plain 0 where an
// enum is expected, which C++ rejects. Include this instead of <tracefs.h>.
#pragma once

struct tracefs_instance;
struct tracefs_hist;
// Never defined: only the unused inline tracefs_hist_start() refers to it, and the
// call resolves here instead of being an invalid int-to-enum conversion.
int tracefs_hist_command(tracefs_instance* instance, tracefs_hist* hist, int cmd);

extern "C" {
#include <traceevent/kbuffer.h>
#include <tracefs.h>
}
