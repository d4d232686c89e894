# The two commands of the README (`make demo`, `make test`), and `make check`,
# the long checks CI runs after `make test`. Each one installs what is
# missing, configures, builds and runs.
MAKEFLAGS += --no-print-directory
BUILD_DIR ?= build
JOBS ?= $(shell nproc)

# Executions per fuzz target in `make fuzz`, the long campaign (`make check`
# runs a bounded run, a fixed number of executions: scripts/fuzz.sh --bounded).
FUZZ_RUNS ?= 10000000

.PHONY: all demo test check fuzz build deps clean

all: build

deps:
	@scripts/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@cmake --build $(BUILD_DIR) -j $(JOBS)

demo: build
	@scripts/demo.sh $(BUILD_DIR)

# A newcomer's check, under 15 minutes on 2 cores (docs/PERFORMANCE.md):
# every ctest test, then the recorder under ASan+UBSan in a few programs.
test: build
	@cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) --timeout 600
	@scripts/sanitizer-smoke.sh $(BUILD_DIR)

# Everything else CI runs after `make test` (about 30 minutes on 2 cores):
# all tests again under ASan+UBSan, the threaded ones under TSan, and a
# bounded run of every fuzz target.
check: deps
	@echo "== The tests again under AddressSanitizer + UndefinedBehaviorSanitizer, then ThreadSanitizer"
	@scripts/sanitized-tests.sh
	@echo "== A bounded run of every fuzz target"
	@scripts/fuzz.sh --bounded

fuzz: deps
	@scripts/fuzz.sh --runs $(FUZZ_RUNS)

clean:
	rm -rf $(BUILD_DIR)
