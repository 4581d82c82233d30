# Soundtrack: the two commands of the README, and a few more.
SWIFT ?= swift
DB ?= soundtrack.sqlite

.PHONY: setup demo test format build release bench clean notebooks

setup:
	@bash scripts/setup-debian.sh

## Run the demo on the embedded default (SQLite file, bundled catalog): installs, builds, runs.
## The release build links the Swift runtime statically: a one-shot process starts in ~20 ms instead of ~50.
demo: setup
	$(SWIFT) build -c release --static-swift-stdlib --product soundtrack
	.build/release/soundtrack demo --db $(DB)

## Check the formatting (scripts/format.sh --check), run the test suite (installs what it needs
## first; beside a throwaway PostgreSQL cluster on loopback that scripts/postgres-cluster.sh starts
## for it and stops after, whose URL the PostgreSQL tests read from SOUNDTRACK_TEST_POSTGRES_URL), fuzz the HTTP API against its OpenAPI document (scripts/api-fuzz.sh: schemathesis against a
## live server), execute the notebooks on a simulated population, then build the release binary the
## demo runs and run the demo on a throwaway database (the optimizer compiles what debug builds do
## not: a release-only compiler crash once broke `make demo` while the tests passed).
test: setup
	bash scripts/format.sh --check
	bash scripts/postgres-cluster.sh run $(SWIFT) test
	bash scripts/api-fuzz.sh
	$(MAKE) notebooks
	$(MAKE) release
	rm -rf out/demo-check && mkdir -p out/demo-check
	.build/release/soundtrack demo --db out/demo-check/demo.sqlite > out/demo-check/demo.txt
	@tail -n 3 out/demo-check/demo.txt

## Format the Swift files with `swift format` and .swift-format (see scripts/format.sh).
format:
	bash scripts/format.sh

build: setup
	$(SWIFT) build

release: setup
	$(SWIFT) build -c release --static-swift-stdlib --product soundtrack

## Pick benchmarks on a release build (in-process, through SQLite, one-shot process).
bench: release
	.build/release/soundtrack bench

## Simulate a small population, evaluate it (offline and online, JSON), replay its log into a database,
## and execute the notebooks headless; figures go to $(NB_OUT)/figures as PNG (git-ignored).
NB_OUT ?= out/notebooks
NB_USERS ?= 12
NB_DAYS ?= 14
NB_CATALOG ?= datasets/catalog-small.csv
NB_VENV ?= .venv-notebooks
notebooks: setup
	NB_VENV=$(NB_VENV) bash scripts/setup-notebooks.sh
	$(SWIFT) build --product soundtrack
	rm -rf $(NB_OUT) && mkdir -p $(NB_OUT)/figures $(NB_OUT)/executed
	B=$$($(SWIFT) build --show-bin-path)/soundtrack && \
	$$B simulate --users $(NB_USERS) --days $(NB_DAYS) --seed 7 --catalog $(NB_CATALOG) --out $(NB_OUT)/sim && \
	$$B eval $(NB_OUT)/sim/events.jsonl --catalog $(NB_CATALOG) --json > $(NB_OUT)/eval.json && \
	$$B eval --online --users $(NB_USERS) --days $(NB_DAYS) --seed 7 --catalog $(NB_CATALOG) --json > $(NB_OUT)/eval-online.json && \
	$$B catalog import $(NB_CATALOG) --db $(NB_OUT)/sim.sqlite > /dev/null && \
	$$B replay $(NB_OUT)/sim/events.jsonl --create-users --quiet --db $(NB_OUT)/sim.sqlite && \
	python3 scripts/sim-to-bins.py $(NB_OUT)/sim && \
	$$B eval bins $(NB_OUT)/sim/snapshots.jsonl --truth $(NB_OUT)/sim/truth.csv --catalog $(NB_CATALOG) --json > $(NB_OUT)/eval-bins.json && \
	python3 scripts/bins-neighbourhood.py $(NB_OUT)/sim/snapshots.jsonl $(NB_OUT)/sim/truth.csv --bin $$B --catalog $(NB_CATALOG) \
		--json > $(NB_OUT)/bins-neighbourhood.json
	SOUNDTRACK_EVAL_JSON=$(CURDIR)/$(NB_OUT)/eval.json SOUNDTRACK_ONLINE_JSON=$(CURDIR)/$(NB_OUT)/eval-online.json \
	SOUNDTRACK_BINS_JSON=$(CURDIR)/$(NB_OUT)/eval-bins.json \
	SOUNDTRACK_NB_DB=$(CURDIR)/$(NB_OUT)/sim.sqlite SOUNDTRACK_FIGURES=$(CURDIR)/$(NB_OUT)/figures MPLBACKEND=Agg \
	$(NB_VENV)/bin/jupyter nbconvert --to notebook --execute --ExecutePreprocessor.timeout=300 \
		--output-dir $(NB_OUT)/executed notebooks/*.ipynb
	@ls $(NB_OUT)/figures/*.png

clean:
	rm -rf .build $(DB) $(DB)-wal $(DB)-shm $(DB).email-key out/notebooks .venv-api-fuzz
