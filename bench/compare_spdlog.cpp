// SPDX-License-Identifier: MIT
/*
 * compare_spdlog.cpp - the spdlog cases of bench/compare, as spdlog's users
 * set them up: its default pattern ("[date time.ms] [name] [level] text"),
 * thread-safe (_mt) sinks, the async logger with its own thread pool of one
 * thread and a queue that blocks the caller when full (spdlog's defaults).
 */
#include <chrono>
#include <cstdio>
#include <exception>
#include <memory>
#include <thread>

#include <spdlog/async.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/null_sink.h>
#include <spdlog/spdlog.h>

#include "compare.h"

namespace
{
std::shared_ptr<spdlog::logger> logger;
std::shared_ptr<spdlog::details::thread_pool> pool;
} // namespace

int cmp_spdlog_setup(enum cmp_spdlog_kind kind, const char *path, char *why, size_t len)
{
	try {
		switch (kind) {
		case CMP_SPDLOG_NULL:
			logger = std::make_shared<spdlog::logger>(
				"compare", std::make_shared<spdlog::sinks::null_sink_mt>());
			break;
		case CMP_SPDLOG_FILE:
			logger = std::make_shared<spdlog::logger>(
				"compare",
				std::make_shared<spdlog::sinks::basic_file_sink_mt>(path, true));
			break;
		case CMP_SPDLOG_ASYNC:
			pool = std::make_shared<spdlog::details::thread_pool>(8192, 1);
			logger = std::make_shared<spdlog::async_logger>(
				"compare",
				std::make_shared<spdlog::sinks::basic_file_sink_mt>(path, true), pool,
				spdlog::async_overflow_policy::block);
			break;
		}
	} catch (const std::exception &e) {
		std::snprintf(why, len, "spdlog: %s", e.what());
		return -1;
	}
	return 0;
}

void cmp_spdlog_log(long i)
{
	logger->info("worker {} processed {} in {} us", static_cast<int>(i & 7), cmp_what[i & 3],
		     static_cast<unsigned long>(i) * 3);
}

void cmp_spdlog_finish(void)
{
	/* The async logger's flush is one more message on the queue: wait
	 * until its thread has taken everything, then flush the sink. */
	if (pool) {
		while (pool->queue_size() != 0)
			std::this_thread::sleep_for(std::chrono::microseconds(50));
		for (auto &sink : logger->sinks())
			sink->flush();
		return;
	}
	logger->flush();
}

void cmp_spdlog_teardown(void)
{
	logger.reset();
	pool.reset();
}
