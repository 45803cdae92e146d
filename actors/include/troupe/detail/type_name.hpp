#pragma once
// Compile-time type names without RTTI, for checked-build reports.
#include <string>
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

/// The name a user wrote for a type, from a compiler's or demangler's
/// spelling: drops the enclosing function scopes of local classes
/// ("f()::lonely" -> "lonely", "main()::<lambda()>::x" -> "x") and
/// anonymous namespaces ("{anonymous}::m" -> "m"), also inside template
/// arguments. For reports (allocates).
std::string user_type_name(std::string_view spelling);

/// The demangled spelling of a mangled name (a `std::type_info::name()`),
/// or `mangled` itself when it cannot be demangled. For reports (allocates).
std::string demangle(const char* mangled);

/// The class name in a constructor's source_location function name, as the
/// user wrote it ("ns::my_actor::my_actor(int)" -> "ns::my_actor",
/// "f()::lonely::lonely()" -> "lonely").
std::string class_of_constructor(std::string_view function_name);

}  // namespace troupe::detail
