# SPDX-License-Identifier: BSD-2-Clause
#
# auxtrig: one entry point.
#   make            build everything (auxtrig, BPF objects, examples, unit tests)
#   make deps       install the Debian 12 packages auxtrig needs, mount tracefs (root), and
#                   install the timeline viewer the tests use (speedscope, npm registry)
#   make run        record the built-in demo (examples/openat_demo) and show what was captured
#   make test       build and run every test (unit tests anywhere; kernel tests and the lab as root)
#   make lab-test   the lab alone: the kernel tests and tests/lab/ in guests booted from Debian's
#                   6.12 and 6.1 kernels, with the emulated trace unit (tests/lab/vm; root)
#   make install    install to $(DESTDIR)$(prefix) (bin, man pages, bash completion, trigger header)
#   make bench      side-by-side benchmarks: recording against perf record, trigger cost
#                   against bpftrace and perf's tracepoint filters, decoding against perf script
#                   (root; not part of make test)
#   make fuzz       fuzz every tests/fuzz/fuzz_*.c target FUZZ_TIME seconds each (libFuzzer,
#                   ASan+UBSan, build-fuzz/); make test runs them FUZZ_TEST_TIME seconds each
#   make asan-test  unit tests and a few kernel tests on an ASan+UBSan build (build-asan/);
#                   part of make test
#   make soak       a long recording under load, RSS/fds/BPF objects sampled (root; not in make test)
#   V=1             show full commands
#   WERROR=0        warnings do not stop the build (the default when CFLAGS is given on the
#                   command line; make and make test build with -Werror)

OUTPUT    ?= build
prefix    ?= /usr/local
DESTDIR   ?=
HOST_ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
ARCH      ?= $(HOST_ARCH)

CC        ?= cc
CLANG     ?= clang
BPFTOOL   ?= bpftool
PKG_CONFIG ?= pkg-config

# Cross build: ARCH=arm64 on a machine of another architecture (make arm64-build does it in
# build-arm64/). Debian's cross compiler (CROSS_COMPILE, gcc-aarch64-linux-gnu) against a sysroot
# of Debian's arm64 -dev packages that cross/sysroot.sh fetches and unpacks into
# $(OUTPUT)/sysroot (never installed); BPF objects against the checked-in vmlinux/arm64/vmlinux.h,
# since this machine's BTF describes another architecture's kernel.
ifneq ($(ARCH),$(HOST_ARCH))
ifneq ($(ARCH),arm64)
$(error ARCH=$(ARCH): the cross build is for arm64 (ARCH=arm64))
endif
CROSS_COMPILE ?= aarch64-linux-gnu-
SYSROOT   ?= $(OUTPUT)/sysroot
ifeq ($(origin CC),default)
CC        := $(CROSS_COMPILE)gcc
endif
CC        += --sysroot=$(SYSROOT)
SYSROOT_STAMP := $(SYSROOT)/.stamp
PKG_CONFIG := PKG_CONFIG_SYSROOT_DIR=$(SYSROOT) \
              PKG_CONFIG_LIBDIR=$(SYSROOT)/usr/lib/aarch64-linux-gnu/pkgconfig:$(SYSROOT)/usr/share/pkgconfig pkg-config
VMLINUX_BTF :=
endif

# Intel PT decoding needs libipt, which Debian builds for x86 only: LIBIPT=0 (the default for
# other architectures) builds auxtrig without it; `auxtrig script` then refuses Intel PT files with
# one line saying so, and the PT decoder's tests and fuzz target are left out of the build.
# LIBIPT=1 on arm64 needs a libipt built from its sources.
LIBIPT    ?= $(if $(filter x86,$(ARCH)),1,0)

# Debian 12 packages: build tools, libraries, the perf that tests read our files with,
# bpftrace, which make bench measures trigger cost against; lld (arm64 binaries the symbol tests
# build) and valgrind (the leak check of auxtrig script); headless Chromium with its WebDriver,
# which the timeline test loads `script --format=chrome` output into; libclang-rt-14-dev for
# libFuzzer and clang's sanitizer runtimes (make fuzz, make test).
DEB_PKGS  := make gcc clang llvm pkg-config bpftool libbpf-dev libelf-dev zlib1g-dev \
             libipt-dev libopencsd-dev libcmocka-dev linux-perf jq bpftrace \
             systemtap-sdt-dev libdw-dev lld valgrind chromium chromium-driver strace time \
             libclang-rt-14-dev git
