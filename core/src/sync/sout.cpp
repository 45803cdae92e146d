#include <iostream>

#include "troupe/sout.hpp"

namespace troupe {
locked_ostream sout{std::cout};
}
