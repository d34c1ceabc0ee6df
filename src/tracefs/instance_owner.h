// Whether the process named by a cstool-<pid> instance still owns it. The pid alone
// does not say: a recorder that died leaves its instance behind, and a later process
// may get the same pid. Nor does the program's name: a cstool binary copied or
// installed under another name (cstool-1.2, cstool-base) records like any other, and
// removing its instance kills its recording.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>

namespace cstool {

// A killed process not yet reaped by its parent is a zombie: dead for its instance.
bool ProcessAlive(int pid);

// When process `pid` started, in nanoseconds of CLOCK_BOOTTIME, to the clock tick
// (/proc/PID/stat); nullopt when that cannot be read.
std::optional<int64_t> ProcessStartBootNs(int pid);

// When `path` (an instance directory: tracefs stamps it when it is made) last changed
// status, in nanoseconds of the wall clock as the stamp has it; nullopt when it cannot
// be read.
std::optional<int64_t> ChangedAtWallNs(const std::filesystem::path& path);

// When `path` (an instance directory: tracefs stamps it when it is made) last changed
// status, in nanoseconds of CLOCK_BOOTTIME; nullopt when it cannot be read.
std::optional<int64_t> ChangedAtBootNs(const std::filesystem::path& path);

// Whether process `pid` has a file under `dir` open; nullopt when its files cannot be
// read (another user's process, to a cstool that is not root).
std::optional<bool> FilesUnderOpen(int pid, const std::filesystem::path& dir);

// Whether the instance directory `dir` (named for `pid`) belongs to a process that still
// runs: `pid` is alive and either started before the instance was made (its owner made
// it) or has the instance's files open (every live session holds one, whatever the
// clocks say). What cannot be read counts for a live owner: a live recording is never
// removed on a guess.
bool InstanceOwnerRuns(const std::filesystem::path& dir, int pid);

}  // namespace cstool
