// libfmt's compiled half (format-inl.h: vformat, vprint, the locale queries), built into
// cstool. Debian ships libfmt only as a shared library, and that library needs
// libstdc++'s: loading and relocating both took some 2 ms of every run, a tenth of a
// small file's report. With fmt here, cstool links libstdc++ statically (CMakeLists.txt)
// and loads neither. The headers declare these templates `extern` for the shared
// library; they are instantiated here for char, the only character type cstool formats.
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {
template auto thousands_sep_impl<char>(locale_ref) -> thousands_sep_result<char>;
template auto decimal_point_impl(locale_ref) -> char;
}  // namespace detail
FMT_END_NAMESPACE
