#pragma once
/// Everything in the troupe channels module: `channel<T>`, its close
/// exceptions, its waituntil clauses and its tunable defaults.
#include "troupe/channel.hpp"
#include "troupe/channel_closed.hpp"
#include "troupe/channel_defaults.hpp"
#include "troupe/channel_select.hpp"
