#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Walk real kernel code and write the Intel PT packets of that walk.

usage: kernel_walk.py KCORE KALLSYMS FUNCTION MAX_INSNS OUT_PREFIX

Reads the kernel's code from KCORE (a kept copy: auxtrig record's
kcore_dir/kcore) at FUNCTION (named in KALLSYMS), disassembles it with
objdump (binutils), and walks it as a CPU would, choosing its own way:
conditional branches not taken (so loops end), direct jumps and calls
followed (a call descends into the callee), returns back to the caller.
The walk ends at the return from FUNCTION (TIP.PGD, no IP: trace went off
on that branch), or before an indirect branch, a far transfer or the
MAX_INSNS-th instruction (FUP there and TIP.PGD: trace went off before it).

Writes OUT_PREFIX.hex (the packets, hex: TIP.PGE FUNCTION, TNTs, the end)
and OUT_PREFIX.insns (the instructions walked, one address a line, hex);
the lab's emulated unit emits the packets as a window's (its inject
parameter), and a decoder with the same code must list those instructions.
"""
import re
import struct
import subprocess
import sys
import tempfile


def segments(path):
    with open(path, 'rb') as f:
        eh = f.read(64)
        assert eh[:4] == b'\x7fELF' and eh[4] == 2, 'not an ELF64 file'
        phoff, = struct.unpack_from('<Q', eh, 32)
        phentsize, phnum = struct.unpack_from('<HH', eh, 54)
        f.seek(phoff)
        segs = []
        for _ in range(phnum):
            p_type, _flags, off, vaddr, _paddr, filesz, _memsz, _align = struct.unpack('<IIQQQQQQ', f.read(phentsize))
            if p_type == 1:
                segs.append((vaddr, filesz, off))
    return segs


def read(path, segs, addr, size):
    for vaddr, filesz, off in segs:
        if vaddr <= addr < vaddr + filesz:
            size = min(size, vaddr + filesz - addr)
            with open(path, 'rb') as f:
                f.seek(off + addr - vaddr)
                return f.read(size)
    raise SystemExit('address %#x is not in %s' % (addr, path))


INSN = re.compile(r'^\s*([0-9a-f]+):\s+((?:[0-9a-f]{2} )+)\s*(.*)$')


def disassemble(path, segs, addr, cache):
    """The instruction at addr: (length, mnemonic, operands), from a disassembly of the 4 KiB there."""
    if addr in cache:
        return cache[addr]
    code = read(path, segs, addr, 4096)
    with tempfile.NamedTemporaryFile(suffix='.bin') as t:
        t.write(code)
        t.flush()
        out = subprocess.run(['objdump', '-D', '-b', 'binary', '-m', 'i386:x86-64', '--adjust-vma=%#x' % addr,
                              '-w', t.name], check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        m = INSN.match(line)
        if not m:
            continue
        a = int(m.group(1), 16)
        if a >= addr + 4000:   # the last lines of the 4 KiB may be cut short
            break
        text = m.group(3).split('#')[0].strip()
        parts = text.split(None, 1)
        mnem = parts[0] if parts else ''
        ops = parts[1] if len(parts) > 1 else ''
        if mnem in ('bnd', 'notrack', 'rep', 'repz', 'repnz', 'lock', 'cs', 'ds') and ops:
            sub = ops.split(None, 1)
            mnem, ops = sub[0], sub[1] if len(sub) > 1 else ''
        cache.setdefault(a, (len(m.group(2).split()), mnem, ops))
    return cache[addr]


def target(ops):
    m = re.match(r'^(?:0x)?([0-9a-f]+)\b', ops)
    return int(m.group(1), 16) if m else None


class Packets:
    def __init__(self):
        self.b = bytearray()
        self.tnt = []

    def flush(self):
        while self.tnt:
            bits, self.tnt = self.tnt[:6], self.tnt[6:]
            v = 1 << (len(bits) + 1)
            for i, t in enumerate(bits):
                v |= t << (len(bits) - i)
            self.b.append(v)

    def tip(self, op, ip):
        self.flush()
        if ip is None:
            self.b.append(op)                      # IPBytes 0: suppressed
        else:
            self.b.append((6 << 5) | op)           # a whole 64-bit IP
            self.b += struct.pack('<Q', ip)


def walk(kcore, kallsyms, fn, max_insns):
    segs = segments(kcore)
    addr = None
    with open(kallsyms) as f:
        for line in f:
            p = line.split()
            if len(p) >= 3 and p[2] == fn and p[1] in 'Tt':
                addr = int(p[0], 16)
                break
    if addr is None:
        raise SystemExit('%s is not in %s' % (fn, kallsyms))
    cache, stack, insns, pk = {}, [], [], Packets()
    pk.tip(0x11, addr)                             # TIP.PGE
    ip = addr
    while True:
        size, mnem, ops = disassemble(kcore, segs, ip, cache)
        if len(insns) >= max_insns or mnem in ('syscall', 'sysret', 'iret', 'iretq', 'int', 'int3', 'ud2', 'hlt',
                                               'sysretq', 'swapgs', '(bad)', 'ljmp', 'lcall', 'lret', 'lretq'):
            pk.flush()
            pk.b.append((6 << 5) | 0x1d)           # FUP (whole IP), then TIP.PGD: off before it
            pk.b += struct.pack('<Q', ip)
            pk.tip(0x01, None)
            break
        indirect = ops.startswith('*')
        if mnem.startswith('j') and not indirect:
            insns.append(ip)
            t = target(ops)
            if mnem in ('jmp', 'jmpq'):
                ip = t
            else:
                pk.tnt.append(0)                   # not taken
                ip += size
            continue
        if mnem in ('call', 'callq') and not indirect:
            insns.append(ip)
            stack.append(ip + size)
            ip = target(ops)
            continue
        if mnem in ('ret', 'retq'):
            insns.append(ip)
            if not stack:
                pk.tip(0x01, None)                 # TIP.PGD: off on the return from FUNCTION
                break
            pk.tnt.append(1)                       # a compressed return
            ip = stack.pop()
            continue
        if indirect:
            pk.flush()
            pk.b.append((6 << 5) | 0x1d)
            pk.b += struct.pack('<Q', ip)
            pk.tip(0x01, None)
            break
        insns.append(ip)
        ip += size
    # PAD to a whole number of 8 bytes
    while len(pk.b) % 8:
        pk.b.append(0)
    return pk.b, insns


def main():
    if len(sys.argv) != 6:
        raise SystemExit(__doc__)
    b, insns = walk(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]))
    with open(sys.argv[5] + '.hex', 'w') as f:
        f.write(b.hex())
    with open(sys.argv[5] + '.insns', 'w') as f:
        f.write(''.join('%x\n' % a for a in insns))


main()
