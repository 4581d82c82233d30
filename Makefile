# Soundtrack: the two commands of the README, and a few more.
SWIFT ?= swift
DB ?= soundtrack.sqlite

.PHONY: setup demo test build release bench clean

setup:
	@bash scripts/setup-debian.sh

## Run the demo on the embedded default (SQLite file, bundled catalog): installs, builds, runs.
## The release build links the Swift runtime statically: a one-shot process starts in ~20 ms instead of ~50.
demo: setup
	$(SWIFT) build -c release --static-swift-stdlib --product soundtrack
	.build/release/soundtrack demo --db $(DB)

## Run the test suite (installs what it needs first).
test: setup
	$(SWIFT) test

build: setup
	$(SWIFT) build

release: setup
	$(SWIFT) build -c release --static-swift-stdlib --product soundtrack

## Pick benchmarks on a release build (in-process, through SQLite, one-shot process).
bench: release
	.build/release/soundtrack bench

clean:
	rm -rf .build $(DB) $(DB)-wal $(DB)-shm
