#include "decode/decode_trace.h"

#include "decode/decode_trace_inl.h"
#include "decode/event_decoder.h"

namespace cstool {

DecodeStats DecodeTrace(TraceFileReader& reader, EventSink& sink, const DecodeOptions& options) {
  EventDecoder decoder(reader.tep());
  return DecodeTrace(reader, decoder, sink, options);
}

DecodeStats DecodeTrace(TraceFileReader& reader, EventDecoder& decoder, EventSink& sink,
                        const DecodeOptions& options) {
  return DecodeTraceTo(reader, decoder, sink, options);
}

}  // namespace cstool
