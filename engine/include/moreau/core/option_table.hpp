#pragma once
// Option tables: an options struct that a scene file sets declares its options once, as a
// table of fields (the scene key, the member, its unit, its bounds, its default). The scene
// parser reads a section through its table, the bounds are checked from it (check_bounds,
// naming the key) and docs/scene-format.md is compared with it (scene_test; `moreau schema`
// prints the rows).
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "moreau/core/error.hpp"

namespace moreau {

// Shortest text that reads back to the same double ("0.1", "1e-08", "inf").
inline std::string shortest_text(double value) {
  std::array<char, 32> buffer{};
  const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  return std::string(buffer.data(), result.ptr);
}

// shortest_text with the exponent as people write it: "1e-8", "1e8".
inline std::string readable_number(double value) {
  const std::string text = shortest_text(value);
  const std::size_t e = text.find('e');
  if (e == std::string::npos) return text;
  std::string exponent = text.substr(e + 1);
  const bool negative = exponent[0] == '-';
  if (exponent[0] == '+' || exponent[0] == '-') exponent.erase(0, 1);
  exponent.erase(0, std::min(exponent.find_first_not_of('0'), exponent.size() - 1));
  return text.substr(0, e) + "e" + (negative ? "-" : "") + exponent;
}

// The admissible values of a numeric option: an interval with open or closed ends.
struct Bounds {
  static constexpr double inf = std::numeric_limits<double>::infinity();
  double low = -inf;
  double high = inf;
  bool low_open = true;
  bool high_open = true;

  static Bounds none() { return {}; }
  static Bounds above(double low) { return {low, inf, true, true}; }      // > low
  static Bounds at_least(double low) { return {low, inf, false, true}; }  // >= low
  static Bounds closed(double low, double high) { return {low, high, false, false}; }
  static Bounds open(double low, double high) { return {low, high, true, true}; }
  static Bounds left_open(double low, double high) { return {low, high, true, false}; }

  bool bounded() const { return low > -inf || high < inf; }
  bool contains(double x) const {
    if (std::isnan(x)) return false;
    return (low_open ? x > low : x >= low) && (high_open ? x < high : x <= high);
  }
  // "(0, 1]", "[1, inf)": the interval as an error message names it.
  std::string interval() const {
    return std::string(low_open ? "(" : "[") + readable_number(low) + ", " + readable_number(high) +
           (high_open ? ")" : "]");
  }
  // "> 0", ">= 1", "in (0, 1]" (empty without bounds): as the type column of the docs says it.
  std::string text() const {
    if (!bounded()) return "";
    if (high == inf) return (low_open ? "> " : ">= ") + readable_number(low);
    return "in " + interval();
  }
};

// An option that cannot be used, named by its key (the scene key, docs/scene-format.md): the
// scene parser puts the JSON path of its section in front.
class OptionError : public InputError {
 public:
  OptionError(const std::string& key, const std::string& problem)
      : InputError(key + ": " + problem), key_(key), problem_(problem) {}
  const std::string& key() const { return key_; }
  const std::string& problem() const { return problem_; }

 private:
  std::string key_;
  std::string problem_;
};

// How a field reads and writes its value in `Options` (one member, or several for a key that
// sets the same value in several structs).
template <class T, class Options>
struct OptionAccess {
  std::function<T(const Options&)> get;
  std::function<void(Options&, T)> set;
};

// No value the table can read: the section's reader reads the key itself (an object, an array,
// a number or a word such as "inf"); the field still declares the key, its type, unit and
// default for the documentation.
struct CustomOption {};

template <class Options>
struct OptionField {
  using Value =
      std::variant<CustomOption, OptionAccess<double, Options>, OptionAccess<long, Options>,
                   OptionAccess<bool, Options>, OptionAccess<std::string, Options>>;
  std::string key;
  Value value;
  std::string unit;
  Bounds bounds;                     // numbers and integers
  std::vector<std::string> choices;  // strings: the admissible words (empty: any string)
  // numbers: words that stand for a value ("inf" for a rigid stiffness, "auto" for 0)
  std::vector<std::pair<std::string, double>> number_words;
  long integer_min = 0;  // integers: what the member can hold
  long integer_max = 0;
  std::string type_text;     // the docs' type, where the table does not derive it
  std::string default_text;  // the docs' default, where Options{} does not give it
  std::string doc;           // one line: what the option means (`moreau schema`, `--help`)

