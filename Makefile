# The two commands a newcomer needs: `make run` and `make test` (see README).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
MANAGE := $(BIN)/python manage.py

# Local work runs with DEBUG on unless the environment says otherwise; production runs
# gunicorn with its own environment, never make.
export DEBUG ?= true

.PHONY: install run test lint lock clean

$(BIN)/.installed: requirements.lock
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements.lock
	touch $@

install: $(BIN)/.installed

run: install
	$(MANAGE) migrate --noinput
	$(MANAGE) seed_hours --days 90
	$(MANAGE) create_demo_accounts
	@echo "Serving the Museum API at http://127.0.0.1:8000/v1.1/ (docs: /v1.1/docs/, admin: /admin/)"
	$(MANAGE) runserver 127.0.0.1:8000

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

test: lint
	$(MANAGE) check
	$(MANAGE) makemigrations --check --dry-run
	$(BIN)/pytest

# Regenerate the lockfile after changing dependencies in pyproject.toml.
lock:
	$(PYTHON) -m pip install --quiet uv
	$(PYTHON) -m uv pip compile pyproject.toml --extra dev --python-version 3.11 \
		--no-header -o requirements.lock

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache staticfiles
