#include "output/timeline_output.h"

#include <array>

namespace cstool {

std::optional<TimelineFormat> ParseTimelineFormat(std::string_view name) {
  if (name == "json") return TimelineFormat::kJson;
  if (name == "proto") return TimelineFormat::kProto;
  return std::nullopt;
}

TimelineFormat TimelineFormatForPath(std::string_view path) {
  constexpr std::array<std::string_view, 3> kProtoExtensions = {".pftrace", ".perfetto-trace",
                                                                ".pb"};
  for (std::string_view ext : kProtoExtensions)
    if (path.size() > ext.size() && path.ends_with(ext)) return TimelineFormat::kProto;
  return TimelineFormat::kJson;
}

std::unique_ptr<TimelineSink> MakeTimelineWriter(TimelineFormat format, std::ostream& os) {
  return format == TimelineFormat::kProto ? MakeProtoTimelineWriter(os)
                                          : MakeJsonTimelineWriter(os);
}

}  // namespace cstool
