#include "decode/merge.h"

namespace cstool {

RecordMerger::RecordMerger(std::vector<std::unique_ptr<CpuRecordStream>> streams)
    : streams_(std::move(streams)) {}

}  // namespace cstool
