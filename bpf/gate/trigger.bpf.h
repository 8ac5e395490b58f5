/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_GATE_TRIGGER_BPF_H
#define AUXTRIG_GATE_TRIGGER_BPF_H

/*
 * The triggers (--on): condition, rate policy (once, every, after, limit),
 * then the action: a snapshot's freeze, a stop, a mark, resume/pause of the
 * thread's window, or a message to the recorder on gate_ctl.
 */
#include "state.bpf.h"
#include "emit.bpf.h"
#include "window.bpf.h"

/*
 * limit:N/s as a token bucket of N tokens refilled at N per second, kept as
 * one theoretical arrival time per trigger (GCRA) so that every CPU updates
 * it with one compare-and-swap: a match is let through if the bucket's
 * arrival time is at most (N - 1) intervals ahead of now.
 */
static __always_inline int rate_allows(__u32 i, __u32 limit)
{
	__u64 now = bpf_ktime_get_ns(), step, tau, tat, next;

	if (!limit || i >= GATE_MAX_TRIGGERS)
		return 1;
	/*
	 * clang reloads @i from the stack, where the verifier no longer knows
	 * the check above: bound the value the index is computed from.
	 */
	barrier_var(i);
	i &= GATE_MAX_TRIGGERS - 1;
	step = 1000000000ULL / limit;
	tau = step * (limit - 1);
	for (int k = 0; k < 4; k++) {
		tat = *(volatile __u64 *)&trig_tat[i];
		next = tat > now ? tat : now;
		if (next - now > tau)
			return 0;
		if (__sync_val_compare_and_swap(&trig_tat[i], tat, next + step) == tat)
			return 1;
	}
	return 0; /* four CPUs raced us for the same token: count it as held back */
}

/*
 * resume / pause: open or close the thread's recording window
 * (GATE_USER_WINDOW, the one auxtrig_resume()/auxtrig_pause() use). Each real
 * edge leaves an auxtrig:resume / auxtrig:pause record inside the window.
 * Return: 1 if the thread had no window open before this resume.
 */
static __always_inline int user_window(void *ctx, __u64 ip, const struct expr_env *env, __u32 i, __u32 action)
{
	__u64 bit = 1ULL << GATE_USER_WINDOW;
	struct gate_stats *st = my_stats();
	struct gate_thread *th;
	__u32 tid = env->tid;
	__u64 open;

	th = bpf_map_lookup_elem(&gate_threads, &tid);
	open = th ? th->open : 0;
	if (action == GATE_ACT_RESUME) {
		if (open & bit)
			return 0;
		if (windows_open(tid, th, open, bit, st))
			return 0;
		emit_mark(ctx, ip, env, i, resume_type);
		return !open;
	}
	if (!(open & bit))
		return 0;
	emit_mark(ctx, ip, env, i, pause_type);
	windows_close(ctx, tid, open, bit, st);
	return 0;
}

/*
 * The rate policy of trigger @i after a match: once, every N, after N, on
 * the trigger's global count of matches. The count is added to atomically,
 * but once "once" has fired or "after N" has been reached a plain read
 * decides: the per-point programs (gate_front.c) emit the same steps.
 */
static __always_inline int policy_fires(__u32 i, const volatile struct gate_trigger *t)
{
	__u64 *c = &trig_policy[i & (GATE_MAX_TRIGGERS - 1)], m;

	switch (t->policy) {
	case GATE_POLICY_ONCE:
		if (*(volatile __u64 *)c)
			return 0;
		return __sync_add_and_fetch(c, 1) == 1;
	case GATE_POLICY_EVERY:
		m = __sync_add_and_fetch(c, 1);
		return t->n && m % t->n == 0;
	case GATE_POLICY_AFTER:
		if (*(volatile __u64 *)c >= t->n)
			return 1;
		return __sync_add_and_fetch(c, 1) >= t->n;
	}
	return 1;
}

/* rec_gen of a hit that emitted no record before its triggers: no snapshot can have taken one */
#define GATE_NO_REC (~0ull)

/*
 * Called just before a hit at @tp emits the record its triggers may
 * snapshot: the snapshots the recorder had begun by then, or one less while
 * one was being taken (it may copy this CPU's ring before or after the
 * record); GATE_NO_REC where no snapshot trigger can fire at @tp.
 */
static __always_inline __u64 snap_generation(const struct gate_tp *tp)
{
	__u64 begun;

	if (!have_snap_triggers || !tp->trig_mask)
		return GATE_NO_REC;
	begun = *(volatile __u64 *)&snaps_begun;
	barrier();
	return begun == *(volatile __u64 *)&snaps_done ? begun : begun - 1;
}

