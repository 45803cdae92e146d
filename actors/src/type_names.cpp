// Type names as users write them, from the compiler's spellings (reports
// and dumps name actor and message types; troupe/detail/type_name.hpp).
#include <cxxabi.h>

#include <cstdlib>
#include <string>
#include <string_view>

#include "troupe/detail/type_name.hpp"

namespace troupe::detail {

namespace {

// Whether s[b, e) is a scope users do not write: a function (local
// classes: "f()", "f() const", "<lambda()>") or an anonymous namespace.
bool unwritten_scope(std::string_view c) noexcept {
    if (c.empty()) return false;
    if (c == "{anonymous}" || c == "(anonymous namespace)") return true;
    if (c.starts_with("<lambda")) return true;
    if (c.back() == ')') return true;
    if (c.ends_with(") const") || c.ends_with(") volatile") || c.ends_with(") const volatile"))
        return true;
    return false;
}

// Start of the name component ending just before `end` in s: walks back
// over balanced brackets to the previous "::", or to a top-level separator.
std::size_t component_begin(const std::string& s, std::size_t end) noexcept {
    int depth = 0;
    std::size_t i = end;
    while (i > 0) {
        const char c = s[i - 1];
        if (c == ')' || c == '>' || c == ']') {
            ++depth;
        } else if (c == '(' || c == '<' || c == '[') {
            if (depth == 0) return i;  // an enclosing argument list starts here
            --depth;
        } else if (depth == 0) {
            if (c == ',') return i;
            if (c == ' ' && !(i >= 2 && s[i - 2] == ')')) return i;  // "f() const" keeps its space
            if (c == ':' && i >= 2 && s[i - 2] == ':') return i;
        }
        --i;
    }
    return 0;
}

}  // namespace

std::string user_type_name(std::string_view spelling) {
    std::string s{spelling};
    // Drop each "scope::" whose scope is unwritten, left to right; a scope
    // starts after the previous "::" or a top-level separator.
    std::size_t from = 0;
    for (;;) {
        const std::size_t sep = s.find("::", from);
        if (sep == std::string::npos) break;
        const std::size_t b = component_begin(s, sep);
        const std::string_view c = std::string_view{s}.substr(b, sep - b);
        if (unwritten_scope(c)) {
            // Also drop the qualifiers before a local class's function scope
            // ("ns::f()::x" -> "x"): everything back to the qualified name's
            // start.
            std::size_t q = b;
            while (q >= 2 && s[q - 1] == ':' && s[q - 2] == ':') q = component_begin(s, q - 2);
            s.erase(q, sep + 2 - q);
            from = q;
        } else {
            from = sep + 2;
        }
    }
    return s;
}

std::string class_of_constructor(std::string_view fn) {
    // "ns::cls<T>::cls(int) [with T = int]" -> "ns::cls<T>"; a local class's
    // "f()::lonely::lonely()" -> "lonely"; anything else is returned whole.
    if (auto with = fn.find(" [with "); with != std::string_view::npos) fn = fn.substr(0, with);
    // The constructor's parameter list: the last balanced "(...)".
    if (fn.empty() || fn.back() != ')') return user_type_name(fn);
    int depth = 0;
    std::size_t open = std::string_view::npos;
    for (std::size_t i = fn.size(); i > 0; --i) {
        const char c = fn[i - 1];
        if (c == ')') ++depth;
        else if (c == '(' && --depth == 0) {
            open = i - 1;
            break;
        }
    }
    if (open == std::string_view::npos) return std::string{fn};
    const std::string head{fn.substr(0, open)};                // "f()::lonely::lonely"
    const std::size_t b = component_begin(head, head.size());  // the constructor's own name
    if (b < 2 || head[b - 1] != ':' || head[b - 2] != ':') return user_type_name(fn);
    std::string cls = head.substr(0, b - 2);
    // Strip a leading return type or qualifiers ("void f()" has a space at
    // the top level).
    const std::size_t start = component_begin(cls, cls.size());
    std::size_t qs = start;
    while (qs >= 2 && cls[qs - 1] == ':' && cls[qs - 2] == ':') qs = component_begin(cls, qs - 2);
    return user_type_name(std::string_view{cls}.substr(qs));
}

std::string demangle(const char* mangled) {
    int status = 0;
    char* d = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
    std::string s = status == 0 && d ? d : mangled;
    std::free(d);
    return s;
}

}  // namespace troupe::detail
