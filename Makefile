# The two commands a newcomer needs: `make run` and `make test` (see README).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
MANAGE := $(BIN)/python manage.py
# The port `make run` serves on, on 127.0.0.1: `make run PORT=8080`.
PORT ?= 8000

# Local work runs with DEBUG on unless the environment says otherwise; production runs
# gunicorn with its own environment, never make.
export DEBUG ?= true

.PHONY: install messages run test lint conformance bench flood passes drop lock clean

# Development and tests: the service's pins plus the test tools (requirements-dev.lock).
# Production installs requirements.lock alone (docs/deployment.md).
$(BIN)/.installed: requirements.lock requirements-dev.lock
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements-dev.lock
	touch $@

# The translations: locale/*/LC_MESSAGES/django.po compiled to the .mo files Django reads, which
# are generated, never committed. Babel's compiler (in requirements.lock): no GNU gettext needed.
messages: $(BIN)/.installed
	$(BIN)/pybabel --quiet compile --directory locale --domain django

install: $(BIN)/.installed messages

# The links in emails and PDFs (cancel, membership card, OCTO's PDF) follow the port, unless
# MUSEUM_PUBLIC_URL is set. What make run serves with is kept in .env for the commands run here
# later (manage.py reads it): `.venv/bin/python manage.py ...` then works as typed.
run: export MUSEUM_PUBLIC_URL ?= http://127.0.0.1:$(PORT)
# A webhook receiver of your own on this machine may be subscribed (docs/webhooks.md).
run: export MUSEUM_WEBHOOK_ALLOWED_HOSTS ?= 127.0.0.1,localhost
run: install
	$(BIN)/python scripts/local_settings.py DEBUG=$(DEBUG) MUSEUM_PUBLIC_URL=$(MUSEUM_PUBLIC_URL)
	$(MANAGE) migrate --noinput
	$(MANAGE) seed_hours --days 90
	$(MANAGE) create_demo_accounts
	$(MANAGE) create_demo_data
	@# The demo orders' confirmation emails, sent now (the console backend prints each one's
	@# subject, address and text, museum/mail.py), so that the demo accounts are printed last.
	$(MANAGE) db_worker --batch --no-reload --no-startup-delay --queue-name '*'
	$(MANAGE) create_demo_accounts --list --url http://127.0.0.1:$(PORT)
	@# The task workers beside the server: one sends each confirmation email (the console backend
	@# prints it) and runs the periodic jobs, one delivers the webhooks, never behind an email.
	@# --no-reload: its reloader would outlive the trap's kill.
	$(MANAGE) db_worker --no-reload & mail=$$!; \
		$(MANAGE) db_worker --no-reload --queue-name webhooks & hooks=$$!; \
		trap 'kill $$mail $$hooks' EXIT; \
		$(MANAGE) runserver 127.0.0.1:$(PORT)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

# The Debian packages whose commands tests run, installed when missing (as root, with apt-get;
# scripts/test_tools.py). pytest last: its summary line ("N passed") is the last thing printed.
test: lint
	$(BIN)/python scripts/test_tools.py
	$(MANAGE) check
	$(MANAGE) makemigrations --check --dry-run
	$(MAKE) conformance
	$(BIN)/pytest

# The live server under schemathesis, against the public contract and our own schema
# (docs/contract-notes.md). Uses DATABASE_URL's PostgreSQL server, or a temporary SQLite file.
conformance: install
	$(BIN)/python scripts/conformance.py

# The service under load on loopback, against PostgreSQL and Redis on 127.0.0.1 (wrk from
# Debian's package): a few minutes, then `make drop`'s. Writes docs/performance.md; not part of
# `make test`.
bench: install
	$(BIN)/python -m bench.run
	$(BIN)/python -m bench.wallet --write-docs
	$(BIN)/python -m bench.drop --write-docs

# A legitimate client's latency while another floods wrong passwords, limiter on and off (Redis on
# 127.0.0.1, database 12; under a minute). Writes docs/performance.md; not part of `make test`.
flood: install
	$(BIN)/python -m bench.flood --write-docs

# What a wallet pass costs (issue 53): built and signed, answered kept, downloaded (one process,
# SQLite, under a minute). Writes docs/performance.md; `make bench` runs it; not part of `make test`.
passes: install
	$(BIN)/python -m bench.wallet --write-docs

# A blockbuster drop (issue 52): 10,000 buyers for 1,000 places, through a drop's waiting room and
# without one (PostgreSQL on 127.0.0.1, database museum_bench_drop; Redis database 15; about six
# minutes). Writes docs/performance.md; `make bench` runs it last; not part of `make test`.
drop: install
	$(BIN)/python -m bench.drop --write-docs

# Regenerate both lockfiles after changing dependencies in pyproject.toml: the service's own
# (what production installs) and, pinned to the same versions, the one with the test tools.
lock:
	$(PYTHON) -m pip install --quiet uv
	$(PYTHON) -m uv pip compile pyproject.toml --python-version 3.11 \
		--no-header -o requirements.lock
	$(PYTHON) -m uv pip compile pyproject.toml --extra dev --python-version 3.11 \
		--constraint requirements.lock --no-header -o requirements-dev.lock

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache staticfiles
