# The two entry points of the README's Quick start. Both set everything up first (idempotent).
.PHONY: setup demo test lint

setup:
	bash scripts/setup.sh

demo: setup
	bash scripts/demo.sh

# The suite on both cores (pytest-xdist; groups in tests/conftest.py), then the few tests that need the machine
# to themselves (marker `alone`), serially. PYTEST_ARGS adds options, e.g. PYTEST_ARGS="--durations=0".
# --no-loadscope-reorder: xdist would hand groups out by their number of tests; tests/conftest.py orders them by
# measured seconds, longest first, so the run does not end on one worker finishing a long group alone.
PYTEST = PHYSCODEGYM_AUDIT_ALL=1 PHYSCODEGYM_HARBOR_PYTHON=$(CURDIR)/.venv-harbor/bin/python .venv/bin/python -m pytest
TEST_WORKERS ?= 2
# Files that hold `alone` tests: collecting only these keeps the serial phase short (tests/core/test_suite.py
# fails when a file with an `alone` test is missing here).
ALONE_FILES = tests/core/test_limits.py tests/sandbox/test_reproducible.py

test:
	bash scripts/setup.sh test
	$(PYTEST) -q -n $(TEST_WORKERS) --dist loadgroup --no-loadscope-reorder -m "not alone" --durations=30 $(PYTEST_ARGS)
	$(PYTEST) -q -m alone $(PYTEST_ARGS) $(ALONE_FILES)

lint: setup
	.venv/bin/ruff check .

# A real Blender (Debian 13's 4.3.2 with Xvfb) in an ignored rootfs, run walled by scripts/blender (docs/BLENDER.md).
.PHONY: blender test-blender
blender:
	bash scripts/blender_rootfs.sh

# The real-window tests (tests/window): build the rootfs first if absent (about 8 minutes, 2.4 GB, once).
test-blender: blender
	bash scripts/setup.sh test
	PHYSCODEGYM_WINDOW_TESTS=1 .venv/bin/python -m pytest -q tests/window
