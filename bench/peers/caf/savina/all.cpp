// The CAF 0.17 twins of bench/savina/, one translation unit (CAF's headers
// dominate a twin's compile time): each twin file is included here and
// registers itself with the driver; `caf_savina --bench=NAME ...`.
#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "savina_caf.hpp"

// clang-format off
#include "pingpong.cpp"
#include "count.cpp"
#include "threadring.cpp"
#include "fjthrput.cpp"
#include "fjcreate.cpp"
#include "fib.cpp"
#include "big.cpp"
#include "chameneos.cpp"
#include "concdict.cpp"
#include "concsll.cpp"
#include "bndbuffer.cpp"
#include "philosopher.cpp"
#include "logmap.cpp"
#include "banking.cpp"
#include "radixsort.cpp"
#include "sieve.cpp"
#include "trapezoid.cpp"
#include "recmatmul.cpp"
#include "quicksort.cpp"
#include "apsp.cpp"
#include "nqueenk.cpp"
#include "bitonicsort.cpp"
#include "facloc.cpp"
// clang-format on

int main(int argc, char** argv) { return savina::run_main("caf", argc, argv); }
