#pragma once
/// troupe-remote: actors across MPI ranks (link troupe_remote_dep, or
/// pkg-config troupe-remote). See docs/remote.md.
#include "troupe/defaults/remote.hpp"
#include "troupe/remote/errors.hpp"
#include "troupe/remote/message.hpp"
#include "troupe/remote/monitor.hpp"
#include "troupe/remote/ref.hpp"
#include "troupe/remote/world.hpp"
