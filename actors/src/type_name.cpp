// Type names for reports (troupe/detail/type_name.hpp): demangling.
#include <cxxabi.h>

#include <cstdlib>
#include <string>

#include "troupe/detail/type_name.hpp"

namespace troupe::detail {

std::string demangle(const char* mangled) {
    int status = 0;
    char* d = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
    std::string s = status == 0 && d ? d : mangled;
    std::free(d);
    return s;
}

}  // namespace troupe::detail
