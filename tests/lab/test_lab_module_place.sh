#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# A kernel module's code placed as the kernel laid it out, on a real kernel: the lab's own unit
# (auxtrig_pt.ko, loaded). Windows recorded with -e intel_pt/ptw/k start in two functions of the
# module (the unit's inject parameter: TIP.PGE at each, then TIP.PGD), one in .text and one in
# .exit.text. The file then gets the MMAP record perf record writes for a module (its start and
# size from /proc/modules, the .ko's path; auxtrig record keeps the kernel's code instead, and
# perf 6.1 does not drive the emulated unit's AUX area), and a user who cannot read /proc/kcore
# decodes it with a copy of kallsyms (--kallsyms): the module's code comes from its .ko, placed by
# the module's symbols in kallsyms; the trace starts are named from the .ko in [auxtrig_pt] and
# [auxtrig_pt].exit.text, and where auxtrig placed the sections (script -v) is where the kernel
# says they are: /sys/module/auxtrig_pt/sections/.text and .exit.text.
. "$(dirname "$0")/lib.sh"
need_trace_unit
command -v setpriv >/dev/null || fail "needs setpriv (util-linux) to decode as another user"
command -v python3 >/dev/null || fail "needs python3"
ko=$AUXTRIG_LAB_TRACE_UNIT
sections=/sys/module/auxtrig_pt/sections
inject=/sys/module/auxtrig_pt/parameters/inject
[ -w "$inject" ] || fail "the unit has no inject parameter ($inject)"
[ -r "$sections/.text" ] && [ -r "$sections/.exit.text" ] || fail "no $sections/.text or .exit.text"
text=$(cat "$sections/.text") exit_text=$(cat "$sections/.exit.text")
trap 'echo >"$inject"; rm -rf "$tmp"' EXIT

addr_of() { # FUNCTION: its address in kallsyms, in the unit
	awk -v f="$1" '$3 == f && $4 == "[auxtrig_pt]" { print $1; exit }' /proc/kallsyms
}
read_fn=$(addr_of ept_read) exit_fn=$(addr_of ept_exit)
[ -n "$read_fn" ] && [ -n "$exit_fn" ] || fail "no ept_read or ept_exit of [auxtrig_pt] in /proc/kallsyms"
# TIP.PGE with a whole 64-bit IP (IPBytes 6), then TIP.PGD with the IP suppressed: twice
le64() { local v=$((0x$1)) i; for i in 0 1 2 3 4 5 6 7; do printf '%02x' $(((v >> (8 * i)) & 255)); done; }
echo "d1$(le64 "$read_fn")01d1$(le64 "$exit_fn")01" >"$inject" || fail "the unit refused the packets"
# (without aux_action, 6.1, the trace is switched from userspace: 20 ms sleeps, as test_lab_kernel_trace)
if kernel_aux_action; then
	window=syscall:getpid work=("$DEMO" -r 2)
else
	window=syscall:clock_nanosleep work=("$build/examples/nap_demo" 2 1 20)
fi
"$AUXTRIG" record -e intel_pt/ptw/k -w "$window" -o "$tmp/rec.data" -- "${work[@]}" >/dev/null 2>"$tmp/record.err" ||
	fail "record failed: $(cat "$tmp/record.err")"
echo >"$inject"
[ -s "$tmp/rec.data/data" ] || fail "no recording: $(cat "$tmp/record.err")"

# perf record's MMAP record of the module, appended to the data section: a clone of the file's
# kernel MMAP record (the same sample_id trailer) with the module's start, size and .ko
read -r size start < <(awk '$1 == "auxtrig_pt" { print $2, $6 }' /proc/modules)
[ -n "$start" ] || fail "no auxtrig_pt in /proc/modules"
python3 - "$tmp/rec.data/data" "$tmp/mod.data" "$start" "$size" "$ko" <<'EOF' || fail "cannot add the module's MMAP record"
import struct, sys
src, dst, start, size, ko = sys.argv[1], sys.argv[2], int(sys.argv[3], 16), int(sys.argv[4]), sys.argv[5].encode()
b = bytearray(open(src, 'rb').read())
assert b[:8] == b'PERFILE2'
doff, dsize = struct.unpack_from('<QQ', b, 40)
feats = sum(bin(x).count('1') for x in struct.unpack_from('<4Q', b, 72))
pos, rec = doff, None
while pos < doff + dsize:
    typ, misc, sz = struct.unpack_from('<IHH', b, pos)
    name = b[pos + 40:pos + sz].split(b'\0')[0]
    if typ == 1 and name == b'[kernel.kallsyms]_text':
        rec = b[pos:pos + sz]
        break
    pos += sz
assert rec, 'no kernel MMAP record'
trailer = rec[40 + (len(name) + 8) // 8 * 8:]
fn = ko + b'\0' * (8 - len(ko) % 8)
new = struct.pack('<IHHIIQQQ', 1, misc, 40 + len(fn) + len(trailer), 0xffffffff, 0, start, size, 0) + fn + trailer
end = doff + dsize
out = b[:end] + new + b[end:]
struct.pack_into('<Q', out, 48, dsize + len(new))
for i in range(feats):   # the feature sections follow the data: their index moves with it
    at = end + len(new) + 16 * i
    off, = struct.unpack_from('<Q', out, at)
    struct.pack_into('<Q', out, at, off + len(new))
open(dst, 'wb').write(out)
EOF

# decoded by a user without /proc/kcore, with a copy of kallsyms
cp /proc/kallsyms "$tmp/kallsyms"
chmod 755 "$tmp" && chmod 644 "$tmp/mod.data" "$tmp/kallsyms"
setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
	"$AUXTRIG" script -v -i "$tmp/mod.data" --kallsyms "$tmp/kallsyms" -F ip,addr,sym,symoff,dso \
	>"$tmp/out" 2>"$tmp/err" || fail "auxtrig script failed: $(tail -3 "$tmp/err")"
grep auxtrig_pt "$tmp/err" >&2
grep -q "auxtrig_pt.ko: \.text at $text (module start + 0x[0-9a-f]*), where kallsyms puts " "$tmp/err" ||
	fail "the unit's .text not placed at $text, where $sections/.text says: $(grep -m3 auxtrig_pt "$tmp/err")"
grep -q "auxtrig_pt.ko: \.exit\.text at $exit_text, where kallsyms puts " "$tmp/err" ||
	fail "the unit's .exit.text not placed at $exit_text, where $sections/.exit.text says: $(grep -m3 auxtrig_pt "$tmp/err")"
! grep -q "taken at the module's start" "$tmp/err" || fail "the module's place was guessed: $(cat "$tmp/err")"
# the trace starts, named from the .ko where the kernel put its code
grep -q "=> *$read_fn ept_read+0x0 (\[auxtrig_pt\])" "$tmp/out" ||
	fail "no trace start named ept_read+0x0 ([auxtrig_pt]) at $read_fn: $(grep -m3 '=>' "$tmp/out")"
# (module_exit() makes cleanup_module an alias of ept_exit)
grep -qE "=> *$exit_fn (ept_exit|cleanup_module)\+0x0 \(\[auxtrig_pt\]\.exit\.text\)" "$tmp/out" ||
	fail "no trace start named ept_exit+0x0 ([auxtrig_pt].exit.text) at $exit_fn: $(grep -m3 '=>' "$tmp/out")"
echo ok
