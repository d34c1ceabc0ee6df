#include "export/jsonl_writer.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "base/errors.h"
#include "base/output_file.h"

namespace cstool {
namespace {

constexpr size_t kFileBuffer = 1 << 18;

// `s` as a JSON string: plain ASCII as is (the frequent case: states, causes), the rest
// through nlohmann (escapes; bytes that are not UTF-8 replaced, as the JSON report does).
void AppendString(std::string& out, std::string_view s) {
  bool plain = true;
  for (char c : s)
    if (c < 0x20 || c == '"' || c == '\\' || static_cast<unsigned char>(c) >= 0x80) {
      plain = false;
      break;
    }
  if (plain) {
    out += '"';
    out += s;
    out += '"';
    return;
  }
  out +=
      nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void AppendInt(std::string& out, int64_t v) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  out.append(buf, end);
}

Error IoError(const std::string& path, const char* what) {
  return Error(fmt::format("cannot {} {}: {}", what, path, std::strerror(errno)));
}

}  // namespace

JsonlWriter::JsonlWriter(const std::string& dir, TraceKey key, bool replace)
    : dir_(dir), key_(std::move(key)) {
  std::error_code ec;
  if (std::filesystem::exists(dir_, ec) && !std::filesystem::is_directory(dir_, ec))
    throw Error(fmt::format("{} is a file: --format jsonl writes a directory of tables (one "
                            ".jsonl file each); give a new directory or one it wrote",
                            dir_),
                ExitCode::kUsage);
  made_dir_ = std::filesystem::create_directories(dir_, ec);
  if (ec || !std::filesystem::is_directory(dir_))
    throw Error(fmt::format("cannot create directory {}: {}", dir_,
                            ec ? ec.message() : "a file of that name exists"));
  try {
    Open(replace);
  } catch (...) {
    Undo();
    throw;
  }
}

void JsonlWriter::Open(bool replace) {
  CheckSchema();
  Recover();  // before the look for the trace: a killed export's rows are not an export
  replacing_ = CheckDuplicate(replace);
  prefix_ = "{\"trace_id\":";
  AppendString(prefix_, key_.trace_id);
  prefix_ += ",\"host\":";
  AppendString(prefix_, key_.host);
  for (const TableSchema& t : AllTables()) {
    File& f = files_[static_cast<size_t>(t.table)];
    f.path = PathOf(t);
    f.existed = std::filesystem::exists(f.path);
    f.path_size = f.existed ? std::filesystem::file_size(f.path) : 0;
  }
  WriteJournal(/*committing=*/false);
  if (replacing_) RewriteWithoutTrace();
  for (const TableSchema& t : AllTables()) {
    File& f = files_[static_cast<size_t>(t.table)];
    f.written = replacing_ && f.existed ? f.path + ".replace" : f.path;
    f.start_size = std::filesystem::exists(f.written) ? std::filesystem::file_size(f.written) : 0;
    f.buffer.resize(kFileBuffer);
    f.out.rdbuf()->pubsetbuf(f.buffer.data(), static_cast<std::streamsize>(f.buffer.size()));
    f.out.open(f.written, std::ios::binary | std::ios::app);
    if (!f.out) throw IoError(f.written, "open");
  }
}

JsonlWriter::~JsonlWriter() {
  if (!committed_) Undo();
}

void JsonlWriter::Undo() noexcept {
  std::error_code ignored;
  if (made_dir_) {
    std::filesystem::remove_all(dir_, ignored);
    return;
  }
  // Failed before writing anything (an earlier export's journal it could not act on, a
  // duplicate): what is there is not this export's to undo.
  if (!journaled_) return;
  for (const TableSchema& t : AllTables()) {
    File& f = files_[static_cast<size_t>(t.table)];
    f.out.close();
    std::filesystem::remove(PathOf(t) + ".replace", ignored);
    if (f.written == f.path) std::filesystem::resize_file(f.path, f.start_size, ignored);
  }
  std::filesystem::remove(JournalPath(), ignored);
}

std::string JsonlWriter::JournalPath() const {
  return (std::filesystem::path(dir_) / "export-journal.json").string();
}

void JsonlWriter::WriteJournal(bool committing) {
  nlohmann::json files = nlohmann::json::object();
  for (const TableSchema& t : AllTables()) {
    const File& f = files_[static_cast<size_t>(t.table)];
    files[std::filesystem::path(f.path).filename().string()] = {{"size", f.path_size},
                                                                {"existed", f.existed}};
  }
  OutputFile out(JournalPath());  // whole or not there: written beside, then renamed
  out.stream() << nlohmann::json{{"trace_id", key_.trace_id},
                                 {"replacing", replacing_},
                                 {"committing", committing},
                                 {"files", files}}
                      .dump()
               << "\n";
  out.Commit();
  journaled_ = true;
}

void JsonlWriter::Recover() {
  const std::string path = JournalPath();
  if (!std::filesystem::exists(path)) return;
  std::ifstream in(path);
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  const bool sound = j.is_object() && j.contains("trace_id") && j["trace_id"].is_string() &&
                     j.contains("committing") && j["committing"].is_boolean() &&
                     j.contains("files") && j["files"].is_object();
  if (!sound)
    throw Error(fmt::format(
        "{} is not a journal cstool can read: an export into {} was killed and its rows may "
        "be partly there; remove the file once the tables are checked",
        path, dir_));
  const std::string trace = j["trace_id"].get<std::string>();
  std::error_code ec;
  if (j["committing"].get<bool>()) {
    // Every row was written: what is left is to put the rewrites in place.
    for (const TableSchema& t : AllTables())
      if (const std::string table = PathOf(t); std::filesystem::exists(table + ".replace")) {
        std::filesystem::rename(table + ".replace", table, ec);
        if (ec)
          throw Error(
              fmt::format("cannot rename {}.replace over {}: {}", table, table, ec.message()));
      }
    recovered_ = fmt::format(
        "finished the export of trace {} into {}, killed while it put its tables in place", trace,
        dir_);
  } else {
    // Only the tables' own files, whatever else the journal names.
    const nlohmann::json& files = j["files"];
    for (const TableSchema& t : AllTables()) {
      const std::string table = PathOf(t);
      if (std::filesystem::remove(table + ".replace", ec); ec)
        throw Error(fmt::format("cannot roll back {}.replace: {}", table, ec.message()));
      const auto before = files.find(std::filesystem::path(table).filename().string());
      if (before == files.end() || !before->is_object() || !std::filesystem::exists(table))
        continue;
      if (!before->value("existed", true))
        std::filesystem::remove(table, ec);
      else if (const uint64_t size = before->value("size", uint64_t{0});
               std::filesystem::file_size(table, ec) > size)
        std::filesystem::resize_file(table, size, ec);
      if (ec) throw Error(fmt::format("cannot roll back {}: {}", table, ec.message()));
    }
    recovered_ = fmt::format(
        "removed the rows of trace {} that an export into {}, killed on the way, had written",
        trace, dir_);
  }
  std::filesystem::remove(path, ec);
}

std::string JsonlWriter::PathOf(const TableSchema& t) const {
  return (std::filesystem::path(dir_) / (std::string(t.name) + ".jsonl")).string();
}

void JsonlWriter::CheckSchema() {
  const std::string path = (std::filesystem::path(dir_) / "meta.json").string();
  if (!std::filesystem::exists(path)) {
    OutputFile out(path);  // never a meta.json cut short, which would refuse every export
    out.stream() << nlohmann::json{{"schema_version", kExportSchemaVersion},
                                   {"created_by", fmt::format("cstool {}", CSTOOL_VERSION)}}
                        .dump()
                 << "\n";
    out.Commit();
    return;
  }
  std::ifstream in(path);
  nlohmann::json meta = nlohmann::json::parse(in, nullptr, false);
  const int version = meta.is_object() && meta.contains("schema_version") &&
                              meta["schema_version"].is_number_integer()
                          ? meta["schema_version"].get<int>()
                          : -1;
  if (version != kExportSchemaVersion)
    throw Error(fmt::format(
        "{} has export schema version {}, this cstool writes version {} (see cstool-export(5)): "
        "export into a new directory",
        dir_, version < 0 ? "unreadable" : std::to_string(version), kExportSchemaVersion));
}

// Every line starts with the trace_id (the writer puts it first), so a trace's lines are
// found, and removed, without parsing them.
std::string JsonlWriter::TraceLineStart() const {
  std::string start = "{\"trace_id\":";
  AppendString(start, key_.trace_id);
  start += ',';
  return start;
}

bool JsonlWriter::CheckDuplicate(bool replace) {
  const std::string start = TraceLineStart();
  const std::string trace_file = PathOf(SchemaOf(Table::kTrace));
  bool found = false;
  std::string stored;  // the trace's row
  {
    std::ifstream in(trace_file);
    for (std::string line; !found && std::getline(in, line);)
      if (line.starts_with(start)) {
        found = true;
        stored = std::move(line);
      }
  }
  if (!found) return false;
  if (replace && !key_.host_given) {
    const nlohmann::json row = nlohmann::json::parse(stored, nullptr, false);
    if (row.is_object() && row.contains("host") && row["host"].is_string())
      key_.host = row["host"].get<std::string>();
  }
  if (!replace)
    throw Error(fmt::format(
        "{} already holds trace {}: the same recording is exported only once, every thread of "
        "it whatever -p/-t selected (they set in_report); --replace exports it again in place "
        "of those lines",
        dir_, key_.trace_id));
  return true;
}

void JsonlWriter::RewriteWithoutTrace() {
  const std::string start = TraceLineStart();
  for (const TableSchema& t : AllTables()) {
    const std::string path = PathOf(t);
    if (!std::filesystem::exists(path)) continue;
    const std::string kept = path + ".replace";
    {
      std::ifstream in(path);
      std::ofstream out(kept, std::ios::trunc);
      for (std::string line; std::getline(in, line);)
        if (!line.starts_with(start)) out << line << '\n';
      if (!out.flush()) throw IoError(kept, "write");
    }
  }
}

void JsonlWriter::Add(Table table, std::span<const Value> values) {
  const TableSchema& schema = SchemaOf(table);
  if (values.size() != schema.columns.size())
    throw std::logic_error("export row of the wrong width");
  line_ = prefix_;
  for (size_t i = 0; i < values.size(); ++i) {
    line_ += ",\"";
    line_ += schema.columns[i].name;
    line_ += "\":";
    const Value& v = values[i];
    if (const int64_t* n = std::get_if<int64_t>(&v))
      AppendInt(line_, *n);
    else if (const std::string_view* s = std::get_if<std::string_view>(&v))
      AppendString(line_, *s);
    else
      line_ += "null";
  }
  line_ += "}\n";
  files_[static_cast<size_t>(table)].out.write(line_.data(),
                                               static_cast<std::streamsize>(line_.size()));
  Count(table);
}

void JsonlWriter::Commit() {
  for (File& f : files_) {
    f.out.close();
    if (!f.out) throw IoError(f.written, "write");
  }
  // Every row is in its file: from here a recovery finishes the commit.
  WriteJournal(/*committing=*/true);
  // Renames within one directory: should one still fail, say which tables hold the new rows.
  std::vector<std::string> replaced;
  for (File& f : files_) {
    if (f.written == f.path) continue;
    std::error_code ec;
    std::filesystem::rename(f.written, f.path, ec);
    if (ec) {
      committed_ = true;  // what is renamed stays; the rest are left beside as FILE.replace
      throw Error(fmt::format(
          "cannot rename {} over {}: {} ({} replaced already)", f.written, f.path, ec.message(),
          replaced.empty() ? "no table" : fmt::format("{}", fmt::join(replaced, ", "))));
    }
    replaced.push_back(f.path);
  }
  committed_ = true;
  std::error_code ignored;
  std::filesystem::remove(JournalPath(), ignored);
}

}  // namespace cstool
