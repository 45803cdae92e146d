#pragma once
// Compile-time type names without RTTI, for checked-build reports.
#include <string_view>

namespace troupe::detail {

/// The spelling of T as the compiler prints it ("my_actor", "ns::msg<int>").
template <class T>
constexpr std::string_view type_name() noexcept {
    std::string_view p = __PRETTY_FUNCTION__;
    // GCC: "... type_name() [with T = X; ...]"   Clang: "... [T = X]"
    auto b = p.find("T = ");
    if (b == std::string_view::npos) return p;
    b += 4;
    auto e = p.find_first_of(";]", b);
    return p.substr(b, e == std::string_view::npos ? std::string_view::npos : e - b);
}

/// The class name in a constructor's source_location function name
/// ("ns::my_actor::my_actor(int)" -> "ns::my_actor").
std::string_view class_of_constructor(std::string_view function_name) noexcept;

}  // namespace troupe::detail
