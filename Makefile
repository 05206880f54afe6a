# A thin wrapper over CMake. `make demo` builds and runs ridge's main job on built-in defaults;
# `make test` builds and runs the fast test suite (what CI runs).
BUILD ?= build
JOBS  ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all build demo test test-full bench install sanitize tsan fuzz clean

all: build

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

build: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

# ridge's main job on built-in defaults: what this machine is, then an MLP trained on
# Fashion-MNIST (784-128-10, AdamW, 10 epochs: about 10-20 s on 2 cores).
demo: build
	./$(BUILD)/ridge info
	./$(BUILD)/ridge train mlp

test: build
	cd $(BUILD) && ctest -L fast --output-on-failure -j $(JOBS)

test-full: build
	cd $(BUILD) && ctest --output-on-failure

bench: build
	./$(BUILD)/ridge bench all

install: build
	cmake --install $(BUILD) $(if $(PREFIX),--prefix $(PREFIX),)

# The whole test suite under AddressSanitizer + UndefinedBehaviorSanitizer, and ThreadSanitizer.
sanitize:
	$(MAKE) test BUILD=build-asan CMAKE_FLAGS="-DRIDGE_SANITIZE=address,undefined -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRIDGE_BUILD_BENCH=OFF"

# ThreadSanitizer over the library's tests; the CLI end-to-end scripts (cli-*) run the same
# code paths single-file and take minutes under TSan, so they are left to the other builds.
tsan:
	$(MAKE) build BUILD=build-tsan CMAKE_FLAGS="-DRIDGE_SANITIZE=thread -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRIDGE_BUILD_BENCH=OFF"
	cd build-tsan && ctest -L fast -E '^cli-' --output-on-failure -j $(JOBS)

# libFuzzer targets (clang, ASan + UBSan): each runs FUZZ_SECONDS on its corpus in
# build-fuzz/fuzz/corpus (kept between runs); findings land in build-fuzz/fuzz/crashes.
FUZZ_SECONDS ?= 60
FUZZ_CC ?= clang-14
FUZZ_TARGETS = idx idx-gz mlp-checkpoint cnn-checkpoint qmlp-checkpoint llmc-model llmc-tokens llmc-tokenizer llmc-state cli shapes roofline bpe qcnn-checkpoint
fuzz:
	CC=$(FUZZ_CC) cmake -S . -B build-fuzz -DRIDGE_FUZZ=ON -DRIDGE_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build build-fuzz -j $(JOBS) --target fuzz-make-seeds $(addprefix fuzz-,$(FUZZ_TARGETS))
	@fail=0; for t in $(FUZZ_TARGETS); do echo "== fuzz-$$t ($(FUZZ_SECONDS) s)"; \
	  fuzz/run.sh build-fuzz/fuzz $$t $(FUZZ_SECONDS) >build-fuzz/fuzz/$$t.log 2>&1 || fail=1; \
	  grep -E 'number_of_executed_units|ERROR|SUMMARY|Test unit written' build-fuzz/fuzz/$$t.log; \
	done; exit $$fail

clean:
	rm -rf build build-asan build-tsan build-fuzz
