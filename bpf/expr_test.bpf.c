// SPDX-License-Identifier: BSD-2-Clause
/*
 * Test harness for bpf/expr.bpf.h, run by tests/kernel/test_expr_bpf.c with
 * BPF_PROG_TEST_RUN. A syscall program runs in the calling process, so
 * str(argN) reads the test's own strings with bpf_probe_read_user_str(), as a
 * real program reads the traced process's. The program is in an array map and
 * the environment on the BPF stack, as in a real caller; the record is copied
 * into kernel memory (expr_test_rec) so it is read with bpf_probe_read_kernel().
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
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct expr_prog);
} expr_test_progs SEC(".maps");

char expr_test_rec[EXPR_TEST_REC_SIZE];

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
	args->result = expr_eval(prog, &env);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
