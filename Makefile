# The two entry points of the README's Quick start. Both set everything up first (idempotent).
.PHONY: setup demo test lint

setup:
	bash scripts/setup.sh

demo: setup
	bash scripts/demo.sh

test:
	bash scripts/setup.sh test
	PHYSCODEGYM_AUDIT_ALL=1 PHYSCODEGYM_HARBOR_PYTHON=$(CURDIR)/.venv-harbor/bin/python .venv/bin/python -m pytest -q --durations=30

lint: setup
	.venv/bin/ruff check .
