#pragma once
// A registered options struct held by value behind a name (a solver's, a scheme's): the
// registries keep each entry's defaults in one of these, and the scene holds the chosen entry's
// options the same way. AnyOptions<Model> is the part every such holder shares: copying,
// the held type, and reaching the struct as its own type; `Model` adds what the registry needs
// of any struct (its common fields, its validation).
#include <memory>
#include <string>
#include <typeinfo>
#include <utility>

#include "moreau/core/error.hpp"

namespace moreau {

// The struct's name without its namespace ("PgsOptions"), for messages.
std::string options_type_name(const std::type_info& type);

// The interface every Model derives from.
struct HeldOptions {
  virtual ~HeldOptions() = default;
  virtual const std::type_info& type() const = 0;
  virtual void* address() = 0;
};

template <class Model>
class AnyOptions {
 public:
  AnyOptions() = default;
  AnyOptions(const AnyOptions& other) : self_(other.self_ ? other.self_->clone() : nullptr) {}
  AnyOptions(AnyOptions&&) noexcept = default;
  AnyOptions& operator=(const AnyOptions& other) {
    if (this != &other) self_ = other.self_ ? other.self_->clone() : nullptr;
    return *this;
  }
  AnyOptions& operator=(AnyOptions&&) noexcept = default;

  bool empty() const { return !self_; }
  const std::type_info& type() const { return self_ ? self_->type() : typeid(void); }
  std::string type_name() const { return options_type_name(type()); }

  template <class Options>
  const Options* get_if() const {
    return self_ && self_->type() == typeid(Options) ? static_cast<const Options*>(self_->address())
                                                     : nullptr;
  }
  template <class Options>
  Options* get_if() {
    return self_ && self_->type() == typeid(Options) ? static_cast<Options*>(self_->address())
                                                     : nullptr;
  }
  // The struct as its own type: InputError naming both structs for another.
  template <class Options>
  const Options& get() const {
    if (const Options* options = get_if<Options>()) return *options;
    throw InputError("expected " + options_type_name(typeid(Options)) + ", got " + type_name());
  }
  template <class Options>
  Options& get() {
    if (Options* options = get_if<Options>()) return *options;
    throw InputError("expected " + options_type_name(typeid(Options)) + ", got " + type_name());
  }

 protected:
  explicit AnyOptions(std::unique_ptr<Model> self) : self_(std::move(self)) {}
  Model& held() const {
    if (!self_) throw InputError("no options held (an empty options holder)");
    return *self_;
  }

 private:
  std::unique_ptr<Model> self_;
};

}  // namespace moreau
