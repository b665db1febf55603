# Two commands set everything up: `make demo` and `make test`.
PY ?= python3
VENV := .venv
VPY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test bench venv clean

$(STAMP): pyproject.toml
	test -x $(VPY) || $(PY) -m venv $(VENV)
	$(VPY) -m pip install -q --upgrade pip
	$(VPY) -m pip install -q -e '.[dev]' --config-settings editable_mode=compat
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(VPY) bench/demo.py

test: $(STAMP)
	$(VPY) -m pytest tests

bench: $(STAMP)
	$(VPY) bench/run.py

clean:
	rm -rf $(VENV) build *.egg-info
