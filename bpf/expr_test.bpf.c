// SPDX-License-Identifier: BSD-2-Clause
/*
 * Test harness for bpf/expr.bpf.h, run by tests/kernel/test_expr_bpf.c with
 * BPF_PROG_TEST_RUN. A syscall program runs in the calling process, so
 * str(argN) reads the test's own strings with bpf_probe_read_user_str(), as a
 * real program reads the traced process's. The program is in an array map and
 * the environment on the BPF stack (expr_test_run) or in a map value
 * (expr_test_run_mapenv), as a real caller may keep it; the record is copied
 * into kernel memory (expr_test_rec) so it is read with bpf_probe_read_kernel().
 *
 * expr_test_openat is a real caller: it fills the environment at the
 * sys_enter_openat tracepoint of the test process and counts the calls for
 * which the condition in expr_test_progs[1] holds (state in the last slot).
 * The test runs use the slot the test passes in struct expr_test_args.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "expr.bpf.h"

#define EXPR_TEST_REC_SIZE 256

struct expr_test_args {
	struct expr_env env;
	__s32 result;
	__u32 slot;	/* the condition's state: expr_state[slot], expr_counts {tid, slot} */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2); /* 0: test runs, 1: expr_test_openat */
	__type(key, __u32);
	__type(value, struct expr_prog);
} expr_test_progs SEC(".maps");

char expr_test_rec[EXPR_TEST_REC_SIZE];

/* An array map rather than a global: a struct in .bss would make the skeleton need expr_abi.h. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct expr_env);
} expr_test_envs SEC(".maps");
const volatile __u32 expr_test_tgid;
__u64 expr_test_seen, expr_test_hits;

SEC("syscall")
int expr_test_run(struct expr_test_args *args)
{
	const struct expr_prog *prog;
	struct expr_env env;
	__u32 zero = 0;

	__builtin_memcpy(&env, &args->env, sizeof(env));
	if (env.rec)
		env.rec = (__u64)(unsigned long)expr_test_rec;
	prog = bpf_map_lookup_elem(&expr_test_progs, &zero);
	if (!prog) {
		args->result = -1;
		return 0;
	}
	args->result = expr_eval(prog, &env, args->slot);
	return 0;
}

SEC("syscall")
int expr_test_run_mapenv(struct expr_test_args *args)
{
	const struct expr_prog *prog;
	struct expr_env *env;
	__u32 zero = 0;

	env = bpf_map_lookup_elem(&expr_test_envs, &zero);
	prog = bpf_map_lookup_elem(&expr_test_progs, &zero);
	if (!prog || !env) {
		args->result = -1;
		return 0;
	}
	__builtin_memcpy(env, &args->env, sizeof(*env));
	if (env->rec)
		env->rec = (__u64)(unsigned long)expr_test_rec;
	args->result = expr_eval(prog, env, args->slot);
	return 0;
}

/*
 * The record of a syscalls:sys_enter_NAME tracepoint (the kernel's struct
 * syscall_trace_enter, as the format file says): the number is a 4-byte int
 * at offset 8 followed by 4 bytes of padding, the arguments start at 16.
 * vmlinux.h's struct trace_event_raw_sys_enter is raw_syscalls:sys_enter's
 * record, whose 'long id' is 8 bytes: read here it would take the padding
 * into the number. Declared here, not from vmlinux.h, because the layout is
 * the tracepoint's ABI, not a kernel-internal struct to relocate.
 */
struct sys_enter_record {
	__u16 common_type;
	__u8 common_flags;
	__u8 common_preempt_count;
	__s32 common_pid;
	__s32 nr;
	__u32 pad;
	__u64 args[];
};

SEC("?tracepoint/syscalls/sys_enter_openat")
int expr_test_openat(struct sys_enter_record *ctx)
{
	const struct expr_prog *prog;
	struct expr_env env = {};
	__u32 one = 1;

	if (!expr_test_tgid || bpf_get_current_pid_tgid() >> 32 != expr_test_tgid)
		return 0;
	expr_env_fill_task(&env);
	env.nr = ctx->nr;
	env.ret = 0;
	env.args[0] = ctx->args[0];
	env.args[1] = ctx->args[1];
	env.args[2] = ctx->args[2];
	env.args[3] = ctx->args[3];
	/*
	 * openat has 4 arguments and its record ends after args[3]: reading
	 * ctx past the record makes the attach fail with EACCES (the kernel
	 * checks the program's max_ctx_offset against the tracepoint's size).
	 */
	env.rec = (__u64)(unsigned long)ctx;
	env.rec_size = 48;

	__sync_fetch_and_add(&expr_test_seen, 1);
	prog = bpf_map_lookup_elem(&expr_test_progs, &one);
	if (prog && expr_eval(prog, &env, EXPR_MAX_SLOTS - 1))
		__sync_fetch_and_add(&expr_test_hits, 1);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