# The lab (tests/lab/vm): QEMU, a static busybox for the guests' initramfs, and what Kbuild needs
# to build the trace unit. The kernels and their headers are Debian packages too, fetched with
# apt-get download and unpacked into $(OUTPUT)/lab by tests/lab/vm: installing linux-headers-6.12
# would install its kernel image on this machine.
DEB_PKGS  += qemu-system-x86 busybox-static pahole gcc-12
# The arm64 lab and cross build: QEMU's arm64 system emulator and the arm64 cross compiler (its
# sysroot and the guests' root are Debian arm64 packages unpacked under the build directory).
DEB_PKGS  += qemu-system-arm gcc-aarch64-linux-gnu
# Debian's arm64 archive has neither libipt (Intel PT's decoder: x86 only, LIBIPT above) nor a
# cross compiler for arm64 itself: make deps on an arm64 machine leaves them out.
ifeq ($(HOST_ARCH),arm64)
DEB_PKGS  := $(filter-out libipt-dev gcc-aarch64-linux-gnu,$(DEB_PKGS))
endif
# The timeline viewer the browser test drives: speedscope from the npm registry (make deps
# needs to reach it; npm from Debian's nodejs/npm when the machine has no npm), installed into
# the build directory, never into the tree. It runs offline from there.
SPEEDSCOPE := speedscope@1.25.0
VIEWER     := $(OUTPUT)/viewer/node_modules/speedscope/dist/release/index.html

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

# Recursive (=) so that `make deps test` works on a machine where libbpf-dev is not installed yet.
LIBBPF_CFLAGS = $(shell $(PKG_CONFIG) --cflags libbpf 2>/dev/null)
LIBBPF_LIBS   = $(shell $(PKG_CONFIG) --libs libbpf 2>/dev/null || echo -lbpf -lelf -lz)

