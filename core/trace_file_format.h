// Constants of the trace-cmd trace.dat v6 file format (see `man 5 trace-cmd.dat.v6`)
// shared by the cstool reader and writer.
//
// Layout of a v6 file (all numbers in the file's endianness, given by byte 13):
//
//   "\x17\x08\x44" "tracing" "6\0"  endian(1: 0=little)  long_size(1)  page_size(u32)
//   "header_page\0"  size(u64)  <events/header_page text>
//   "header_event\0" size(u64)  <events/header_event text>
//   nr_ftrace_formats(u32)  { size(u64) <format text> }...
//   nr_systems(u32)  { system-name\0  nr_events(u32)  { size(u64) <format text> }... }...
//   kallsyms: size(u32) <text>      printk formats: size(u32) <text>
//   saved cmdlines: size(u64) <"pid comm\n" lines>
//   nr_cpus(u32)
//   "options  \0"  { id(u16)  size(u32)  <size bytes> }...  id 0 (u16) ends the list
//   "flyrecord\0"  { offset(u64) size(u64) } x nr_cpus       (or "latency  \0" + text)
//   padding to page_size, then per CPU the raw ring-buffer pages (page_size each).
//
// Options cstool uses:
//   kOptionCpuStat     text of per_cpu/cpuN/stats ("CPU: N\nentries: ...\noverrun: ...
//                      dropped events: ..."), one option per CPU; trace-cmd separates the
//                      stats of instances with an option holding "\nBuffer: NAME\n\n".
//   kOptionBuffer      offset(u64) name\0: an instance's "flyrecord\0" + per-CPU
//                      (offset,size) pairs stored elsewhere in the file.
//   kOptionTraceClock  contents of trace_clock ("[mono] local global ..."); the
//                      bracketed name is the clock in use.
//   kOptionCstoolInfo  UTF-8 JSON of cstool::RecordingInfo (core/recording_info.h), not
//                      NUL-terminated (a trailing NUL is tolerated). trace-cmd skips ids
//                      it does not know. If absent, readers fall back to FILE.cstool.json.
//
// Ring-buffer page (header_page): timestamp(u64), commit(long: low 30 bits = bytes of
// event data, bit 31 = events were lost before this page, bit 30 = the lost count is
// stored as a long right after the data), then the data. Each event starts with a
// 32-bit word: type_len (low 5 bits) and time_delta (high 27 bits) -- see header_event.
#pragma once

#include <cstdint>
#include <string_view>

namespace cstool {

inline constexpr std::string_view kTraceDatMagic{"\x17\x08\x44tracing", 10};

// TRACECMD_OPTION_* ids of trace-cmd (lib/trace-cmd/include/trace-cmd-local.h).
inline constexpr uint16_t kOptionDone = 0;
inline constexpr uint16_t kOptionDate = 1;
inline constexpr uint16_t kOptionCpuStat = 2;
inline constexpr uint16_t kOptionBuffer = 3;
inline constexpr uint16_t kOptionTraceClock = 4;
inline constexpr uint16_t kOptionUname = 5;
inline constexpr uint16_t kOptionCpuCount = 8;
inline constexpr uint16_t kOptionVersion = 9;
// cstool's own metadata option ("cs"): JSON of RecordingInfo.
inline constexpr uint16_t kOptionCstoolInfo = 0x6373;

// Suffix of the sidecar metadata file used when the option is absent.
inline constexpr std::string_view kCstoolInfoSidecarSuffix = ".cstool.json";

// Ring-buffer page header `commit` flag bits (kernel/trace/ring_buffer.c).
inline constexpr uint32_t kPageMissedEvents = 1u << 31;
inline constexpr uint32_t kPageMissedStored = 1u << 30;

// Ring-buffer event header type_len values (header_event).
inline constexpr uint32_t kRbTypeDataMax = 28;
inline constexpr uint32_t kRbTypePadding = 29;
inline constexpr uint32_t kRbTypeTimeExtend = 30;
inline constexpr uint32_t kRbTypeTimeStamp = 31;
inline constexpr uint32_t kRbTsShift = 27;

}  // namespace cstool