/*
 * Is this call of thread @tid (syscall @nr) noted in gate_held, incomplete
 * (records a freeze held back, or an entry a snapshot cut)? Then the note
 * is taken.
 */
static __always_inline int held_call_take(__u32 tid, __s64 nr)
{
	__s32 *held = bpf_map_lookup_elem(&gate_held, &tid);

	if (!held || *held != nr)
		return 0;
	bpf_map_delete_elem(&gate_held, &tid);
	return 1;
}

/*
 * Trigger @i fires (condition and policy passed): the rate limit, then the
 * action. A snapshot trigger freezes the flight recorder at once, here in the
 * kernel, so the snapshot ends exactly at the record that fired it; the
 * recorder unfreezes it once the snapshot is taken. @rec_gen: the hit's own
 * record's snap_generation(), or GATE_NO_REC.
 * Return: 1 if a resume opened the thread's first window.
 */
static __always_inline int trigger_fire(void *ctx, __u32 i, struct expr_env *env, __u64 ip, __u64 rec_gen,
					struct gate_trigger_stats *ts)
{
	const volatile struct gate_trigger *t = &gate_triggers[i & (GATE_MAX_TRIGGERS - 1)];
	struct gate_ctl_msg *msg;
	__u32 point = 0;

	if (t->limit && !rate_allows(i, t->limit)) {
		ts->suppressed++;
		return 0;
	}
	if (t->action == GATE_ACT_SNAPSHOT) {
		struct gate_runtime *rt = gruntime();
		__u32 tid = env->tid;

		/*
		 * Only the trigger that freezes asks for a snapshot. One that
		 * fires while another snapshot is being taken, or whose call had
		 * records held back by one (gate_held: a call of the same
		 * syscall since the thread's last recorded entry), would get a
		 * snapshot that lacks its own call (and holds records of after
		 * it): it asks for none and counts as suppressed.
		 * snapshot+T: the first record past the deadline freezes (a
		 * pending one stays).
		 */
		if (have_snap_triggers && held_call_take(tid, env->nr)) {
			ts->suppressed++;
			return 0;
		}
		if (!rt || rt->frozen ||
		    (!t->delay_ns && __sync_val_compare_and_swap(&rt->frozen, 0, 1))) {
			ts->suppressed++;
			return 0;
		}
		/*
		 * The same for a snapshot begun after this hit emitted its record
		 * (its CPU stalled in between, as a TCG guest's vCPU does): that
		 * snapshot took the record, or cut it as later than its own
		 * trigger; and for a call whose records the snapshot taken since
		 * the check above cut (gate_held again). Read after the freeze, a
		 * full barrier; the freeze, which no snapshot asked for then, is
		 * let go.
		 */
		if (have_snap_triggers && (held_call_take(tid, env->nr) ||
					   (rec_gen != GATE_NO_REC && *(volatile __u64 *)&snaps_begun != rec_gen))) {
			if (!t->delay_ns)
				rt->frozen = 0;
			ts->suppressed++;
			return 0;
		}
		if (t->delay_ns && !rt->freeze_at)
			rt->freeze_at = bpf_ktime_get_ns() + t->delay_ns;
		if (!t->delay_ns)
			point = emit_point(ctx, ip);
	}
	ts->fired++;
	if (have_set_actions && t->action == GATE_ACT_SET) {
		struct expr_prog *sets = bpf_map_lookup_elem(&gate_trig_sets, &i);

		/* the statements, in the kernel only; a variable that did not fit: counted */
		if (!sets || !expr_eval(sets, env, GATE_SLOT_TRIGGER(i)))
			ts->dropped++;
		return 0;
	}
	if (t->action == GATE_ACT_MARK) {
		struct gate_config *gc = gconfig();

		if (mark_strs)
			emit_mark_str(ctx, ip, env, i, gc ? gc->mark_type : 0, t->mark_str);
		else
			emit_mark(ctx, ip, env, i, gc ? gc->mark_type : 0);
		return 0; /* in the file, not on the control ring */
	}
	if (t->action == GATE_ACT_RESUME || t->action == GATE_ACT_PAUSE)
		return user_window(ctx, ip, env, i, t->action); /* in the kernel only */
	if (t->action == GATE_ACT_STOP) {
		struct gate_config *gc = gconfig();
		struct gate_stop *sp = gstop();
		__u64 at;

		/*
		 * Now: nothing more from any CPU (frozen()), then the stopping
		 * event's auxtrig:stop record. In that order: the record's time
		 * is later than the moment the stop was in force, which is what
		 * lets the recorder cut, at that record, whatever another CPU
		 * emitted at the same instant (gate_stop's comment). stop+T:
		 * nothing past the deadline; the recorder writes the record
		 * then. The earliest stop wins.
		 */
		at = bpf_ktime_get_ns() + t->delay_ns;
		if (sp && (!sp->at || at < sp->at)) {
			sp->trigger = i + 1;
			sp->at = at;
			if (!t->delay_ns && gc && gc->stop_type && !__sync_val_compare_and_swap(&sp->marked, 0, 1))
				emit_mark_rec(ctx, ip, env, i, gc->stop_type, true);
		}
	}
	msg = bpf_ringbuf_reserve(&gate_ctl, sizeof(*msg), 0);
	if (!msg) {
		ts->dropped++;
		return 0;
	}
	msg->type = GATE_MSG_ACTION;
	msg->size = sizeof(*msg);
	msg->point = point;
	msg->trigger = i;
	msg->action = t->action;
	msg->pid = env->pid;
	msg->tid = env->tid;
	msg->time_ns = bpf_ktime_get_ns();
	msg->ret = env->ret;
	__builtin_memcpy(msg->args, env->args, sizeof(msg->args));
	msg->delay_ns = t->delay_ns;
	bpf_ringbuf_submit(msg, BPF_RB_FORCE_WAKEUP);
	return 0;
}