# -Werror in the developers' and CI's builds (make, make test); not in a packager's build with
# its own flags (make CFLAGS=..., or CFLAGS in the environment), where a new warning of another
# compiler or option must not stop it, nor with WERROR=0. The sanitizer and fuzz builds inherit
# the top make's choice.
WERROR    ?= $(if $(filter command line environment,$(origin CFLAGS)),0,1)
WERROR_FLAG := $(if $(filter 1,$(WERROR)),-Werror)
WARN      := -Wall -Wextra $(WERROR_FLAG) -Wno-unused-parameter -Wno-missing-field-initializers -Wno-format-truncation
# clang (make fuzz-build) does not know gcc's -Wformat-truncation.
WARN      += $(if $(findstring clang,$(shell $(CC) --version 2>/dev/null | head -n 1)),-Wno-unknown-warning-option)
CFLAGS    ?= -O2 -g
ALL_CFLAGS = $(CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE -Iinclude -I$(OUTPUT) $(LIBBPF_CFLAGS)
LDLIBS     = $(LIBBPF_LIBS) -ldw -lelf -lz $(if $(filter 1,$(LIBIPT)),-lipt) -lopencsd_c_api -lopencsd
ALL_CFLAGS += $(if $(filter 1,$(LIBIPT)),,-DAUXTRIG_NO_LIBIPT)

# The multiarch directory: <bpf/usdt.bpf.h> includes <linux/errno.h>, which needs <asm/errno.h>.
# Kernels since 6.19 are built with -fms-extensions: their BTF has unnamed members of named struct
# types, which bpftool 7.1 writes into vmlinux.h as `struct NAME;` (vmlinux/arm64/vmlinux.h, 7.3).
BPF_CFLAGS = -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Iinclude -I$(OUTPUT)/vmlinux \
             -fms-extensions -Wno-microsoft-anon-tag \
             -idirafter $(SYSROOT)/usr/include/$(shell $(CC) -print-multiarch 2>/dev/null) \
             -Wall $(WERROR_FLAG) -Wno-unused-function

# vmlinux.h: from the running kernel's BTF when there is one, else the checked-in fallback.
VMLINUX_BTF ?= $(wildcard /sys/kernel/btf/vmlinux)
VMLINUX_H   := $(OUTPUT)/vmlinux/vmlinux.h

# One object per bpf/*.bpf.c; the gate's programs are several files, bpf/gate/*.bpf.c, compiled
# apart and linked into one object (bpftool gen object, as retsnoop does): one skeleton, gate.skel.h.
# Linked in this order, the way a hit flows, which is the order of the object's programs
# (gate__describe() lists them so).
GATE_SRCS  := $(addprefix bpf/gate/,state.bpf.c tracepoint.bpf.c thread.bpf.c uprobe_window.bpf.c \
              point.bpf.c aux_veto.bpf.c)
$(if $(filter-out $(GATE_SRCS),$(wildcard bpf/gate/*.bpf.c)),$(error bpf/gate/: add $(filter-out \
	$(GATE_SRCS),$(wildcard bpf/gate/*.bpf.c)) to GATE_SRCS))
GATE_PARTS := $(patsubst bpf/gate/%.bpf.c,$(OUTPUT)/bpf/gate/%.bpf.o,$(GATE_SRCS))
BPF_NAMES  := $(patsubst bpf/%.bpf.c,%,$(wildcard bpf/*.bpf.c)) gate
BPF_OBJS   := $(patsubst %,$(OUTPUT)/bpf/%.bpf.o,$(BPF_NAMES))
SKELS      := $(patsubst %,$(OUTPUT)/skel/%.skel.h,$(BPF_NAMES))

# user/ by layer: cmd/ (front-ends) -> record/, decode/ -> format/, lang/ -> sys/.
USER_SRCS  := $(wildcard user/*/*.c)
# Without libipt: no Intel PT decoder (script.c says so when asked to decode Intel PT).
IPT_SRCS   := user/decode/ipt_decoder.c user/decode/script_pt.c
USER_SRCS  := $(if $(filter 1,$(LIBIPT)),$(USER_SRCS),$(filter-out $(IPT_SRCS),$(USER_SRCS)))
USER_OBJS  := $(patsubst user/%.c,$(OUTPUT)/obj/user/%.o,$(USER_SRCS))
LIB_OBJS   := $(filter-out $(OUTPUT)/obj/user/cmd/main.o,$(USER_OBJS))
LIB        := $(OUTPUT)/libauxtrig.a
BIN        := $(OUTPUT)/auxtrig

UNIT_SRCS  := $(wildcard tests/unit/test_*.c)
UNIT_SRCS  := $(if $(filter 1,$(LIBIPT)),$(UNIT_SRCS),$(filter-out tests/unit/test_decode.c tests/unit/test_script_pt_order.c,$(UNIT_SRCS)))
UNIT_BINS  := $(patsubst tests/unit/%.c,$(OUTPUT)/tests/%,$(UNIT_SRCS))
TEST_HELPERS := $(filter-out tests/unit/test_%,$(wildcard tests/unit/*.c))

KTEST_SRCS := $(wildcard tests/kernel/test_*.c)
KTEST_BINS := $(patsubst tests/kernel/%.c,$(OUTPUT)/tests/kernel/%,$(KTEST_SRCS))

# Input generators of the benches (tests/bench/*.c).
BENCH_BINS := $(patsubst tests/bench/%.c,$(OUTPUT)/tests/bench/%,$(wildcard tests/bench/*.c))

EXAMPLE_SRCS := $(wildcard examples/*.c)
EXAMPLE_BINS := $(patsubst examples/%.c,$(OUTPUT)/examples/%,$(EXAMPLE_SRCS))
# User trigger programs (--trigger-prog), written against include/auxtrig/trigger.bpf.h.
TRIGGER_SRCS := $(wildcard examples/triggers/*.bpf.c)
TRIGGER_OBJS := $(patsubst examples/triggers/%.bpf.c,$(OUTPUT)/examples/triggers/%.bpf.o,$(TRIGGER_SRCS))
# Trigger programs the kernel tests load.
TRIGGER_OBJS += $(patsubst tests/kernel/%.bpf.c,$(OUTPUT)/tests/kernel/%.bpf.o,$(wildcard tests/kernel/*.bpf.c))

# Sanitizer builds, each in its own directory: every defect ASan or UBSan sees is fatal.
SAN_CFLAGS   := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
ASAN_OUTPUT  ?= build-asan
FUZZ_OUTPUT  ?= build-fuzz
# Kernel tests make test also runs on the ASan+UBSan build: a uprobe recording, snapshots and the
# control FIFO, --min-duration windows, bad inputs, signals (the command's tree stopped with the
# run), a full disk, and targets that exit as zombies.
ASAN_KTESTS  ?= test_record_uprobe.sh test_record_snapshot.sh test_record_actions.sh \
                test_record_errors.sh test_record_faults.sh test_record_signals.sh test_record_gone_targets.sh
# Unit tests left out of the ASan+UBSan run: valgrind cannot run an ASan binary (there,
# LeakSanitizer checks the same leaks in every test); test_script_cs bounds the decoder's peak
# RSS and traces its file reads with strace, which ASan's shadow memory and quarantine break
# (its windows_stream and code_from_memory cases fail on that build only; to be split by decode).
ASAN_UNIT_EXCLUDE ?= test_script_leaks test_script_cs

# Fuzz targets: tests/fuzz/fuzz_<name>.c, libFuzzer + ASan + UBSan (conventions in tests/fuzz/README.md).
FUZZ_SRCS    := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_SRCS    := $(if $(filter 1,$(LIBIPT)),$(FUZZ_SRCS),$(filter-out tests/fuzz/fuzz_ipt.c,$(FUZZ_SRCS)))
FUZZ_BINS    := $(patsubst tests/fuzz/%.c,$(OUTPUT)/fuzz/%,$(FUZZ_SRCS))
FUZZ_HELPERS := $(filter-out tests/fuzz/fuzz_%,$(wildcard tests/fuzz/*.c))
FUZZ_TIME    ?= 300
FUZZ_TEST_TIME ?= 10
FUZZ_TARGETS ?=

.PHONY: all deps run test unit-test kernel-test lab-test install uninstall bench clean \
        asan-build asan-test fuzz-build fuzz-bins fuzz soak arm64-build
.DELETE_ON_ERROR:
.SECONDARY: $(BPF_OBJS) $(GATE_PARTS)

all: $(BIN) $(UNIT_BINS) $(KTEST_BINS) $(EXAMPLE_BINS) $(TRIGGER_OBJS) $(BENCH_BINS)

deps:
	$(Q)if ! dpkg -s $(DEB_PKGS) >/dev/null 2>&1; then \
		apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $(DEB_PKGS); \
	fi
	$(Q)if [ -d /sys/kernel/tracing ] && ! mountpoint -q /sys/kernel/tracing; then \
		mount -t tracefs nodev /sys/kernel/tracing; \
	fi
	$(Q)command -v npm >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends nodejs npm
	$(Q)if [ ! -f $(VIEWER) ]; then \
		mkdir -p $(OUTPUT)/viewer && npm install --silent --no-audit --no-fund --prefix $(OUTPUT)/viewer $(SPEEDSCOPE); \
	fi

$(OUTPUT)/vmlinux/vmlinux.h:
	$(Q)mkdir -p $(@D)
ifneq ($(VMLINUX_BTF),)
	$(call msg,GEN,$@)
	$(Q)$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $@
else
	$(call msg,CP,$@)
	$(Q)cp vmlinux/$(ARCH)/vmlinux.h $@
endif

$(OUTPUT)/bpf/%.bpf.o: bpf/%.bpf.c $(VMLINUX_H)
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -MMD -MP -MF $(@:.o=.d) -MT $@ -c $< -o $@.tmp
	$(Q)$(BPFTOOL) gen object $@ $@.tmp
	$(Q)rm -f $@.tmp

$(GATE_PARTS): $(OUTPUT)/bpf/gate/%.bpf.o: bpf/gate/%.bpf.c $(VMLINUX_H)
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -Ibpf -MMD -MP -MF $(@:.o=.d) -MT $@ -c $< -o $@

$(OUTPUT)/bpf/gate.bpf.o: $(GATE_PARTS)
	$(call msg,GEN-OBJ,$@)
	$(Q)$(BPFTOOL) gen object $@ $^

$(OUTPUT)/skel/%.skel.h: $(OUTPUT)/bpf/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst -,_,$*)_bpf > $@

# Every user object may include any skeleton: explicit edges, no guessing.
$(USER_OBJS): $(SKELS)

# The cross build's sysroot, made before anything is compiled against it.
ifeq ($(SYSROOT),$(OUTPUT)/sysroot)
$(SYSROOT_STAMP): cross/sysroot.sh cross/apt.sh
	$(Q)cross/sysroot.sh $(OUTPUT)

$(USER_OBJS) $(UNIT_BINS) $(KTEST_BINS) $(EXAMPLE_BINS) $(BENCH_BINS) $(VMLINUX_H): | $(SYSROOT_STAMP)
endif

$(OUTPUT)/obj/user/%.o: user/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(LIB): $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@
	$(Q)ar rcs $@ $^

$(BIN): $(OUTPUT)/obj/user/cmd/main.o $(LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

# Several sources in one command: -MMD would keep only the last one's headers
# (one .d named after -o), so the dependencies are listed first, for all of them.
$(OUTPUT)/tests/%: tests/unit/%.c $(TEST_HELPERS) $(LIB) $(SKELS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests/unit -MM -MP -MT $@ $< $(TEST_HELPERS) >$@.d
	$(Q)$(CC) $(ALL_CFLAGS) -Itests/unit -o $@ $< $(TEST_HELPERS) $(LIB) $(LDLIBS) -lcmocka

$(OUTPUT)/tests/bench/%: tests/bench/%.c tests/unit/cs_fixture.c $(LIB)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests/unit -MMD -MP -o $@ $< tests/unit/cs_fixture.c $(LIB) $(LDLIBS)

# Kernel tests may drive the recorder onto the model of the kernel's AUX ring.
KTEST_HELPERS := tests/unit/aux_model.c

$(OUTPUT)/tests/kernel/%: tests/kernel/%.c $(KTEST_HELPERS) $(LIB) $(SKELS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests/unit -MM -MP -MT $@ $< $(KTEST_HELPERS) >$@.d
	$(Q)$(CC) $(ALL_CFLAGS) -Itests/unit -o $@ $< $(KTEST_HELPERS) $(LIB) $(LDLIBS)

$(OUTPUT)/examples/triggers/%.bpf.o: examples/triggers/%.bpf.c $(VMLINUX_H)
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -MMD -MP -MF $(@:.o=.d) -MT $@ -c $< -o $@

$(OUTPUT)/tests/kernel/%.bpf.o: tests/kernel/%.bpf.c $(VMLINUX_H)
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -MMD -MP -MF $(@:.o=.d) -MT $@ -c $< -o $@

# stack_demo's known call path is read back by a frame-pointer unwind (-g)
$(OUTPUT)/examples/stack_demo: EXAMPLE_CFLAGS = -fno-omit-frame-pointer

$(OUTPUT)/examples/%: examples/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O1 -g -Wall -Wextra $(WERROR_FLAG) $(EXAMPLE_CFLAGS) -static -pthread -o $@ $<

run: deps all
	$(Q)./examples/demo.sh $(OUTPUT)

# Every test: the unit and kernel tests, the same on the ASan+UBSan build (unit tests and
# ASAN_KTESTS), the fuzz targets' crashers replayed and each target fuzzed FUZZ_TEST_TIME seconds.
test: all asan-build fuzz-build $(if $(filter arm64,$(HOST_ARCH)),,arm64-build)
	$(Q)./tests/run.sh --asan $(ASAN_OUTPUT) --asan-kernel-tests "$(ASAN_KTESTS)" \
		--asan-exclude "$(ASAN_UNIT_EXCLUDE)" --fuzz $(FUZZ_OUTPUT) --fuzz-time $(FUZZ_TEST_TIME) \
		--arm64 $(ARM64_OUTPUT) $(OUTPUT)

unit-test: all
	$(Q)./tests/run.sh --unit-only $(OUTPUT)

kernel-test: all
	$(Q)./tests/run.sh --kernel-only $(OUTPUT)

# auxtrig for arm64, cross-built in $(ARM64_OUTPUT) (make test builds it; the arm64 lab guests run
# its tests). On an arm64 machine, plain make builds for arm64 natively.
ARM64_OUTPUT ?= build-arm64
arm64-build:
	$(Q)$(MAKE) --no-print-directory OUTPUT=$(ARM64_OUTPUT) ARCH=arm64 WERROR=$(WERROR) all

asan-build:
	$(Q)$(MAKE) --no-print-directory OUTPUT=$(ASAN_OUTPUT) CFLAGS="$(SAN_CFLAGS)" WERROR=$(WERROR) all

asan-test: asan-build
	$(Q)./tests/run.sh --sanitized-only --asan $(ASAN_OUTPUT) --asan-kernel-tests "$(ASAN_KTESTS)" \
		--asan-exclude "$(ASAN_UNIT_EXCLUDE)" $(OUTPUT)

# libFuzzer needs clang; the library is instrumented for coverage (fuzzer-no-link), the targets link it.
fuzz-build:
	$(Q)$(MAKE) --no-print-directory OUTPUT=$(FUZZ_OUTPUT) CC=$(CLANG) WERROR=$(WERROR) \
		CFLAGS="$(SAN_CFLAGS) -fsanitize=fuzzer-no-link" fuzz-bins

fuzz-bins: $(FUZZ_BINS)

$(OUTPUT)/fuzz/%: tests/fuzz/%.c $(FUZZ_HELPERS) $(LIB) $(SKELS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -fsanitize=fuzzer -Itests/fuzz -Itests/unit -MMD -MP -o $@ $< $(FUZZ_HELPERS) \
		$(LIB) $(LDLIBS)

# make soak SOAK_SECONDS=600: a flight recording under a getppid() storm with snapshots and control
# commands; RSS, fds and BPF objects sampled, growth fails (tests/soak/soak.sh). Root; nice it.
SOAK_SECONDS ?= 600
soak: all
	$(Q)SOAK_SECONDS=$(SOAK_SECONDS) ./tests/soak/soak.sh $(OUTPUT)

# make fuzz FUZZ_TIME=3600 FUZZ_TARGETS="expr pdata": replay the crashers, then fuzz each target.
fuzz: fuzz-build
	$(Q)./tests/fuzz/run.sh $(FUZZ_OUTPUT) $(FUZZ_TIME) $(FUZZ_TARGETS)

lab-test: all $(if $(filter arm64,$(HOST_ARCH)),,arm64-build)
	$(Q)./tests/run.sh --lab-only --arm64 $(ARM64_OUTPUT) $(OUTPUT)

bench: deps all
	$(Q)./tests/bench/bench.sh $(OUTPUT)
	$(Q)echo
	$(Q)./tests/bench/trigger_cost.sh $(OUTPUT)
	$(Q)echo
	$(Q)./tests/bench/attach.sh $(OUTPUT)
	$(Q)echo
	$(Q)./tests/bench/decode.sh $(OUTPUT)

install: $(BIN)
	$(call msg,INSTALL,$(DESTDIR)$(prefix))
	$(Q)install -d $(DESTDIR)$(prefix)/bin $(DESTDIR)$(prefix)/share/man/man1 $(DESTDIR)$(prefix)/share/man/man7
	$(Q)install -m 0755 $(BIN) $(DESTDIR)$(prefix)/bin/auxtrig
	$(Q)install -m 0644 man/*.1 $(DESTDIR)$(prefix)/share/man/man1/
	$(Q)install -m 0644 man/*.7 $(DESTDIR)$(prefix)/share/man/man7/
	$(Q)install -d $(DESTDIR)$(prefix)/share/bash-completion/completions
	$(Q)install -m 0644 completion/auxtrig.bash $(DESTDIR)$(prefix)/share/bash-completion/completions/auxtrig
	$(Q)install -d $(DESTDIR)$(prefix)/include/auxtrig
	$(Q)install -m 0644 include/auxtrig/trigger.bpf.h include/auxtrig/gate_maps.bpf.h include/auxtrig/gate_abi.h \
		$(VMLINUX_H) $(DESTDIR)$(prefix)/include/auxtrig/

uninstall:
	$(Q)rm -f $(DESTDIR)$(prefix)/bin/auxtrig $(DESTDIR)$(prefix)/share/bash-completion/completions/auxtrig $(patsubst man/%,$(DESTDIR)$(prefix)/share/man/man1/%,$(wildcard man/*.1)) \
		$(patsubst man/%,$(DESTDIR)$(prefix)/share/man/man7/%,$(wildcard man/*.7))

clean:
	$(call msg,CLEAN,$(OUTPUT) $(ASAN_OUTPUT) $(FUZZ_OUTPUT) $(ARM64_OUTPUT))
	$(Q)rm -rf $(OUTPUT) $(ASAN_OUTPUT) $(FUZZ_OUTPUT) $(ARM64_OUTPUT)

# gate.bpf.d: left by builds from before bpf/gate/ (it names bpf/gate.bpf.c, gone since).
-include $(filter-out $(OUTPUT)/bpf/gate.bpf.d,$(wildcard $(OUTPUT)/obj/user/*/*.d $(OUTPUT)/bpf/*.d $(OUTPUT)/bpf/gate/*.d $(OUTPUT)/tests/*.d $(OUTPUT)/tests/kernel/*.d \
	$(OUTPUT)/tests/bench/*.d \
	$(OUTPUT)/examples/triggers/*.d $(OUTPUT)/fuzz/*.d))
