// The look the HTML pages share (report --html, diff --html): text, headings, legends and
// tables. Each page adds the rules of its own pictures.
#pragma once

#include <string_view>

namespace cstool {

inline constexpr std::string_view kHtmlPageStyle = R"(
body{font:13px/1.4 system-ui,sans-serif;margin:16px 24px;color:#222;background:#fff}
h1{font-size:20px;margin:0 0 4px} h2{font-size:16px;margin:22px 0 6px}
.summary{color:#444} .note{color:#8a5300}
.legend{display:flex;flex-wrap:wrap;gap:4px 14px;margin:6px 0 8px}
.legend span{display:inline-flex;align-items:center;gap:5px}
.legend i{display:inline-block;width:12px;height:12px;border:1px solid #999}
table{border-collapse:collapse;margin:4px 0 10px;font-size:12px}
th,td{border:1px solid #ddd;padding:2px 6px;text-align:right;white-space:nowrap}
th{background:#f0f0f0} td.l,th.l{text-align:left}
)";

}  // namespace cstool
