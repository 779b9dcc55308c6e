# Basalt: the four commands of the README. Everything runs from the repository root.
VENV ?= .venv
PY := $(VENV)/bin/python
CARGO_TEST_FLAGS ?= --release --workspace --exclude basalt-py --no-fail-fast

.PHONY: setup tour test test-full lint bench

## setup: build the Rust workspace and install the Python package into .venv. `make test`
## runs it itself (through a stamp that is remade whenever a source file changes), so a fresh
## clone needs no step before the README's two commands.
SETUP_STAMP := $(VENV)/.basalt-setup
SETUP_INPUTS := pyproject.toml Cargo.toml Cargo.lock \
	$(shell find crates python data -type f \( -name '*.rs' -o -name '*.py' -o -name '*.toml' \
	-o -name '*.csv' \) -not -path '*/target/*' 2>/dev/null)

setup: $(SETUP_STAMP)

$(SETUP_STAMP): $(SETUP_INPUTS)
	cargo build --release -p basalt-cli
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q "maturin>=1.5,<2" "numpy>=1.24" "pytest>=7" "scikit-learn>=1.3"
	$(PY) -m pip install -q "ray>=2.9"  # the basalt[ray] extra: CI runs the distributed tests
	$(VENV)/bin/maturin develop --release -q
	touch $@

## tour: the newcomer's tour (real encrypted computations, checked against plaintext); cargo
## builds what it needs
tour:
	cargo run --release -q -p basalt-cli -- tour $(TOUR_ARGS)

## test: every Rust and Python test (what CI runs), then the installed-wheel check (a wheel in a
## fresh virtual environment outside the checkout runs the README's Python and the simulator)
test: $(SETUP_STAMP)
	cargo test $(CARGO_TEST_FLAGS)
	$(PY) -m pytest -q
	VENV=$(abspath $(VENV)) scripts/check_wheel.sh

## test-full: also the ignored tests (full-size N=2^16 presets, big FFTs, the paper report):
## minutes and a few GB of memory, so not in CI
test-full:
	cargo test $(CARGO_TEST_FLAGS) -- --include-ignored --test-threads 1

## lint: formatting and clippy, as reviewers expect
lint:
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -- -D warnings
	RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps -q

## bench: the benchmark suite as JSON lines (see BENCHMARKS.md)
bench:
	cargo run --release -q -p basalt-cli -- bench all --json
