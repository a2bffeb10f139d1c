# proftop - a terminal profiler for deep-learning training.
#
#   make              build build/proftop
#   make check        unit, golden and end-to-end tests (ends with "N passed, N failed")
#   make check SAN=1  the same under AddressSanitizer + UndefinedBehaviorSanitizer
#   make bench        benchmarks, each beside a reference run
#   make valgrind     the unit tests under valgrind (also part of a full make check)
#   make golden       regenerate tests/golden/*.txt (review the diff!)
#   make docs         rewrite docs/tui.md's key table (tui/keys.c) and README's screen (a run)
#   make install      PREFIX=/usr/local DESTDIR=
#   make installcheck install into a temporary prefix and run the installed proftop
#   make deps         apt-get the Debian packages that are missing
#   make venv         .venv/: the pinned PyTorch 2.x from PyPI the tests use (tests/requirements.txt)
#   make clean

PREFIX ?= /usr/local
DESTDIR ?=
CC ?= cc
PKG_CONFIG ?= pkg-config
CUDA_HOME ?= /usr/local/cuda
VENV ?= .venv
VENV_PYTHON ?= /usr/bin/python3
VENV_STAMP := $(VENV)/.proftop-requirements
# the wheels `make venv` installs from, downloaded once (pip's own cache is
# not relied on: a registry that forbids caching leaves it empty)
WHEELS ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/proftop/wheels
VENV_PIP = $(VENV)/bin/python -m pip --disable-pip-version-check

SAN ?=
ifeq ($(SAN),)
BUILD ?= build
OPT ?= -O2
SANFLAGS :=
else
BUILD ?= build-san
OPT ?= -O1
ifeq ($(SAN),1)
SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
else
SANFLAGS := -fsanitize=$(SAN) -fno-sanitize-recover=undefined -fno-omit-frame-pointer
endif
endif

PKGS := libcjson zlib
PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null || echo -lcjson -lz)
CMOCKA_LIBS := $(shell $(PKG_CONFIG) --libs cmocka 2>/dev/null || echo -lcmocka)
# libmicrohttpd: the HTTP server of `proftop serve` (src/cli/cli_serve_http.c), proftop binary
# only. Its header at build time; the library is loaded (dlopen) when serve starts.
MHD_CFLAGS := $(shell $(PKG_CONFIG) --cflags libmicrohttpd 2>/dev/null)

WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wno-unused-parameter
CFLAGS ?= $(OPT) -g
ALL_CFLAGS := -std=c11 -D_GNU_SOURCE -pthread $(WARN) $(CFLAGS) $(SANFLAGS) \
	-Iinclude -Isrc $(PKG_CFLAGS)
LDLIBS := $(PKG_LIBS) -lpthread -lm -ldl
ALL_LDFLAGS := $(LDFLAGS) $(SANFLAGS) -pthread

