/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_LOG_H
#define AUXTRIG_LOG_H

/*
 * sys/ layer: the one logging module (user/sys/log.c), used everywhere.
 */

/**
 * DOC: logging
 *
 * One logging module for the whole tool. Messages go to stderr, prefixed with
 * "auxtrig: ". The level comes from the repeatable -v option: errors and
 * warnings always print, info prints by default (silenced by -q), debug
 * needs -v, and libbpf's own debug output (verifier logs) needs -vv.
 */

enum log_level {
	LOG_ERR = 0,
	LOG_WARN = 1,
	LOG_INFO = 2,
	LOG_DEBUG = 3,
	LOG_DEBUG2 = 4, /* libbpf debug, verifier logs */
};

/** log__set_level() - set the most verbose level that is printed. */
void log__set_level(int level);
/** log__level() - the most verbose level that is printed. */
int log__level(void);
/** log__route_libbpf() - send libbpf's messages through this module. */
void log__route_libbpf(void);

void log__print(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define pr_err(fmt, ...)   log__print(LOG_ERR, fmt, ##__VA_ARGS__)
#define pr_warn(fmt, ...)  log__print(LOG_WARN, fmt, ##__VA_ARGS__)
#define pr_info(fmt, ...)  log__print(LOG_INFO, fmt, ##__VA_ARGS__)
#define pr_debug(fmt, ...) log__print(LOG_DEBUG, fmt, ##__VA_ARGS__)

#endif
