// Writers of the `report --timeline` file: the same TimelineSink content as Chrome/
// Perfetto trace-event JSON (timeline_json_output.cc) or as Perfetto's native protobuf
// trace (timeline_proto_output.cc, about a quarter of the JSON's size).
#pragma once

#include <memory>
#include <optional>
#include <ostream>
#include <string_view>

#include "analysis/timeline_sink.h"

namespace cstool {

enum class TimelineFormat { kJson, kProto };

// "json" or "proto" (--timeline-format); nullopt for anything else.
std::optional<TimelineFormat> ParseTimelineFormat(std::string_view name);
// By the output file's extension: .pftrace, .perfetto-trace and .pb are protobuf,
// anything else JSON.
TimelineFormat TimelineFormatForPath(std::string_view path);

// Write to `os` as the sink is fed; Close() (or destruction) ends the file.
std::unique_ptr<TimelineSink> MakeTimelineWriter(TimelineFormat format, std::ostream& os);
std::unique_ptr<TimelineSink> MakeJsonTimelineWriter(std::ostream& os);
std::unique_ptr<TimelineSink> MakeProtoTimelineWriter(std::ostream& os);

}  // namespace cstool