# src/, one folder per stage of the pipeline (docs/architecture.md): the core
# library is all of it but the command line
CORE_SRC := $(wildcard src/model/*.c src/import/*.c src/analyze/*.c src/output/*.c src/live/*.c)
# the CLI: main.c, the shared CLI layer (src/cli/cli_*.c) and one file per command (src/cli/)
CLI_SRC := $(wildcard src/cli/*.c)
# backends/ linked into proftop (the probe's files go into libproftop.so instead)
BACKEND_SRC := $(filter-out backends/probe%,$(wildcard backends/*.c)) \
	backends/probe_cupti_find.c
# tui/: the terminal UI, the only code that includes curses (ncursesw, else ncurses).
TUI_SRC := $(wildcard tui/*.c)
CURSES_PKG := $(shell $(PKG_CONFIG) --exists ncursesw 2>/dev/null && echo ncursesw || echo ncurses)
CURSES_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(CURSES_PKG) 2>/dev/null)
CURSES_LIBS := $(shell $(PKG_CONFIG) --libs $(CURSES_PKG) 2>/dev/null || echo -lncursesw)
ifeq ($(CURSES_PKG),ncursesw)
CURSES_CFLAGS += -DPT_HAVE_NCURSESW
endif
CORE_OBJ := $(CORE_SRC:%.c=$(BUILD)/%.o)
TUI_OBJ := $(TUI_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/%.o) $(BACKEND_SRC:%.c=$(BUILD)/%.o) $(TUI_OBJ)

# The probe, libproftop.so, runs inside the training process: position
# independent, hidden by default (exports are marked), initial-exec TLS for a
# cheap hot path, and never sanitized (a preloaded ASan library cannot run in
# an uninstrumented process).
PROBE_SRC := $(wildcard backends/probe*.c) src/model/shm.c
PROBE_OBJ := $(PROBE_SRC:%.c=$(BUILD)/pic/%.o)
PROBE_CFLAGS := -std=c11 -D_GNU_SOURCE -pthread $(WARN) -O2 -g -fPIC -fvisibility=hidden \
	-ftls-model=initial-exec -Iinclude -Isrc
CUDA_INC := $(wildcard $(CUDA_HOME)/include/cupti.h)
CUDA_CFLAGS := $(if $(CUDA_INC),-DPT_HAVE_CUDA_HEADERS -I$(CUDA_HOME)/include)
PROBE_CFLAGS += $(CUDA_CFLAGS)

# A second CUPTI header set, older than CUDA_HOME's: Debian's non-free
# libcupti-dev (CUPTI 11.8) installs cupti*.h in /usr/include, and they need
# cuda.h and friends, taken from CUDA_HOME through a folder of links. The
# probe is compiled against them as well and the CUPTI unit test runs built
# against them (test_probe_cupti*_old), so both header sets keep compiling and
# the 11.8 record layouts are checked against their real structs.
CUPTI_OLD_INC ?= /usr/include
CUPTI_OLD_OK := $(if $(CUDA_INC),$(wildcard $(CUPTI_OLD_INC)/cupti.h))
CUPTI_OLD_FILES := $(wildcard $(CUPTI_OLD_INC)/cupti*.h $(CUPTI_OLD_INC)/generated_*_meta.h \
	$(CUPTI_OLD_INC)/cuda_stdint.h $(CUPTI_OLD_INC)/nvperf_*.h $(CUPTI_OLD_INC)/Openacc \
	$(CUPTI_OLD_INC)/Openmp)
CUPTI_OLD_DIR := $(BUILD)/cupti-old
CUPTI_OLD_CFLAGS := -DPT_HAVE_CUDA_HEADERS -I$(CUPTI_OLD_DIR)/include -I$(CUDA_HOME)/include
PROBE_OLD_OBJ := $(PROBE_SRC:%.c=$(CUPTI_OLD_DIR)/pic/%.o)
# The CUPTI unit tests, each also built against the other header sets.
CUPTI_TESTS := test_probe_cupti test_probe_cupti_path test_probe_cupti_fake
CUPTI_OLD_BIN := $(if $(CUPTI_OLD_OK),$(CUPTI_TESTS:%=$(BUILD)/tests/%_old))

# examples/: small programs annotated with the C API, linked weakly so they
# run with and without proftop (libproftop.so is preloaded by `proftop run`).
# One file each, but minitrain: a folder of files built into one program.
EXAMPLE_SRC := $(wildcard examples/*.c)
MINITRAIN_SRC := $(wildcard examples/minitrain/*.c)
EXAMPLE_BIN := $(EXAMPLE_SRC:examples/%.c=$(BUILD)/examples/%) $(BUILD)/examples/minitrain
EXAMPLE_CFLAGS := -std=c11 -D_GNU_SOURCE -pthread $(WARN) -O2 -g -Iinclude -DPROFTOP_WEAK
UNIT_SRC := $(wildcard tests/unit/test_*.c)
# the helpers the unit tests share (testutil.h, session_fake.h, ...)
TEST_HDRS := $(wildcard tests/unit/*.h)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
# tests/progs/: helper programs the end-to-end tests run (a forking process,
# a trace generator...), built like the examples.
PROG_SRC := $(wildcard tests/progs/*.c)
PROG_BIN := $(PROG_SRC:tests/progs/%.c=$(BUILD)/tests/progs/%)
BENCH_SRC := $(wildcard bench/bench_*.c)
BENCH_BIN := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)

# The Python helper's per-call paths in C (python/_proftop_fast*.c): a CPython
# extension against the stable ABI (3.8+), one build for every Python, built
# when Python's headers are there (python3-dev); the helper falls back to its
# pure-Python wrappers without it. Like the probe, it runs inside the job:
# never sanitized. In python/ beside libproftop.so, where the helper looks.
PY_INC := $(shell $(VENV_PYTHON) -c 'import sysconfig; print(sysconfig.get_paths()["include"])' 2>/dev/null)
PYFAST := $(if $(wildcard $(PY_INC)/Python.h),$(BUILD)/python/_proftop_fast.abi3.so)
PYFAST_CFLAGS := -std=c11 -D_GNU_SOURCE $(WARN) -Wno-missing-field-initializers -O2 -g -fPIC \
	-fvisibility=hidden -I$(PY_INC)

all: $(BUILD)/proftop $(BUILD)/libproftop.so $(EXAMPLE_BIN) $(PYFAST)

PYFAST_SRC := python/_proftop_fast.c python/_proftop_fast_step.c
$(BUILD)/python/_proftop_fast.abi3.so: $(PYFAST_SRC) python/_proftop_fast.h
	@mkdir -p $(dir $@)
	$(CC) $(PYFAST_CFLAGS) -shared -o $@ $(PYFAST_SRC)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/tui/%.o: tui/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(CURSES_CFLAGS) -MMD -MP -c $< -o $@

# The core (the reader, the store, the aggregator) at -O3: an import of the
# synthetic 242 MB trace 2 % faster than at -O2 (docs/benchmarks.md).
# Everything else, tests included, at OPT; a sanitizer build as it is.
ifeq ($(SAN),)
$(CORE_OBJ): ALL_CFLAGS += -O3
endif

$(BUILD)/libproftop_core.a: $(CORE_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/proftop: $(CLI_OBJ) $(BUILD)/libproftop_core.a
	$(CC) $(ALL_LDFLAGS) -o $@ $(CLI_OBJ) $(BUILD)/libproftop_core.a $(CURSES_LIBS) $(LDLIBS)

$(BUILD)/src/cli/cli_serve_http.o: ALL_CFLAGS += $(MHD_CFLAGS)

$(BUILD)/pic/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(PROBE_CFLAGS) -MMD -MP -c $< -o $@

$(CUPTI_OLD_DIR)/include/.links: $(CUPTI_OLD_FILES)
	@rm -rf $(dir $@) && mkdir -p $(dir $@)
	ln -s $(abspath $(CUPTI_OLD_FILES)) $(dir $@)
	@touch $@

$(CUPTI_OLD_DIR)/pic/%.o: %.c $(CUPTI_OLD_DIR)/include/.links
	@mkdir -p $(dir $@)
	$(CC) $(filter-out $(CUDA_CFLAGS),$(PROBE_CFLAGS)) $(CUPTI_OLD_CFLAGS) -MMD -MP -c $< -o $@

$(CUPTI_TESTS:%=$(BUILD)/tests/%_old): $(BUILD)/tests/%_old: tests/unit/%.c $(PROBE_OLD_OBJ) \
		$(BUILD)/libproftop_core.a $(TEST_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(CUPTI_OLD_CFLAGS) -Itests/unit \
		-DPT_TEST_CUPTI_INC='"-I$(abspath $(CUPTI_OLD_DIR))/include -I$(abspath $(CUDA_HOME))/include"' \
		-o $@ $< $(PROBE_OLD_OBJ) $(BUILD)/libproftop_core.a $(CMOCKA_LIBS) $(LDLIBS) -lrt

# `make cupti-old`: only the probe against the older headers (what CI needs at least).
cupti-old: $(PROBE_OLD_OBJ)

# A third CUPTI header set: CUPTI 12 as PyPI's wheels ship it to a torch built
# for CUDA 12 (nvidia-cuda-cupti-cu12, with cuda.h from nvidia-cuda-runtime-cu12;
# both in .venv, tests/requirements.txt). The probe is compiled against it and
# the CUPTI unit tests run built against it (test_probe_cupti*_12), as for 11.8.
CUPTI12_NV := $(firstword $(wildcard $(VENV)/lib/python3*/site-packages/nvidia))
CUPTI12_OK := $(if $(CUPTI12_NV),$(wildcard $(CUPTI12_NV)/cuda_cupti/include/cupti.h))
CUPTI12_INC := -I$(abspath $(CUPTI12_NV))/cuda_cupti/include -I$(abspath $(CUPTI12_NV))/cuda_runtime/include
CUPTI12_DIR := $(BUILD)/cupti-12
PROBE_12_OBJ := $(PROBE_SRC:%.c=$(CUPTI12_DIR)/pic/%.o)
CUPTI12_BIN := $(if $(CUPTI12_OK),$(CUPTI_TESTS:%=$(BUILD)/tests/%_12))

