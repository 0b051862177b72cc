#pragma once
// A CSV file of an experiment's raw data: a header of declared columns, then rows of numbers
// and texts, one cell per column. Numbers are written as std::ostream writes them at the
// table's precision (significant digits): 17 by default, which reads a double back bit for bit;
// a table whose figures and recorded results were written at fewer digits keeps them. A text
// is quoted (RFC 4180) where it holds a comma, a quote or a line break, or where its column is
// declared quoted.
#include <cstddef>
#include <fstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace moreau {

class ExperimentResults;

class CsvTable {
 public:
  static constexpr int kRoundTrip = 17;  // significant digits that read a double back exactly

  struct Column {
    Column(const char* text) : name(text) {}  // NOLINT: a column is declared by its name
    Column(std::string text, bool always_quoted = false)
        : name(std::move(text)), quoted(always_quoted) {}
    std::string name;
    bool quoted = false;  // every text of the column in quotes
  };
  // A column whose texts are always quoted.
  static Column quoted(std::string name) { return Column(std::move(name), true); }

  // Creates `directory`/`file` and writes the header. Throws InputError if it cannot.
  CsvTable(const std::string& directory, std::string file, std::vector<Column> columns,
           int precision = kRoundTrip);
  // The same, registered in `results` as a raw data file of the run (results.json "files").
  CsvTable(ExperimentResults& results, const std::string& directory, std::string file,
           std::vector<Column> columns, int precision = kRoundTrip);

  // One row: a cell per column, in the columns' order (a bool is written 1 or 0). Throws
  // InputError naming the file when the count of cells is not the count of columns.
  template <class... Cells>
  void row(const Cells&... cells) {
    expect_cells(sizeof...(Cells));
    std::size_t column = 0;
    (put(column++, cells), ...);
    out_ << '\n';
  }

  const std::string& file() const { return file_; }

 private:
  template <class Cell>
  void put(std::size_t column, const Cell& cell) {
    if (column > 0) out_ << ',';
    if constexpr (std::is_convertible_v<const Cell&, std::string_view>)
      text(column, cell);
    else
      out_ << cell;
  }
  void text(std::size_t column, std::string_view cell);
  void expect_cells(std::size_t count) const;
  std::string file_;
  std::string path_;
  std::vector<Column> columns_;
  std::ofstream out_;
};

}  // namespace moreau