  // The field with its one-line meaning: number_option(...).described("...").
  OptionField described(std::string text) && {
    doc = std::move(text);
    return std::move(*this);
  }
  // The number field also read from a word: with_word("inf", infinity).
  OptionField with_word(std::string word, double stands_for) && {
    number_words.emplace_back(std::move(word), stands_for);
    return std::move(*this);
  }
};

template <class Options>
using OptionTable = std::vector<OptionField<Options>>;

// ---- fields of one member ---------------------------------------------------------------

template <class Options>
OptionField<Options> number_option(std::string key, double Options::*member, Bounds bounds,
                                   std::string unit = "") {
  OptionField<Options> field;
  field.key = std::move(key);
  field.unit = std::move(unit);
  field.bounds = bounds;
  field.value = OptionAccess<double, Options>{[member](const Options& o) { return o.*member; },
                                              [member](Options& o, double x) { o.*member = x; }};
  return field;
}

template <class Options, class Integer>
OptionField<Options> integer_option(std::string key, Integer Options::*member, Bounds bounds,
                                    std::string unit = "") {
  OptionField<Options> field;
  field.key = std::move(key);
  field.unit = std::move(unit);
  field.bounds = bounds;
  field.value = OptionAccess<long, Options>{
      [member](const Options& o) { return static_cast<long>(o.*member); },
      [member](Options& o, long x) { o.*member = static_cast<Integer>(x); }};
  field.integer_min = static_cast<long>(std::numeric_limits<Integer>::min());
  field.integer_max = static_cast<long>(std::numeric_limits<Integer>::max());
  return field;
}

template <class Options>
OptionField<Options> bool_option(std::string key, bool Options::*member) {
  OptionField<Options> field;
  field.key = std::move(key);
  field.value = OptionAccess<bool, Options>{[member](const Options& o) { return o.*member; },
                                            [member](Options& o, bool x) { o.*member = x; }};
  return field;
}

// An enumeration member spelled as one of `names` (in the order of `values`).
template <class Options, class Enum>
OptionField<Options> choice_option(std::string key, Enum Options::*member,
                                   std::vector<std::pair<std::string, Enum>> names) {
  OptionField<Options> field;
  field.key = std::move(key);
  for (const auto& entry : names) field.choices.push_back(entry.first);
  field.value = OptionAccess<std::string, Options>{[member, names](const Options& o) {
                                                     for (const auto& entry : names)
                                                       if (entry.second == o.*member)
                                                         return entry.first;
                                                     return std::string();
                                                   },
                                                   [member, names](Options& o, std::string word) {
                                                     for (const auto& entry : names)
                                                       if (entry.first == word)
                                                         o.*member = entry.second;
                                                   }};
  return field;
}

// A field read and written through `access` (a key that sets several members, or a nested
// one); strings take `choices` (empty: any string).
template <class Options, class T>
OptionField<Options> accessed_option(std::string key, OptionAccess<T, Options> access,
                                     Bounds bounds = {}, std::string unit = "",
                                     std::vector<std::string> choices = {}) {
  OptionField<Options> field;
  field.key = std::move(key);
  field.value = std::move(access);
  field.unit = std::move(unit);
  field.bounds = bounds;
  field.choices = std::move(choices);
  field.integer_min = std::numeric_limits<int>::min();
  field.integer_max = std::numeric_limits<int>::max();
  return field;
}

template <class Options>
OptionField<Options> custom_option(std::string key, std::string type_text, std::string default_text,
                                   std::string unit = "") {
  OptionField<Options> field;
  field.key = std::move(key);
  field.unit = std::move(unit);
  field.type_text = std::move(type_text);
  field.default_text = std::move(default_text);
  return field;
}

// ---- what a table says -------------------------------------------------------------------

template <class Options>
std::vector<std::string> option_keys(const OptionTable<Options>& table) {
  std::vector<std::string> keys;
  for (const OptionField<Options>& field : table) keys.push_back(field.key);
  return keys;
}

// The type column of the docs: "number > 0", "integer >= 1", "bool", "\"a\" or \"b\"".
template <class Options>
std::string option_type_text(const OptionField<Options>& field) {
  if (!field.type_text.empty()) return field.type_text;
  const std::string bounds = field.bounds.text();
  const std::string suffix = bounds.empty() ? "" : " " + bounds;
  switch (field.value.index()) {
    case 1: {
      std::string text = "number" + suffix;
      for (const auto& [word, value] : field.number_words) text += " or `\"" + word + "\"`";
      return text;
    }
    case 2:
      return "integer" + suffix;
    case 3:
      return "bool";
    case 4: {
      if (field.choices.empty()) return "string";
      std::string text;
      for (std::size_t i = 0; i < field.choices.size(); ++i)
        text += (i == 0 ? "" : (i + 1 == field.choices.size() ? " or " : ", ")) +
                ("`\"" + field.choices[i] + "\"`");
      return text;
    }
  }
  return "";
}

// The value of a field in `values` as the docs write it ("1e-8", "true", "`\"pgs\"`").
template <class Options>
std::string option_value_text(const OptionField<Options>& field, const Options& defaults) {
  if (field.value.index() == 0) return field.default_text;
  if (const auto* x = std::get_if<OptionAccess<double, Options>>(&field.value)) {
    const double value = x->get(defaults);
    for (const auto& [word, stands_for] : field.number_words)
      if (stands_for == value) return "`\"" + word + "\"`";
    return readable_number(value);
  }
  if (const auto* x = std::get_if<OptionAccess<long, Options>>(&field.value))
    return std::to_string(x->get(defaults));
  if (const auto* x = std::get_if<OptionAccess<bool, Options>>(&field.value))
    return x->get(defaults) ? "true" : "false";
  return "`\"" + std::get<OptionAccess<std::string, Options>>(field.value).get(defaults) + "\"`";
}

// The default column of the docs: the field's default text, or its value in a
// default-constructed Options.
template <class Options>
std::string option_default_text(const OptionField<Options>& field) {
  if (!field.default_text.empty() || field.value.index() == 0) return field.default_text;
  return option_value_text(field, Options{});
}

// The numeric value of a field in `options` (NaN for the others).
template <class Options>
double option_number(const OptionField<Options>& field, const Options& options) {
  if (const auto* x = std::get_if<OptionAccess<double, Options>>(&field.value))
    return x->get(options);
  if (const auto* x = std::get_if<OptionAccess<long, Options>>(&field.value))
    return static_cast<double>(x->get(options));
  return std::numeric_limits<double>::quiet_NaN();
}

// The bounds of every numeric field of the table: throws OptionError naming the first field
// outside them ("relaxation: 1.5 is outside (0, 1]"), `context` appended (" for md_gs").
template <class Options>
void check_bounds(const OptionTable<Options>& table, const Options& options,
                  const std::string& context = "") {
  for (const OptionField<Options>& field : table) {
    if (!field.bounds.bounded()) continue;
    const double value = option_number(field, options);
    // A value that a word stands for ("inf": rigid) is admissible whatever the bounds say.
    if (std::any_of(field.number_words.begin(), field.number_words.end(),
                    [value](const auto& word) { return word.second == value; }))
      continue;
    if (!field.bounds.contains(value))
      throw OptionError(field.key,
                        shortest_text(value) + " is outside " + field.bounds.interval() + context);
  }
}

// `field` as a field of To whose value lives in the From that `reach(to)` returns (a member of
// To, or the struct that an AnySolverOptions holds); its default text is From{}'s.
template <class To, class From, class Reach>
OptionField<To> rebind_option(const OptionField<From>& field, Reach reach) {
  OptionField<To> out;
  out.key = field.key;
  out.unit = field.unit;
  out.bounds = field.bounds;
  out.choices = field.choices;
  out.number_words = field.number_words;
  out.integer_min = field.integer_min;
  out.integer_max = field.integer_max;
  out.type_text = field.type_text;
  out.doc = field.doc;
  out.default_text = option_default_text(field);
  std::visit(
      [&out, reach](const auto& access) {
        using Access = std::decay_t<decltype(access)>;
        if constexpr (std::is_same_v<Access, CustomOption>) {
          out.value = CustomOption{};
        } else {
          using T = decltype(access.get(std::declval<const From&>()));
          out.value =
              OptionAccess<T, To>{[get = access.get, reach](const To& o) { return get(reach(o)); },
                                  [set = access.set, reach](To& o, T x) { set(reach(o), x); }};
        }
      },
      field.value);
  return out;
}

// The fields `keys` of `inner`'s table as fields of Outer, reached through its member `member`
// (an options struct that holds another one declares the inner fields once, in the inner
// struct's table).
template <class Outer, class Inner>
OptionTable<Outer> nested_options(const OptionTable<Inner>& inner, Inner Outer::*member,
                                  const std::vector<std::string>& keys) {
  OptionTable<Outer> out;
  for (const std::string& key : keys) {
    const auto at = std::find_if(inner.begin(), inner.end(),
                                 [&key](const OptionField<Inner>& f) { return f.key == key; });
    if (at == inner.end()) throw InputError("nested_options: no field '" + key + "'");
    out.push_back(rebind_option<Outer>(
        *at, [member](auto& o) -> auto& { return o.*member; }));
  }
  return out;
}

// check_bounds for an options struct's validate(), naming the struct:
// "PgsOptions.relaxation: 2 is outside (0, 2)".
template <class Options>
void validate_fields(const OptionTable<Options>& table, const Options& options,
                     const std::string& owner) {
  try {
    check_bounds(table, options);
  } catch (const OptionError& e) {
    throw OptionError(owner + "." + e.key(), e.problem());
  }
}

}  // namespace moreau
