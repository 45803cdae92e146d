#pragma once
/// Everything in the troupe actors module.
#include "troupe/actor.hpp"
#include "troupe/actor_defaults.hpp"
#include "troupe/actor_statistics.hpp"
#include "troupe/actor_system.hpp"
#include "troupe/allocation.hpp"
#include "troupe/behaviour_exception.hpp"
#include "troupe/executor_config.hpp"
#include "troupe/message.hpp"
#include "troupe/poison_pill.hpp"
#include "troupe/request.hpp"
#include "troupe/request_error.hpp"
#include "troupe/victim_selector.hpp"