/*
 * The triggers in @trig_mask (bit i = trigger i), at a point whose values the
 * caller has put in @env (tracepoint, uprobe, usdt, kprobe: each fills it its
 * own way): condition, then rate policy, then the action (trigger_fire()).
 * @ip is the sample IP of marks and of resume/pause edges; @rec_gen as for
 * trigger_fire(). The points that
 * have their own program (gate_front.c) run the same steps with the
 * condition compiled, and gate_fire for the actions.
 * Return: 1 if a resume opened the thread's first window (the caller then
 * records this hit too, as a window's start is recorded).
 */
static __always_inline int run_triggers(void *ctx, __u32 trig_mask, struct expr_env *env, __u64 ip,
					__u32 decided, __u32 verdict, __u64 rec_gen)
{
	struct gate_trig_pcpu *pc = trig_pcpu();
	int resumed = 0;

	if (!pc)
		return 0;
	for (__u32 n = 0; n < GATE_MAX_TRIGGERS; n++) {
		const volatile struct gate_trigger *t;
		struct gate_trigger_stats *ts;
		struct expr_prog *prog;
		__u32 i = n;

		if (!(trig_mask & (1u << n)))
			continue;
		/* A bound the verifier keeps: clang may index with another copy of n. */
		barrier_var(i);
		i &= GATE_MAX_TRIGGERS - 1;
		t = &gate_triggers[i];
		ts = &pc->stats[i];
		ts->evaluated++;
		if (t->has_cond && (decided & (1u << i))) {
			/* compiled: the point's own program decided it for this hit */
			if (!(verdict & (1u << i)))
				continue;
		} else if (t->has_cond) {
			prog = bpf_map_lookup_elem(&gate_trig_progs, &i);
			if (!prog || !expr_eval(prog, env, GATE_SLOT_TRIGGER(i)))
				continue;
		}
		ts->matched++;
		if (!policy_fires(i, t)) {
			ts->suppressed++;
			continue;
		}
		/* its action before the next trigger's condition: that one sees what a set action set */
		resumed |= trigger_fire(ctx, i, env, ip, rec_gen, ts);
	}
	return resumed;
}

/*
 * The hand-over from a point's own program (gate_front.c) to gate_fire /
 * gate_fire_entry / gate_fire_return, which it tail-calls: the triggers it
 * let through at this hit (gate_trig_pcpu.fire_mask, taken and cleared) and
 * the point's struct gate_tp (the attach cookie is its key).
 * Return: the point, or NULL when nothing is to fire.
 */
static __always_inline struct gate_tp *fire_take(void *ctx, struct gate_trig_pcpu **pcp, __u32 *mask)
{
	struct gate_trig_pcpu *pc = trig_pcpu();
	__u32 key;

	if (!pc)
		return NULL;
	*pcp = pc;
	*mask = pc->fire_mask;
	pc->fire_mask = 0;
	key = bpf_get_attach_cookie(ctx);
	if (!*mask)
		return NULL;
	return bpf_map_lookup_elem(&gate_tps, &key);
}

/* trigger_fire() for each trigger of @mask, in trigger order, with the hit's values in @env. */
static __always_inline void fire_each(void *ctx, struct gate_trig_pcpu *pc, __u32 mask, struct expr_env *env,
				      __u64 ip)
{
	for (__u32 n = 0; n < GATE_MAX_TRIGGERS; n++) {
		__u32 i = n;

		if (!(mask & (1u << n)))
			continue;
		barrier_var(i);
		i &= GATE_MAX_TRIGGERS - 1;
		trigger_fire(ctx, i, env, ip, GATE_NO_REC, &pc->stats[i]); /* the hit recorded nothing */
	}
}

#endif
