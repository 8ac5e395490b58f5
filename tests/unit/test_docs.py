#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""What README.md and docs/*.md claim exists, exists; and they stay readable.

usage: test_docs.py TOP   (run by test_docs.sh; prints one line per problem, exit 1 if any)

- README.md has fewer than 300 lines (a newcomer reads it in five minutes; the rest is in docs/);
- no table cell of README.md or docs/*.md passes 300 characters, a link's (target) not counted;
- every relative link [text](path#anchor) names a file or folder of the tree, and its #anchor a
  heading of that Markdown file (GitHub's anchor rules);
- every path in backquotes under a top folder of the tree (user/, tests/, bpf/, ...) exists, a
  glob matching at least one file (paths that a build or a run makes are left out: build*/, /tmp);
- every test named in backquotes (test_NAME, test_NAME.sh, test_NAME.c, fuzz_NAME.c) exists under
  tests/, as a source or a script.
"""
import glob
import os
import re
import sys

README_MAX_LINES = 300
CELL_MAX = 300
TOP_DIRS = ('user/', 'tests/', 'bpf/', 'include/', 'examples/', 'man/', 'docs/', 'completion/',
            'vmlinux/', '.ci/')


def anchor(heading):
    a = heading.strip().lower()
    a = re.sub(r'[^\w\- ]', '', a)
    return a.replace(' ', '-')


def anchors_of(path, cache={}):
    if path not in cache:
        found, fence = set(), False
        for line in open(path, encoding='utf-8'):
            if line.startswith('```'):
                fence = not fence
            elif not fence and line.startswith('#'):
                a = anchor(line.lstrip('#'))
                n, base = 1, a
                while a in found:  # GitHub numbers repeated headings: x, x-1, x-2
                    a = '%s-%d' % (base, n)
                    n += 1
                found.add(a)
        cache[path] = found
    return cache[path]


def split_cells(line):
    # Cells of a table row; a \\| and a | inside backquotes do not split.
    cells, cur, code = [], '', False
    i = 0
    while i < len(line):
        c = line[i]
        if c == '\\' and i + 1 < len(line):
            cur += line[i:i + 2]
            i += 2
            continue
        if c == '`':
            code = not code
        if c == '|' and not code:
            cells.append(cur)
            cur = ''
        else:
            cur += c
        i += 1
    cells.append(cur)
    return [c.strip() for c in cells[1:-1]]


def test_names(top):
    names = set()
    for d, _, files in os.walk(os.path.join(top, 'tests')):
        for f in files:
            names.add(f)
            names.add(re.sub(r'\.(sh|c|py)$', '', f))
    return names


def main(top):
    bad = []
    docs = [os.path.join(top, 'README.md')] + sorted(glob.glob(os.path.join(top, 'docs', '*.md')))
    tests = test_names(top)
    with open(docs[0], encoding='utf-8') as f:
        n = sum(1 for _ in f)
    if n >= README_MAX_LINES:
        bad.append('README.md: %d lines, the limit is under %d (move the detail to docs/)' % (n, README_MAX_LINES))
    for path in docs:
        rel = os.path.relpath(path, top)
        here = os.path.dirname(path)
        fence = False
        for no, line in enumerate(open(path, encoding='utf-8'), 1):
            where = '%s:%d' % (rel, no)
            if line.startswith('```'):
                fence = not fence
                continue
            if fence:
                continue
            if line.startswith('|'):
                for c in split_cells(line.rstrip('\n')):
                    shown = re.sub(r'\]\([^)]*\)', ']', c)
                    if len(shown) > CELL_MAX:
                        bad.append('%s: a table cell of %d characters (limit %d): %s...' % (where, len(shown), CELL_MAX, shown[:60]))
            for m in re.finditer(r'\]\(([^)\s]+)\)', line):
                target = m.group(1)
                if re.match(r'[a-z]+:', target):
                    continue
                file, _, frag = target.partition('#')
                fpath = os.path.normpath(os.path.join(here, file)) if file else path
                if not os.path.exists(fpath):
                    bad.append('%s: link to %s: no such file' % (where, target))
                elif frag and fpath.endswith('.md') and frag not in anchors_of(fpath):
                    bad.append('%s: link to %s: %s has no heading #%s' % (where, target, os.path.relpath(fpath, top), frag))
            for m in re.finditer(r'`([^`]+)`', line):
                code = m.group(1)
                for word in code.split():
                    p = word.strip('.,:;()[]\'"').rstrip('.')
                    # a program is named by its source too (examples/openat_demo: openat_demo.c)
                    if p.startswith(TOP_DIRS) and not glob.glob(os.path.join(top, p)) and not glob.glob(os.path.join(top, p + '.*')):
                        bad.append('%s: `%s` names %s: not in the tree' % (where, code, p))
                for t in re.findall(r'\b((?:test|fuzz)_\w+(?:\.sh|\.c)?)\b', code):
                    if t not in tests and os.path.basename(t) not in tests:
                        bad.append('%s: `%s` names the test %s: not under tests/' % (where, code, t))
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..', '..')))
