// Default sanitizer options of the sanitizer and fuzz builds (CSTOOL_SANITIZE,
// CSTOOL_FUZZ), compiled into cstool, the unit tests and the fuzzers: stop at the first
// error, leaks are errors, and the known leaks inside system libraries are suppressed
// by tests/sanitizers/lsan.supp. The *_OPTIONS environment variables still override.
extern "C" const char* __asan_default_options() { return "halt_on_error=1:detect_leaks=1"; }

extern "C" const char* __lsan_default_options() {
  return "suppressions=" CSTOOL_LSAN_SUPPRESSIONS ":print_suppressions=0";
}

extern "C" const char* __ubsan_default_options() { return "halt_on_error=1:print_stacktrace=1"; }