$(CUPTI12_DIR)/pic/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(filter-out $(CUDA_CFLAGS),$(PROBE_CFLAGS)) -DPT_HAVE_CUDA_HEADERS $(CUPTI12_INC) -MMD -MP -c $< -o $@

$(CUPTI_TESTS:%=$(BUILD)/tests/%_12): $(BUILD)/tests/%_12: tests/unit/%.c $(PROBE_12_OBJ) \
		$(BUILD)/libproftop_core.a $(TEST_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -DPT_HAVE_CUDA_HEADERS $(CUPTI12_INC) -Itests/unit \
		-DPT_TEST_CUPTI_INC='"$(CUPTI12_INC)"' \
		-o $@ $< $(PROBE_12_OBJ) $(BUILD)/libproftop_core.a $(CMOCKA_LIBS) $(LDLIBS) -lrt

$(BUILD)/libproftop.so: $(PROBE_OBJ)
	$(CC) -shared -pthread -Wl,-soname,libproftop.so -Wl,-z,nodelete -o $@ $(PROBE_OBJ) -ldl -lrt

$(BUILD)/examples/%: examples/%.c include/proftop/proftop.h
	@mkdir -p $(dir $@)
	$(CC) $(EXAMPLE_CFLAGS) -o $@ $< -lm -lpthread

$(BUILD)/examples/minitrain: $(MINITRAIN_SRC) examples/minitrain/minitrain.h include/proftop/proftop.h
	@mkdir -p $(dir $@)
	$(CC) $(EXAMPLE_CFLAGS) -o $@ $(MINITRAIN_SRC) -lm -lpthread

$(BUILD)/tests/progs/%: tests/progs/%.c include/proftop/proftop.h
	@mkdir -p $(dir $@)
	$(CC) $(EXAMPLE_CFLAGS) -o $@ $< -lm -lpthread

# Tests of the TUI link its objects (and curses).
$(BUILD)/tests/test_tui%: tests/unit/test_tui%.c $(TUI_OBJ) $(BUILD)/libproftop_core.a $(TEST_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(CURSES_CFLAGS) -Itests/unit -Itui -o $@ $< $(TUI_OBJ) $(BUILD)/libproftop_core.a $(CMOCKA_LIBS) $(CURSES_LIBS) $(LDLIBS)

$(BUILD)/bench/bench_tui%: bench/bench_tui%.c $(TUI_OBJ) $(BUILD)/libproftop_core.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(CURSES_CFLAGS) -Itui -o $@ $< $(TUI_OBJ) $(BUILD)/libproftop_core.a $(CURSES_LIBS) $(LDLIBS)

# The CUPTI translation is tested and benchmarked with the real record structs
# when CUDA's headers are present (they skip otherwise).
$(CUPTI_TESTS:%=$(BUILD)/tests/%): ALL_CFLAGS += $(CUDA_CFLAGS) \
	-DPT_TEST_CUPTI_INC='"-I$(abspath $(CUDA_HOME))/include"'
$(BUILD)/bench/bench_cupti: ALL_CFLAGS += $(CUDA_CFLAGS)

# Tests of the probe link its objects directly.
$(BUILD)/tests/test_probe%: tests/unit/test_probe%.c $(PROBE_OBJ) $(BUILD)/libproftop_core.a $(TEST_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests/unit -o $@ $< $(PROBE_OBJ) $(BUILD)/libproftop_core.a $(CMOCKA_LIBS) $(LDLIBS) -lrt

# White-box tests and benches of the backends include their .c files.
BACKEND_DEPS := $(wildcard backends/*.c backends/*.h)

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libproftop_core.a $(TEST_HDRS) $(BACKEND_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests/unit -o $@ $< $(BUILD)/libproftop_core.a $(CMOCKA_LIBS) $(LDLIBS)

# The /metrics benchmark serves over the real HTTP code (libmicrohttpd).
$(BUILD)/bench/bench_prom: bench/bench_prom.c $(BUILD)/src/cli/cli_serve_http.o $(BUILD)/libproftop_core.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(BUILD)/src/cli/cli_serve_http.o $(BUILD)/libproftop_core.a $(LDLIBS)

$(BUILD)/bench/%: bench/%.c $(BUILD)/libproftop_core.a $(BACKEND_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(BUILD)/libproftop_core.a $(LDLIBS)

tests: $(UNIT_BIN) $(CUPTI_OLD_BIN) $(CUPTI12_BIN) $(PROG_BIN) all

# libFuzzer targets (clang): the core built with -fsanitize=fuzzer,address,undefined.
FUZZ_CC ?= clang
FUZZ_FLAGS := -std=c11 -D_GNU_SOURCE -pthread -g -O1 -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=undefined -Iinclude -Isrc $(PKG_CFLAGS)
# the fuzzers need neither the live loop nor (through it) the session backend
FUZZ_CORE := $(filter-out src/live/%.c,$(CORE_SRC))
FUZZ_BIN := $(patsubst tests/fuzz/%.c,build-fuzz/%,$(wildcard tests/fuzz/fuzz_*.c))
build-fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_CORE) $(wildcard src/*/*.h include/proftop/*.h) $(BACKEND_DEPS)
	@mkdir -p build-fuzz
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $< $(FUZZ_CORE) $(LDLIBS)
fuzz: $(FUZZ_BIN)

# .venv/: a current PyTorch from PyPI beside Debian's 1.13, for the tests only
# (proftop needs no Python package). The versions are pinned in
# tests/requirements.txt; the stamp is rewritten when that file changes. The
# wheels are downloaded once into WHEELS and installed from there, so a
# second environment (another clone, CI on the same machine) downloads nothing.
# VENV_PYTHON is Debian's interpreter (python3-venv), the one python3-torch is for.

# A plain `make check` also builds the sanitizer tree and runs the suites again
# under ASan+UBSan (PT_CHECK_FAST=1 skips that second pass). It builds with a
# job per core and runs CHECK_JOBS suites at a time (most of them wait on
# sessions, screens and child processes more than they compute).
NPROC := $(shell nproc 2>/dev/null || echo 2)
CHECK_JOBS ?= $(shell echo $$(( $(NPROC) + 1 )))
check: $(VENV_STAMP)
	@$(MAKE) --no-print-directory -j$(NPROC) tests
ifeq ($(SAN)$(PT_CHECK_FAST),)
	@$(MAKE) --no-print-directory -j$(NPROC) SAN=1 tests
	@if echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n){return 0;}' | \
		$(FUZZ_CC) -fsanitize=fuzzer -x c - -o /dev/null 2>/dev/null; then \
		$(MAKE) --no-print-directory -j$(NPROC) fuzz; fi
	@BUILD=$(BUILD) SAN_BUILD=build-san JOBS=$(CHECK_JOBS) PT_VENV=$(VENV) tests/run.sh
else
	@BUILD=$(BUILD) SAN=$(SAN) JOBS=$(CHECK_JOBS) PT_VENV=$(VENV) tests/run.sh
endif

# make install into a temporary prefix, then the installed proftop run from
# elsewhere (tests/e2e/test_install.sh; make check runs it too)
installcheck: $(BUILD)/proftop $(BUILD)/libproftop.so
	@BUILD=$(BUILD) SUITES=tests/e2e/test_install.sh tests/run.sh

venv: $(VENV_STAMP)
$(VENV_STAMP): tests/requirements.txt
	@test -x $(VENV)/bin/python || $(VENV_PYTHON) -m venv $(VENV)
	@mkdir -p "$(WHEELS)"
	@$(VENV_PIP) install -q --no-index --find-links "$(WHEELS)" -r tests/requirements.txt \
		>/dev/null 2>&1 || { \
		echo "venv: downloading the wheels of tests/requirements.txt into $(WHEELS)" \
			"(about 2.9 GB, once)"; \
		$(VENV_PIP) download -q --progress-bar off -d "$(WHEELS)" -r tests/requirements.txt && \
		$(VENV_PIP) install -q --no-index --find-links "$(WHEELS)" -r tests/requirements.txt; }
	@$(VENV)/bin/python -c 'import torch; print("venv: torch", torch.__version__, "in $(VENV)")'
	@cp tests/requirements.txt $@

valgrind: $(UNIT_BIN)
	@BUILD=$(BUILD) ONLY=valgrind SAN_BUILD=none tests/run.sh

golden: $(BUILD)/proftop
	@BUILD=$(BUILD) tests/golden/update.sh

# docs/tui.md's key table comes from the key table itself (tools/keydoc.c).
$(BUILD)/tools/keydoc: tools/keydoc.c $(BUILD)/tui/keys.o
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itui -o $@ $< $(BUILD)/tui/keys.o

docs: $(BUILD)/tools/keydoc $(BUILD)/proftop
	$(BUILD)/tools/keydoc docs/tui.md
	PROFTOP=$(BUILD)/proftop tools/readme_screen.sh --update README.md

# The native import reference (C++, test-only: the project's code has none),
# where Debian's libsimdjson-dev is installed.
SIMDJSON_REF := $(if $(wildcard /usr/include/simdjson.h),$(BUILD)/bench/ref_simdjson)
$(BUILD)/bench/ref_simdjson: bench/ref_simdjson.cpp
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 -O3 -DNDEBUG -march=native -Wall -Wextra -Werror $< -lsimdjson -o $@

# orjson, the Python reference beside json.load (bench/requirements.txt), in
# .venv, from the same wheel cache as the venv's
BENCH_STAMP := $(VENV)/.bench-requirements
$(BENCH_STAMP): bench/requirements.txt $(VENV_STAMP)
	@$(VENV_PIP) install -q --no-index --find-links "$(WHEELS)" -r bench/requirements.txt \
		>/dev/null 2>&1 || { $(VENV_PIP) download -q --progress-bar off -d "$(WHEELS)" \
			-r bench/requirements.txt && \
		$(VENV_PIP) install -q --no-index --find-links "$(WHEELS)" -r bench/requirements.txt; }
	@cp bench/requirements.txt $@

bench: all $(BENCH_BIN) $(SIMDJSON_REF) $(BENCH_STAMP)
	@BUILD=$(BUILD) bench/run.sh

install: $(BUILD)/proftop $(BUILD)/libproftop.so $(EXAMPLE_BIN)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include/proftop
	install -m 0755 $(BUILD)/proftop $(DESTDIR)$(PREFIX)/bin/proftop
	install -m 0755 $(BUILD)/libproftop.so $(DESTDIR)$(PREFIX)/lib/libproftop.so
	install -m 0644 include/proftop/proftop.h $(DESTDIR)$(PREFIX)/include/proftop/proftop.h
	install -m 0644 docs/proftop.1 docs/proftop-*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -d $(DESTDIR)$(PREFIX)/share/proftop/deploy
	install -m 0644 deploy/proftop-rules.yml deploy/proftop-rules.test.yml \
		deploy/proftop-dashboard.json $(DESTDIR)$(PREFIX)/share/proftop/deploy/
	install -d $(DESTDIR)$(PREFIX)/share/proftop/python/boot
	install -m 0644 $(wildcard python/*.py) $(DESTDIR)$(PREFIX)/share/proftop/python/
	$(if $(PYFAST),install -m 0755 $(PYFAST) $(DESTDIR)$(PREFIX)/share/proftop/python/)
	install -m 0644 python/boot/sitecustomize.py $(DESTDIR)$(PREFIX)/share/proftop/python/boot/

DEB_PKGS := build-essential pkg-config libcjson-dev zlib1g-dev libncurses-dev libcmocka-dev \
	tmux procps python3 python3-dev python3-torch python3-torchvision python3-venv clang libclang-rt-14-dev valgrind strace libsimdjson-dev \
	libmicrohttpd-dev prometheus gdb libcupti-dev iproute2
# libcupti-dev (CUPTI 11.8 headers, for the second CUPTI build) is in Debian's
# non-free component, enabled in debian.sources when it is missing.
deps:
	@missing=""; for p in $(DEB_PKGS); do \
		dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	src=/etc/apt/sources.list.d/debian.sources; \
	case "$$missing" in *libcupti-dev*) \
		if [ -f $$src ] && ! grep -q '^Components:.*non-free\( \|$$\)' $$src; then \
			sed -i 's/^Components: main$$/Components: main contrib non-free non-free-firmware/' $$src; \
		fi;; esac; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		own=""; if [ ! -e /usr/sbin/policy-rc.d ]; then \
			printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d; chmod 755 /usr/sbin/policy-rc.d; own=1; fi; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
		rc=$$?; [ -n "$$own" ] && rm -f /usr/sbin/policy-rc.d; [ $$rc -eq 0 ] || exit $$rc; \
	else echo "all Debian packages present"; fi

format:
	clang-format -i $(wildcard src/*/*.[ch] include/proftop/*.h tests/unit/*.[ch] bench/*.c)

clean:
	rm -rf build build-san build-fuzz

.PHONY: all tests check installcheck valgrind golden bench install deps venv format clean fuzz docs cupti-old
.DELETE_ON_ERROR:

-include $(CORE_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(PROBE_OBJ:.o=.d) $(PROBE_OLD_OBJ:.o=.d) $(PROBE_12_OBJ:.o=.d)
