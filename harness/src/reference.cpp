#include "moreau/harness/reference.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "moreau/core/error.hpp"

namespace moreau {

std::string to_string(Comparison comparison) {
  switch (comparison) {
    case Comparison::relative:
      return "relative";
    case Comparison::absolute:
      return "absolute";
    case Comparison::at_least:
      return "at_least";
    case Comparison::at_most:
      return "at_most";
    case Comparison::range:
      return "range";
    case Comparison::holds:
      return "holds";
  }
  return "unknown";
}

std::string ReferenceValue::known_difference_at(const std::string& scale) const {
  if (const auto it = known_differences.find(scale); it != known_differences.end())
    return it->second;
  if (const auto it = known_differences.find(""); it != known_differences.end()) return it->second;
  return "";
}

bool ReferenceValue::applies_to(const std::string& scale) const {
  return scales.empty() || std::find(scales.begin(), scales.end(), scale) != scales.end();
}

double PublishedData::at(const std::string& row, const std::string& column) const {
  const auto r = std::find(row_names.begin(), row_names.end(), row);
  if (r == row_names.end()) throw InputError(path + ": data." + name + ": no row '" + row + "'");
  const auto c = std::find(columns.begin(), columns.end(), column);
  if (c == columns.end())
    throw InputError(path + ": data." + name + ": no column '" + column + "'");
  return rows[r - row_names.begin()][c - columns.begin()];
}

namespace {

// The "data" tables of expected.json (PublishedData); throws InputError naming the table.
std::map<std::string, PublishedData> load_data(const nlohmann::ordered_json& doc,
                                               const std::string& path) {
  std::map<std::string, PublishedData> tables;
  if (!doc.contains("data")) return tables;
  for (const auto& [name, node] : doc.at("data").items()) {
    const std::string where = path + ": data." + name;
    PublishedData table;
    table.name = name;
    table.path = path;
    for (const char* key : {"source", "columns", "rows"})
      if (!node.contains(key)) throw InputError(where + ": missing '" + key + "'");
    table.source = node.at("source").get<std::string>();
    table.columns = node.at("columns").get<std::vector<std::string>>();
    if (!node.at("rows").is_object()) throw InputError(where + ".rows: an object of rows by name");
    for (const auto& [row, cells] : node.at("rows").items()) {
      std::vector<double> numbers = cells.get<std::vector<double>>();
      if (numbers.size() != table.columns.size())
        throw InputError(where + ".rows." + row + ": " + std::to_string(numbers.size()) +
                         " numbers for " + std::to_string(table.columns.size()) + " columns");
      table.row_names.push_back(row);
      table.rows.push_back(std::move(numbers));
    }
    tables[name] = std::move(table);
  }
  return tables;
}

}  // namespace

Reference Reference::load(const std::string& directory) {
  Reference reference;
  reference.path_ = directory + "/expected.json";
  std::ifstream in(reference.path_);
  if (!in) throw InputError(reference.path_ + ": cannot open the reference file");
  nlohmann::ordered_json doc;
  try {
    doc = nlohmann::ordered_json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(reference.path_ + ": malformed JSON: " + e.what());
  }
  const std::string& path = reference.path_;
  auto require = [&](const nlohmann::ordered_json& node, const std::string& where,
                     const char* key) -> const nlohmann::ordered_json& {
    if (!node.contains(key)) throw InputError(path + ": " + where + ": missing '" + key + "'");
    return node.at(key);
  };
  try {
    reference.experiment_ = require(doc, "top level", "experiment").get<std::string>();
    for (const auto& [name, entry] : require(doc, "top level", "values").items()) {
      const std::string where = "values." + name;
      ReferenceValue value;
      value.name = name;
      const std::string comparison = require(entry, where, "comparison").get<std::string>();
      const Comparison all[] = {Comparison::relative, Comparison::absolute, Comparison::at_least,
                                Comparison::at_most,  Comparison::range,    Comparison::holds};
      const auto found = std::find_if(std::begin(all), std::end(all),
                                      [&](Comparison c) { return to_string(c) == comparison; });
      if (found == std::end(all))
        throw InputError(path + ": " + where + ": unknown comparison '" + comparison + "'");
      value.comparison = *found;
      if (value.comparison == Comparison::range) {
        const auto& bounds = require(entry, where, "published");
        if (!bounds.is_array() || bounds.size() != 2)
          throw InputError(path + ": " + where + ".published: a range needs [low, high]");
        value.published = bounds[0].get<double>();
        value.published_high = bounds[1].get<double>();
      } else if (value.comparison != Comparison::holds) {
        value.published = require(entry, where, "published").get<double>();
      }
      if (value.comparison == Comparison::relative || value.comparison == Comparison::absolute)
        value.tolerance = require(entry, where, "tolerance").get<double>();
      value.statement = entry.value("statement", "");
      value.source = require(entry, where, "source").get<std::string>();
      value.reason = require(entry, where, "reason").get<std::string>();
      if (entry.contains("scales"))
        value.scales = entry.at("scales").get<std::vector<std::string>>();
      if (entry.contains("known_difference")) {
        const auto& flag = entry.at("known_difference");
        if (flag.is_string()) {
          value.known_differences[""] = flag.get<std::string>();
        } else if (flag.is_object()) {
          for (const auto& [scale, text] : flag.items()) {
            if (scale != "quick" && scale != "full")
              throw InputError(path + ": " + where + ".known_difference: unknown scale '" + scale +
                               "' (quick or full)");
            if (!value.applies_to(scale))
              throw InputError(path + ": " + where +
                               ".known_difference: the entry does not "
                               "apply at the scale '" +
                               scale + "'");
            value.known_differences[scale] = text.get<std::string>();
          }
        } else {
          throw InputError(path + ": " + where +
                           ".known_difference: a text, or an object of texts by scale");
        }
        for (const auto& [scale, text] : value.known_differences)
          if (text.empty()) throw InputError(path + ": " + where + ".known_difference: empty text");
      }
      if (!std::isfinite(value.published) || !std::isfinite(value.tolerance) ||
          value.tolerance < 0.0)
        throw InputError(path + ": " + where +
                         ": published value and tolerance must be finite, tolerance >= 0");
      reference.index_[name] = reference.values_.size();
      reference.values_.push_back(value);
    }
    reference.data_ = load_data(doc, path);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(path + ": wrong type: " + e.what());
  }
  return reference;
}

const PublishedData& Reference::data(const std::string& name) const {
  const auto it = data_.find(name);
  if (it == data_.end()) throw InputError(path_ + ": no data named '" + name + "'");
  return it->second;
}

const ReferenceValue& Reference::get(const std::string& name) const {
  const auto it = index_.find(name);
  if (it == index_.end()) throw InputError(path_ + ": no reference value named '" + name + "'");
  return values_[it->second];
}

}  // namespace moreau
