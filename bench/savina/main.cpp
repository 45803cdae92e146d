// troupe's Savina programs: one per benchmark file, all linked into this
// driver (registry.hpp); `savina --bench=NAME --workers=N [--quick=1]`.
#include "savina.hpp"

int main(int argc, char** argv) { return savina::run_main("troupe", argc, argv); }
