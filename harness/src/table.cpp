#include "moreau/harness/table.hpp"

#include <filesystem>

#include "moreau/core/error.hpp"
#include "moreau/harness/results.hpp"

namespace moreau {

CsvTable::CsvTable(const std::string& directory, std::string file, std::vector<Column> columns,
                   int precision)
    : file_(std::move(file)), columns_(std::move(columns)) {
  if (columns_.empty()) throw InputError(file_ + ": a table needs at least one column");
  std::filesystem::create_directories(directory);
  path_ = (std::filesystem::path(directory) / file_).string();
  out_.open(path_);
  if (!out_) throw InputError(path_ + ": cannot write");
  out_.precision(precision);
  for (std::size_t i = 0; i < columns_.size(); ++i) out_ << (i == 0 ? "" : ",") << columns_[i].name;
  out_ << '\n';
}

CsvTable::CsvTable(ExperimentResults& results, const std::string& directory, std::string file,
                   std::vector<Column> columns, int precision)
    : CsvTable(directory, std::move(file), std::move(columns), precision) {
  results.add_file(file_, "raw");
}

void CsvTable::text(std::size_t column, std::string_view cell) {
  if (!columns_[column].quoted && cell.find_first_of(",\"\r\n") == std::string_view::npos) {
    out_ << cell;
    return;
  }
  out_ << '"';
  for (const char c : cell) out_ << (c == '"' ? "\"\"" : std::string_view(&c, 1));
  out_ << '"';
}

void CsvTable::expect_cells(std::size_t count) const {
  if (count != columns_.size())
    throw InputError(path_ + ": a row of " + std::to_string(count) + " cells in a table of " +
                     std::to_string(columns_.size()) + " columns");
}

}  // namespace moreau
