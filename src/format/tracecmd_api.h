// Declarations of the libtracecmd functions cstool uses. <trace-cmd/trace-cmd.h>
// includes <tracefs.h>, whose inline helpers do not compile as C++ (an int passed as
// an enum), so the prototypes are repeated here, matching libtracecmd 1.3. The last
// group is exported by the library but missing from its public header.
#pragma once

#include <traceevent/event-parse.h>

extern "C" {
struct tracecmd_input;

enum {
  kTracecmdFlLoadNoPlugins = 1 << 0,        // TRACECMD_FL_LOAD_NO_PLUGINS
  kTracecmdFlLoadNoSystemPlugins = 1 << 1,  // TRACECMD_FL_LOAD_NO_SYSTEM_PLUGINS
};

struct tracecmd_input* tracecmd_open(const char* file, int flags);
void tracecmd_close(struct tracecmd_input* handle);
struct tep_record* tracecmd_read_cpu_first(struct tracecmd_input* handle, int cpu);
struct tep_record* tracecmd_read_data(struct tracecmd_input* handle, int cpu);
void tracecmd_free_record(struct tep_record* record);
struct tep_handle* tracecmd_get_tep(struct tracecmd_input* handle);
int tracecmd_buffer_instances(struct tracecmd_input* handle);
const char* tracecmd_buffer_instance_name(struct tracecmd_input* handle, int indx);
struct tracecmd_input* tracecmd_buffer_instance_handle(struct tracecmd_input* handle, int indx);
void tracecmd_set_loglevel(enum tep_loglevel level);

// Exported, undeclared in trace-cmd.h.
int tracecmd_cpus(struct tracecmd_input* handle);
unsigned long tracecmd_get_in_file_version(struct tracecmd_input* handle);
const char* tracecmd_get_trace_clock(struct tracecmd_input* handle);
const char* tracecmd_get_cpustats(struct tracecmd_input* handle);
int tracecmd_long_size(struct tracecmd_input* handle);
int tracecmd_page_size(struct tracecmd_input* handle);
}
