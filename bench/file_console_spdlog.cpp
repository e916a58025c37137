// SPDX-License-Identifier: MIT
/*
 * file_console_spdlog.cpp - the spdlog cases of bench/file_console: a
 * basic_file_sink_mt (spdlog's synchronous file logger) and the async
 * logger on one, with a pattern whose lines have printk's bytes (the time
 * field is a custom flag formatted with {fmt}, as spdlog formats its own).
 */
#include <chrono>
#include <cstdio>
#include <exception>
#include <iterator>
#include <memory>
#include <thread>

#include <spdlog/async.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/spdlog.h>

#include "file_console.h"

namespace
{
std::shared_ptr<spdlog::logger> logger;
std::shared_ptr<spdlog::details::thread_pool> pool;

/* printk's "[%5lu.%06lu]" of CLOCK_MONOTONIC, from the message's wall time. */
class mono_flag : public spdlog::custom_flag_formatter
{
public:
	explicit mono_flag(int64_t off) : off_(off) {}
	void format(const spdlog::details::log_msg &msg, const std::tm &, spdlog::memory_buf_t &dest) override
	{
		int64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(msg.time.time_since_epoch()).count() -
			     off_;
		uint64_t u = ns < 0 ? 0 : static_cast<uint64_t>(ns);

		fmt::format_to(std::back_inserter(dest), "[{:5}.{:06}]", u / 1000000000u, u / 1000u % 1000000u);
	}
	std::unique_ptr<custom_flag_formatter> clone() const override
	{
		return spdlog::details::make_unique<mono_flag>(off_);
	}

private:
	int64_t off_;
};
} // namespace

int fc_spdlog_setup(enum fc_spdlog_kind kind, const char *path, int64_t wall_minus_mono_ns, char *why, size_t len)
{
	try {
		auto sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(path, true);

		if (kind == FC_SPDLOG_ASYNC) {
			pool = std::make_shared<spdlog::details::thread_pool>(8192, 1);
			logger = std::make_shared<spdlog::async_logger>("bench", sink, pool,
									spdlog::async_overflow_policy::block);
		} else {
			logger = std::make_shared<spdlog::logger>("bench", sink);
		}

		auto f = spdlog::details::make_unique<spdlog::pattern_formatter>();

		f->add_flag<mono_flag>('*', wall_minus_mono_ns).set_pattern("%* %v");
		logger->set_formatter(std::move(f));
	} catch (const std::exception &e) {
		std::snprintf(why, len, "spdlog: %s", e.what());
		return -1;
	}
	return 0;
}

void fc_spdlog_log(long i)
{
	logger->info("hello {} world {}", static_cast<int>(i), fc_word[i & 3]);
}

void fc_spdlog_flush(void)
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

void fc_spdlog_teardown(void)
{
	logger.reset();
	pool.reset();
}
