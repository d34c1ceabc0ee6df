// Constants of the trace-cmd trace.dat v6 format as written by `cstool record`
// (format/trace_file_writer.h) and read back by `cstool report`.
//
// Layout of a cstool file (all numbers little endian on x86_64; see `man 5
// trace-cmd.dat.v6` for the generic format):
//
//   "\x17\x08\x44" "tracing" "6\0"        magic, version string
//   u8 endianness (0 = little), u8 long size (8), u32 page size
//   "header_page\0"  u64 size + text      events/header_page
//   "header_event\0" u64 size + text      events/header_event
//   u32 count of ftrace formats (cstool writes 0)
//   u32 count of event systems, then per system:
//       system name "\0", u32 event count, per event: u64 size + format text
//       (only the events that were enabled, grouped by system)
//   u32 size + kallsyms text (cstool writes 0 bytes: no function tracer)
//   u32 size + printk_formats text
//   u64 size + saved_cmdlines text ("<pid> <comm>\n" lines)
//   u32 cpu count (highest possible CPU + 1; untraced CPUs have empty data)
//   "options  \0", then options, each u16 id, u32 size, payload:
//       kOptionCpuStat      one per CPU in the file, "CPU: N\n" + per_cpu/cpuN/stats
//       kOptionTraceClock   contents of the instance's trace_clock file
//                           ("... [mono] ..."; the bracketed name is the clock)
//       kOptionCstoolInfo   JSON of cstool::RecordingInfo (model/recording_info.h),
//                           UTF-8, no terminating NUL; exactly one per file
//       kOptionCstoolBuffer per extra buffer (TraceFileContents::instances): u64 offset
//                           of its table, its name, u32 6; at the offset (after the
//                           pages) "flyrecord\0" and per CPU u64 offset, u64 size
//   u16 kOptionDone (0)
//   "flyrecord\0", then per CPU: u64 offset, u64 size of its raw ring-buffer pages
//   zero padding to a page boundary, then the CPU data, each CPU's data page-aligned
//
// A reader finds the RecordingInfo by walking the options section and taking the
// payload of the option with id kOptionCstoolInfo; trace-cmd (3.1) skips unknown
// option ids silently, so the file stays readable by `trace-cmd report` and
// KernelShark. format/v6_trace_file.cc does that walk.
#pragma once

#include <cstdint>
#include <string_view>

namespace cstool::tracefile {

inline constexpr std::string_view kMagic{"\x17\x08\x44", 3};
inline constexpr std::string_view kTracing = "tracing";
inline constexpr std::string_view kVersion = "6";  // written with a terminating NUL

inline constexpr std::string_view kHeaderPage = "header_page";    // + NUL
inline constexpr std::string_view kHeaderEvent = "header_event";  // + NUL
inline constexpr std::string_view kOptionsTag{"options  \0", 10};
inline constexpr std::string_view kFlyrecordTag{"flyrecord\0", 10};

// The buffer instance `cstool record` keeps beside a pid-filtered trace: the kernel's
// run-time increments (sched_stat_runtime) of every task, with no pid filter, so that an
// increment done in an unfollowed task's context for a followed one is in the file too.
inline constexpr std::string_view kUnfilteredRuntimeBuffer = "cstool_runtime";

// Option ids, as defined by trace-cmd (lib/trace-cmd/include/trace-cmd.h, enum
// tracecmd_option_id). Only the ones cstool writes or may meet in v6 files.
inline constexpr uint16_t kOptionDone = 0;
inline constexpr uint16_t kOptionDate = 1;
inline constexpr uint16_t kOptionCpuStat = 2;
inline constexpr uint16_t kOptionBuffer = 3;
inline constexpr uint16_t kOptionTraceClock = 4;
inline constexpr uint16_t kOptionUname = 5;
inline constexpr uint16_t kOptionHook = 6;
inline constexpr uint16_t kOptionOffset = 7;
inline constexpr uint16_t kOptionCpuCount = 8;
inline constexpr uint16_t kOptionVersion = 9;
inline constexpr uint16_t kOptionTimeShift = 12;
inline constexpr uint16_t kOptionTsc2Nsec = 14;

// cstool's own option: "cs" in ASCII, far above trace-cmd's ids.
inline constexpr uint16_t kOptionCstoolInfo = 0x6373;
// A buffer only cstool reads ("cb"): the payload of a BUFFER option followed by a u32,
// the file version whose layout it has (6 or 7), and in v7 its data section carries this
// id too. Hidden from trace-cmd, which skips unknown ids: trace-cmd 3.1 reads a real
// BUFFER instance, but `trace-cmd report -F ...` then crashes in tracecmd_close() on exit.
// `trace-cmd convert` copies the option as it is into a file of another layout, where
// its offsets mean nothing: a reader ignores one whose version is not the file's.
inline constexpr uint16_t kOptionCstoolBuffer = 0x6362;

// Suffix of the sidecar metadata file readers fall back to when the option is absent.
inline constexpr std::string_view kCstoolInfoSidecarSuffix = ".cstool.json";

// Magic plus "tracing", as one string for readers.
inline constexpr std::string_view kTraceDatMagic{"\x17\x08\x44tracing", 10};

// Ring-buffer page (header_page): timestamp(u64), commit(long: low bits = bytes of event
// data, bit 31 = events were lost before this page, bit 30 = the lost count is stored as
// a long right after the data), then the data. Each event starts with a 32-bit word:
// type_len (low 5 bits) and time_delta (high 27 bits), see header_event.
inline constexpr uint32_t kPageMissedEvents = 1u << 31;
inline constexpr uint32_t kPageMissedStored = 1u << 30;
inline constexpr uint32_t kRbTypeDataMax = 28;
inline constexpr uint32_t kRbTypePadding = 29;
inline constexpr uint32_t kRbTypeTimeExtend = 30;
inline constexpr uint32_t kRbTypeTimeStamp = 31;
inline constexpr uint32_t kRbTsShift = 27;

}  // namespace cstool::tracefile
