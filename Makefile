# Two commands on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
RELEASE ?= 0.5.23
OUT ?= out

.PHONY: setup browser run test bench docs site verify flag-history shipped-releases clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test,site]'
	touch $@

setup: $(VENV)/.installed

run: setup
	$(PY) -m extractor extract --release $(RELEASE) -o $(OUT)

# The docs-site browser test drives Debian's Chromium (Playwright's own browser download is not used):
# installed here when it is missing, with the system's package manager (as root), else a one-line error.
CHROMIUM := /usr/bin/chromium
browser:
	@test -x $(CHROMIUM) || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "make: installing Debian's chromium for the browser test"; \
	    DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else \
	    echo "make: $(CHROMIUM) is missing; install Debian's chromium (apt-get install chromium) as root" >&2; exit 2; \
	  fi; }

test: setup browser
	$(PY) -m pytest -q

docs: setup
	$(PY) -m extractor render --release $(RELEASE) -o $(OUT)/site/$(RELEASE)

# The docs site of the releases SITE_RELEASES, built into $(OUT)/docs-site/public (see README "Docs site").
SITE_RELEASES ?= 0.5.18..0.5.23
site: setup
	$(PY) -m extractor site --releases $(SITE_RELEASES) -o $(OUT)/docs-site --build

bench: setup
	$(PY) bench/run.py

# Rebuild the shipped flag history (which releases accept each option; check words unknown options
# with it) from every release on PyPI: about 10 minutes, then commit extractor/data/flag_history.json.
flag-history: setup
	$(PY) -m extractor flag-history --all -o extractor/data/flag_history.json

# Rewrite the rule sets shipped in the package (the first check or explain of these releases reads
# them: no download, no extraction); a test holds them equal to a fresh extraction, so run this when
# the extractor's output changes, then commit extractor/data/releases.
SHIPPED_RELEASES ?= 0.5.22 0.5.23
shipped-releases: setup
	$(PY) tools/ship_releases.py $(SHIPPED_RELEASES)

# Differential test against the real SGLang (a developer tool, not part of `make test`/CI; see
# verify/README.md): SGLang 0.5.23 in its own venv, never in $(VENV).
SGREAL_VENV ?= /tmp/sgreal
VERIFY_RELEASE := 0.5.23
VERIFY_RULES := $(OUT)/$(VERIFY_RELEASE)/rules.json
# The machines the user commands run on (simulated GPU nodes, see verify/README.md), and at most
# how many user cases per machine (0 = all; every base command is kept, then an even sample).
VERIFY_PROFILES ?= cpu,H100,B200,A100
VERIFY_USER_BUDGET ?= 0

verify: setup
	@test -f $(VERIFY_RULES) || $(MAKE) run RELEASE=$(VERIFY_RELEASE)
	@$(SGREAL_VENV)/bin/python -c 'import sglang' 2>/dev/null || { \
	  echo "verify: installing sglang==$(VERIFY_RELEASE) into $(SGREAL_VENV) (~11 GB, several minutes)"; \
	  $(PYTHON) -m venv $(SGREAL_VENV) && $(SGREAL_VENV)/bin/pip install -q sglang==$(VERIFY_RELEASE); }
	$(PY) verify/models.py
	$(PY) verify/cases.py --rules $(VERIFY_RULES) --source all
	$(PY) verify/compare.py --rules $(VERIFY_RULES) --sgreal $(SGREAL_VENV) --source all \
	  --profiles $(VERIFY_PROFILES) --budget $(VERIFY_USER_BUDGET)

clean:
	rm -rf $(VENV) build *.egg-info
