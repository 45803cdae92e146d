#pragma once
/// Everything in the troupe channels module: `channel<T>`, its close
/// exceptions, its waituntil clauses, its tunable defaults, and the timer
/// channels (after, timer, ticker).
#include "troupe/channel.hpp"
#include "troupe/channel_closed.hpp"
#include "troupe/channel_select.hpp"
#include "troupe/defaults/channels.hpp"
#include "troupe/timer_channel.hpp"
