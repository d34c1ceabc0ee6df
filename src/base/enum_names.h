// Names of an enum's values from one table in declaration order, instead of a
// hand-written switch per enum: EnumNames<Kind, 3> kKindNames{{"a", "b", "c"}};
// kKindNames(Kind::kB) == "b", kKindNames.Parse("c") == Kind::kC. Pair each table with
// a static_assert that its size matches the enum's last value.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

namespace cstool {

template <typename E, size_t N>
struct EnumNames {
  std::array<std::string_view, N> names;
  std::string_view unknown = "unknown";  // for a value outside the table (a corrupt one)

  constexpr std::string_view operator()(E e) const {
    const auto i = static_cast<size_t>(e);
    return i < N ? names[i] : unknown;
  }
  constexpr std::optional<E> Parse(std::string_view name) const {
    for (size_t i = 0; i < N; ++i)
      if (names[i] == name) return static_cast<E>(i);
    return std::nullopt;
  }
  static constexpr size_t size() { return N; }
};

}  // namespace cstool
