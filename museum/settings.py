"""Settings for the museum service, read from the environment (see docs/configuration.md)."""

import datetime as dt
import ipaddress
import os
import re
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import dj_database_url
from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def envbool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name, "").strip().lower()
    if not value:
        return default
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name} must be true or false, not {value!r}")


def envint(name: str, default: int) -> int:
    value = os.environ.get(name, "").strip()
    if not value:
        return default
    try:
        return int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a whole number, not {value!r}") from None


def envfloat(name: str, default: float) -> float:
    value = os.environ.get(name, "").strip()
    if not value:
        return default
    try:
        return float(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a number, not {value!r}") from None


def envlist(name: str, default: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


def envfile(name: str) -> str:
    """The path of a file the service reads, or "" when not set."""
    value = os.environ.get(name, "").strip()
    if value and not os.path.isfile(value):
        raise ImproperlyConfigured(f"{name}: no file at {value!r}")
    return value


def envrate(name: str, default: str) -> str:
    """A DRF throttle rate: requests per s, min, hour or day, e.g. 600/min."""
    value = os.environ.get(name, "").strip() or default
    count, _, period = value.partition("/")
    periods = {"s", "sec", "m", "min", "h", "hour", "d", "day"}
    if not (count.isdigit() and int(count) > 0 and period in periods):
        raise ImproperlyConfigured(f"{name} must be a rate like 600/min, not {value!r}")
    return value


DEBUG = envbool("DEBUG")

SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured(
            "SECRET_KEY is not set. Set it (production), or DEBUG=true for local work "
            "(make run keeps DEBUG=true in .env)."
        )
    SECRET_KEY = "insecure-local-development-key-never-use-in-production"
# Earlier secrets, newest first: sessions signed with them, and tickets signed with keys derived
# from them (when MUSEUM_TICKET_SIGNING_KEYS is not set), still verify after a rotation.
SECRET_KEY_FALLBACKS = envlist("SECRET_KEY_FALLBACKS", "")

ALLOWED_HOSTS = envlist("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1],testserver")

# TLS ends at the proxy in front, which must set X-Forwarded-Proto (and drop a client's own);
# without this header Django would take every request for plain HTTP and redirect forever.
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = envbool("SECURE_SSL_REDIRECT", not DEBUG)
# Load balancers probe over plain HTTP and do not follow redirects.
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$", r"^metrics$"]
SECURE_HSTS_SECONDS = envint("SECURE_HSTS_SECONDS", 0 if DEBUG else 31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
# Preloading is decided for the whole registered domain, not by this service: no preload
# directive, and no warning for its absence.
SILENCED_SYSTEM_CHECKS = ["security.W021"]
SECURE_CONTENT_TYPE_NOSNIFF = True
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = not DEBUG
# An admin or door session on a shared device ends within a working day (museum/checks.py).
SESSION_COOKIE_AGE = 12 * 60 * 60

# Every API body is a small JSON document; anything bigger is refused before it is read.
MUSEUM_MAX_BODY_BYTES = envint("MUSEUM_MAX_BODY_BYTES", 65536)
if MUSEUM_MAX_BODY_BYTES < 1:
    raise ImproperlyConfigured("MUSEUM_MAX_BODY_BYTES must be at least 1")

INSTALLED_APPS = [
    # Before the admin, as its docs ask: its TranslationAdmin tabs the languages of a text.
    "modeltranslation",
    # Django's admin, whose "View site" leads to the desk or the door (museum/admin_site.py).
    "museum.admin_site.MuseumAdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "museum",
    "audit",
    "events",
    "hours",
    "tickets",
    "django_tasks",
    "django_tasks_db",
    "orders",
    "giftcards",
    "vouchers",
    "groups",
    "drops",
    # Apple Wallet's passes, registrations and update web service (its own migrations).
    "wallet.walletpass_app.WalletpassConfig",
    "wallet",
    "webhooks",
    "octo",
    "desk",
    "axes",
    "csp",
]

# What each costs every request: docs/performance.md, "What every request pays". The Page*
# middleware are Django's for the pages (admin, desk, door): API requests (/v1.1/) go around
# them (museum/middleware.py, PagesOnly).
MIDDLEWARE = [
    "museum.middleware.request_log",
    "django.middleware.security.SecurityMiddleware",
    # Every later step, and the audit log, may read the request (its id: request_log's).
    "museum.request_context.request_context",
    "museum.middleware.body_size_limit",
    "museum.middleware.NoNulInPageQueries",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "museum.middleware.PageSessionMiddleware",
    # The language of the answer: the admin's choice (its cookie) or Accept-Language; it sets
    # Content-Language and Vary on every answer, the API's included.
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "museum.middleware.PageAuthenticationMiddleware",
    "museum.middleware.PageMessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # django-csp's policy, built once per process.
    "museum.middleware.content_security_policy",
    # Last, as django-axes asks: it turns a locked-out admin sign-in into its 429 page.
    "axes.middleware.AxesMiddleware",
]

# Content-Security-Policy (django-csp) on every answer: the admin's and the door's pages load
# scripts and styles from our own static files only, and no other site may frame them. The API
# docs (Swagger UI, inline script and styles) are exempt in museum/urls.py.
CONTENT_SECURITY_POLICY = {
    # Swagger UI runs an inline script and styles.
    "EXCLUDE_URL_PREFIXES": ["/v1.1/docs/"],
    "DIRECTIVES": {
        "default-src": [SELF],
        "img-src": [SELF, "data:"],  # the admin shows each ticket's image inline
        "object-src": [NONE],
        "base-uri": [NONE],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    },
}

# django-axes guards the admin login (which the door and desk pages use): it refuses a locked-out
# username+address before the password is checked, and records attempts and lockouts in the admin.
# Its handler (museum/admin_sign_in.py) adds the API's limits per address and per username, on the
# API's counters. The API verifies Basic credentials with ModelBackend itself
# (museum/authentication.py), so axes neither counts nor refuses API requests.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    # ModelBackend, answering has_perm from the permissions kept with a remembered credential's
    # account under a shared cache (museum/authentication.py).
    "museum.authentication.KeptPermissionsBackend",
]
AXES_FAILURE_LIMIT = envint("MUSEUM_ADMIN_FAILURE_LIMIT", 5)
AXES_COOLOFF_TIME = dt.timedelta(minutes=envint("MUSEUM_ADMIN_COOLOFF_MINUTES", 15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_HANDLER = "museum.admin_sign_in.AdminSignInHandler"
AXES_RESET_ON_SUCCESS = True
# False: axes' backend flags every sign-in it refuses as locked out (its 429 page), whichever
# limit refused it, and a refused attempt, which checked no password, does not restart the cool-off.
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
# Its documented switch for the "AXES: BEGIN ..." lines it logs at every start, manage.py
# commands included; lockouts are still logged.
AXES_VERBOSE = False
# The address as the API's limits see it, so MUSEUM_NUM_PROXIES means the same to both.
AXES_CLIENT_IP_CALLABLE = "museum.throttling.client_address"
if AXES_FAILURE_LIMIT < 1 or AXES_COOLOFF_TIME <= dt.timedelta(0):
    raise ImproperlyConfigured(
        "MUSEUM_ADMIN_FAILURE_LIMIT and MUSEUM_ADMIN_COOLOFF_MINUTES must be at least 1"
    )

ROOT_URLCONF = "museum.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

WSGI_APPLICATION = "museum.wsgi.application"

DATABASES = {
    "default": dj_database_url.config(
        env="DATABASE_URL",
        default=f"sqlite:///{BASE_DIR / 'museum.sqlite3'}",
        conn_max_age=envint("DB_CONN_MAX_AGE", 60),
        # A kept connection the database dropped (restart, failover, idle timeout) is replaced
        # before a request's first query, whatever the entry point: API, admin, door, /healthz.
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql" and envbool(
    "DB_PREPARED_STATEMENTS", True
):
    # Parameters sent apart from the SQL, and a statement a connection runs again prepared once
    # it has run five times (psycopg's default): PostgreSQL then skips planning it, which costs
    # more than running the door's and a sale's joins by primary key. Off behind a pooler in
    # transaction mode (a prepared statement lives in one server connection):
    # DB_PREPARED_STATEMENTS=false. The backend keeps Django's batches within what a statement
    # bound this way may carry.
    DATABASES["default"]["ENGINE"] = "museum.postgresql"
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        server_side_binding=True, prepare_threshold=5
    )

if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # One file that the server and the task worker both write (make run): readers never block the
    # writer (WAL), a transaction takes the write lock when it begins (IMMEDIATE), so it waits its
    # turn instead of failing to upgrade a read lock, and a writer waits up to DB_BUSY_TIMEOUT
    # seconds for the lock rather than answering "database is locked".
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        transaction_mode="IMMEDIATE",
        timeout=envint("DB_BUSY_TIMEOUT", 20),
        init_command="PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL",
    )
if DATABASES["default"]["ENGINE"] in ("django.db.backends.postgresql", "museum.postgresql"):
    # A writer waits at most this long for a row lock (hours/locking.py), then its request is a
    # 503 with Retry-After, not a worker stuck behind a stuck transaction. A startup option: no
    # round trip per transaction (a pooler in transaction mode must pass it on or set it itself).
    DATABASES["default"].setdefault("OPTIONS", {})["options"] = (
        f"-c lock_timeout={envint('DB_LOCK_TIMEOUT_MS', 5000)}"
    )

# Background work (confirmation emails, periodic jobs) is a task in the same database, enqueued in
# the transaction that calls for it; `manage.py db_worker` runs it (museum/periodic.py). The
# webhooks' tasks have their own queue and worker (webhooks.delivery.QUEUE), so that a delivery
# never waits behind emails.
TASKS = {
    "default": {
        "BACKEND": "django_tasks_db.DatabaseBackend",
        "QUEUES": ["default", "webhooks"],
    }
}

# Without REDIS_URL the cache is each process's own memory: fine for what cannot go stale across
# processes (counts, credentials checked against the account row), never for whole answers.
SHARED_CACHE = bool(os.environ.get("REDIS_URL"))
CACHES = {
    "default": (
        {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": os.environ["REDIS_URL"],
            # Fail fast: a Redis that is down refuses within the connect timeout, and one that
            # hangs (accepting but not answering) within the read timeout; the request is then a
            # 503 with Retry-After (museum/errors.py), not a worker held for the OS's timeouts.
            "OPTIONS": {
                "SOCKET_CONNECT_TIMEOUT": envfloat("REDIS_CONNECT_TIMEOUT", 1.0),
                "SOCKET_TIMEOUT": envfloat("REDIS_TIMEOUT", 1.0),
            },
        }
        if SHARED_CACHE
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    )
}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": f"django.contrib.auth.password_validation.{name}"}
    for name in [
        "UserAttributeSimilarityValidator",
        "MinimumLengthValidator",
        "CommonPasswordValidator",
        "NumericPasswordValidator",
    ]
]

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# "Today" always means the museum's today: every date rule reads timezone.localdate().
TIME_ZONE = os.environ.get("MUSEUM_TIME_ZONE", "UTC")
try:
    ZoneInfo(TIME_ZONE)
except (ZoneInfoNotFoundError, ValueError):
    raise ImproperlyConfigured(f"MUSEUM_TIME_ZONE {TIME_ZONE!r} is not a known time zone") from None
USE_TZ = True
# The languages the service ships translations for (locale/, and a column per language for the
# museum's own texts: museum/translation.py); MUSEUM_LANGUAGES offers some or all of them.
SHIPPED_LANGUAGES = {
    "en": "English",
    "de": "Deutsch",
    "fr": "Français",
    "nl": "Nederlands",
    "es": "Español",
}
# The museum's own locale: the language its texts are written in, what a visitor gets when no
# offered language fits, and how dates, times and numbers are written (en-gb: a 24-hour clock, the
# day before the month), e.g. "de" or "fr".
LANGUAGE_CODE = os.environ.get("MUSEUM_LANGUAGE", "en-gb").strip().lower()
MUSEUM_LANGUAGE = LANGUAGE_CODE.split("-")[0]
# The languages visitors and staff may choose: by Accept-Language in the API, an order's
# `language`, the admin's switch.
MUSEUM_LANGUAGES = envlist("MUSEUM_LANGUAGES", "en,de,fr,nl,es")
if unknown := set(MUSEUM_LANGUAGES) - SHIPPED_LANGUAGES.keys():
    raise ImproperlyConfigured(
        f"MUSEUM_LANGUAGES: no translations for {', '.join(sorted(unknown))}; "
        f"choose from {', '.join(SHIPPED_LANGUAGES)}"
    )
if MUSEUM_LANGUAGE not in MUSEUM_LANGUAGES:
    raise ImproperlyConfigured(
        f"MUSEUM_LANGUAGE {LANGUAGE_CODE!r} must be one of MUSEUM_LANGUAGES ({MUSEUM_LANGUAGES})"
    )
# Django's own code for each: the museum's language keeps its regional variant, so that English
# (en -> en-gb by default) is written as the museum writes it rather than as the US does; a
# client asking for plain "en" or "en-us" gets it too (Django picks the offered "en-" variant).
LANGUAGES = [
    (LANGUAGE_CODE if code == MUSEUM_LANGUAGE else code, SHIPPED_LANGUAGES[code])
    for code in MUSEUM_LANGUAGES
]
USE_I18N = True
# Our own changes to Django's locale formats (museum/formats/): a 24-hour clock for en-gb.
FORMAT_MODULE_PATH = ["museum.formats"]
LOCALE_PATHS = [BASE_DIR / "locale"]
# django-modeltranslation: a column per shipped language (fixed, so the schema does not depend on
# the environment); a text missing in one language is read in the museum's.
MODELTRANSLATION_LANGUAGES = tuple(SHIPPED_LANGUAGES)
MODELTRANSLATION_DEFAULT_LANGUAGE = MUSEUM_LANGUAGE
MODELTRANSLATION_FALLBACK_LANGUAGES = (MUSEUM_LANGUAGE,)

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"

MUSEUM_NAME = os.environ.get("MUSEUM_NAME", "The Museum")
# Printed under the name on every ticket of the order's PDF and in its email; a comma starts a
# new line on the ticket ("1 Museum Street, Amsterdam").
MUSEUM_ADDRESS = os.environ.get("MUSEUM_ADDRESS", "").strip()
# The paper the order's PDF is laid out for: "a4" or "letter" (US Letter).
MUSEUM_PAPER_SIZE = os.environ.get("MUSEUM_PAPER_SIZE", "a4").strip().lower()
if MUSEUM_PAPER_SIZE not in ("a4", "letter"):
    raise ImproperlyConfigured("MUSEUM_PAPER_SIZE must be a4 or letter")
# The sale's documents (orders.services.receipts, docs/money.md): each kind numbered from its
# own gapless series a year, "{prefix}{year}-{n:06d}" (R2026-000001); the prefixes must differ.
MUSEUM_RECEIPT_PREFIX = os.environ.get("MUSEUM_RECEIPT_PREFIX", "R").strip()
MUSEUM_INVOICE_PREFIX = os.environ.get("MUSEUM_INVOICE_PREFIX", "I").strip()
MUSEUM_CREDIT_NOTE_PREFIX = os.environ.get("MUSEUM_CREDIT_NOTE_PREFIX", "C").strip()
_DOCUMENT_PREFIXES = [MUSEUM_RECEIPT_PREFIX, MUSEUM_INVOICE_PREFIX, MUSEUM_CREDIT_NOTE_PREFIX]
if not all(re.fullmatch(r"[A-Za-z][A-Za-z0-9]{0,9}", prefix) for prefix in _DOCUMENT_PREFIXES):
    raise ImproperlyConfigured(
        "MUSEUM_RECEIPT_PREFIX, MUSEUM_INVOICE_PREFIX and MUSEUM_CREDIT_NOTE_PREFIX must each be "
        "1 to 10 letters or digits, starting with a letter"
    )
if len({prefix.upper() for prefix in _DOCUMENT_PREFIXES}) < len(_DOCUMENT_PREFIXES):
    raise ImproperlyConfigured(
        "MUSEUM_RECEIPT_PREFIX, MUSEUM_INVOICE_PREFIX and MUSEUM_CREDIT_NOTE_PREFIX must differ"
    )
# The museum's tax number (VAT id), printed on its receipts, invoices and credit notes when set.
MUSEUM_TAX_NUMBER = os.environ.get("MUSEUM_TAX_NUMBER", "").strip()
# The museum's charity statement (its registration as a charity, what a donor may deduct),
# printed under the donations of a receipt or invoice; blank: none. In the buyer's language where
# MUSEUM_CHARITY_STATEMENT_<LANGUAGE> gives one (MUSEUM_CHARITY_STATEMENT_DE), else this one.
MUSEUM_CHARITY_STATEMENT = os.environ.get("MUSEUM_CHARITY_STATEMENT", "").strip()
MUSEUM_CHARITY_STATEMENTS = {
    code: os.environ.get(f"MUSEUM_CHARITY_STATEMENT_{code.upper()}", "").strip()
    for code in SHIPPED_LANGUAGES
}
# Where visitors and resellers reach this service, for the links no request names: the order's
# cancel page in its email and PDF (a task worker has no request to read the host from), the
# PDF_URL of OCTO's webhooks.
MUSEUM_PUBLIC_URL = os.environ.get("MUSEUM_PUBLIC_URL", "http://127.0.0.1:8000").strip().rstrip("/")
if not MUSEUM_PUBLIC_URL.startswith(("https://", "http://")):
    raise ImproperlyConfigured("MUSEUM_PUBLIC_URL must start with https:// or http://")
# How visitors cancel, in the museum's own words ("Call us at ..."), printed instead of the link
# to the order's cancel page; empty: the link.
MUSEUM_CANCEL_INSTRUCTIONS = os.environ.get("MUSEUM_CANCEL_INSTRUCTIONS", "").strip()

# Authentication cost and brute-force limits (docs/security.md).
MUSEUM_AUTH_CACHE_SECONDS = envint("MUSEUM_AUTH_CACHE_SECONDS", 300)
MUSEUM_AUTH_FAILURE_WINDOW_SECONDS = envint("MUSEUM_AUTH_FAILURE_WINDOW_SECONDS", 300)
# A username from one address locks out that address for it; the username alone, from everywhere,
# only at a higher ceiling, so that a stranger cannot lock an account out for its owner.
MUSEUM_AUTH_FAILURES_PER_USERNAME_AND_ADDRESS = envint(
    "MUSEUM_AUTH_FAILURES_PER_USERNAME_AND_ADDRESS", 10
)
MUSEUM_AUTH_FAILURES_PER_USERNAME = envint("MUSEUM_AUTH_FAILURES_PER_USERNAME", 100)
MUSEUM_AUTH_FAILURES_PER_ADDRESS = envint("MUSEUM_AUTH_FAILURES_PER_ADDRESS", 30)
if MUSEUM_AUTH_FAILURE_WINDOW_SECONDS < 1:
    raise ImproperlyConfigured("MUSEUM_AUTH_FAILURE_WINDOW_SECONDS must be at least 1")
if (
    min(
        MUSEUM_AUTH_FAILURES_PER_USERNAME_AND_ADDRESS,
        MUSEUM_AUTH_FAILURES_PER_USERNAME,
        MUSEUM_AUTH_FAILURES_PER_ADDRESS,
    )
    < 1
):
    raise ImproperlyConfigured("MUSEUM_AUTH_FAILURES_PER_* must be at least 1")

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["museum.authentication.MuseumBasicAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": ["museum.renderers.MuseumJSONRenderer"],
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "museum.renderers.MuseumContentNegotiation",
    "DEFAULT_PARSER_CLASSES": ["museum.parsers.MuseumJSONParser"],
    "DEFAULT_PAGINATION_CLASS": "museum.pagination.PagePagination",
    "EXCEPTION_HANDLER": "museum.errors.problem_exception_handler",
    "DEFAULT_SCHEMA_CLASS": "museum.schema.MuseumAutoSchema",
    "UNAUTHENTICATED_USER": None,
    # No `?format=`: the API speaks JSON (and PNG for ticket images), chosen by Accept alone.
    "URL_FORMAT_OVERRIDE": None,
    "DEFAULT_THROTTLE_CLASSES": [
        "museum.throttling.AccountRateThrottle",
        "museum.throttling.AddressRateThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "user": envrate("MUSEUM_THROTTLE_USER_RATE", "600/min"),
        "anon": envrate("MUSEUM_THROTTLE_ANON_RATE", "60/min"),
        # POST /tickets (museum.throttling.PurchaseRateThrottle), on top of "user": a visitor
        # buys a few tickets, a class's organiser thirty, and no account mails more than that.
        "purchase": envrate("MUSEUM_THROTTLE_PURCHASE_RATE", "30/min"),
        # A gift card's code asked for (its balance, or paying with it), per account: a few
        # cards a minute, never a search of the codes.
        "giftcard": envrate("MUSEUM_THROTTLE_GIFT_CARD_RATE", "10/min"),
        # A voucher's code checked against an order (POST /vouchers/check), per account: a
        # buyer tries the one they were given, never a search of the codes.
        "voucher": envrate("MUSEUM_THROTTLE_VOUCHER_RATE", "10/min"),
        # Group requests (docs/groups.md) per client address through the public form (/groups/)
        # and per account through POST /group-requests: each holds places and mails its address.
        "group_request": envrate("MUSEUM_THROTTLE_GROUP_REQUEST_RATE", "10/hour"),
        # Apple Wallet's web service (wallet/apple_service.py), per client address: a device
        # registers each pass once and sends its log now and then, never a search of serials.
        "wallet_registration": envrate("MUSEUM_THROTTLE_WALLET_REGISTRATION_RATE", "20/min"),
        # The wallet links of the emails and the desk (wallet/pages.py), per client address: a
        # visitor opens a few, each signing a pass or asking Google for a save link.
        "wallet_link": envrate("MUSEUM_THROTTLE_WALLET_LINK_RATE", "60/min"),
    },
    # The client's address: REMOTE_ADDR, or the X-Forwarded-For entry this many proxies back.
    # Left at 0 behind a proxy, every client shares the proxy's address and its limits.
    "NUM_PROXIES": envint("MUSEUM_NUM_PROXIES", 0),
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Museum API",
    "DESCRIPTION": (
        "The museum service: an implementation of the public Museum API 1.1.1 contract, "
        "with a few documented additions (see docs/contract-notes.md)."
    ),
    "VERSION": "1.1.1",
    "SERVERS": [{"url": "/v1.1"}],
    "SCHEMA_PATH_PREFIX": "/v1.1",
    "SCHEMA_PATH_PREFIX_TRIM": True,
    "SERVE_INCLUDE_SCHEMA": False,
    # UpdateSpecialEventRequest already has every field optional, as the contract's does.
    "COMPONENT_SPLIT_PATCH": False,
    "ENUM_NAME_OVERRIDES": {
        "TicketType": "orders.models.TicketType",
        "OrderStatus": "orders.models.OrderStatus",
        "TicketStatus": "orders.models.TicketState",
        "MembershipStatus": "orders.models.MembershipStatus",
        "GiftCardStatus": "giftcards.models.GiftCardStatus",
    },
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "museum.schema.use_contract_component_names",
        "museum.schema.document_headers_and_common_problems",
        "museum.schema.webhooks_as_extension",
    ],
    # The webhooks we send (the Museum API 1.2 declares publishNewEvent). The schema stays OpenAPI
    # 3.0: OpenAPI Generator's 3.1 support is a beta that warns and, given `webhooks:`, writes an
    # events API that is not valid Python; so they are listed as `x-webhooks`, the same object
    # under the extension name Redoc reads in 3.0 (museum.schema.webhooks_as_extension).
    "WEBHOOKS": [
        "webhooks.schema.PUBLISH_NEW_EVENT",
        "webhooks.schema.ORDER_EVENTS",
        "webhooks.schema.MEMBERSHIP_EVENTS",
        "webhooks.schema.GIFT_CARD_EVENTS",
        "webhooks.schema.VOUCHER_EVENTS",
        "webhooks.schema.GROUP_REQUEST_EVENTS",
        "webhooks.schema.OTHER_EVENTS",
    ],
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],
    "SERVE_AUTHENTICATION": [],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "AUTHENTICATION_WHITELIST": ["museum.authentication.MuseumBasicAuthentication"],
    "TAGS": [
        {"name": "Operations", "description": "Operational information about the museum."},
        {"name": "Events", "description": "Special events hosted by the museum."},
        {
            "name": "Tickets",
            "description": "Museum tickets for general entrance or special events.",
        },
        {"name": "Webhooks", "description": "Subscriptions to the museum's webhooks."},
    ],
}

LOG_LEVEL = os.environ.get("LOG_LEVEL", "INFO").upper()
# json: one JSON object a line, for a log collector (production); text: for a terminal (make run).
LOG_FORMAT = os.environ.get("LOG_FORMAT", "text" if DEBUG else "json").strip().lower()
if LOG_FORMAT not in {"json", "text"}:
    raise ImproperlyConfigured(f"LOG_FORMAT must be json or text, not {LOG_FORMAT!r}")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    # Every record gets the id of the request (or task) that caused it (museum/context.py).
    "filters": {"request_id": {"()": "museum.context.RequestIdFilter"}},
    "formatters": {
        "json": {
            "()": "pythonjsonlogger.json.JsonFormatter",
            "fmt": "{asctime}{levelname}{name}{message}{request_id}",
            "style": "{",
            "rename_fields": {"asctime": "time", "levelname": "level", "name": "logger"},
            "datefmt": "%Y-%m-%dT%H:%M:%S%z",
        },
        "text": {"format": "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"},
    },
    # On the handler too: records that Django's own loggers pass up skip the root logger's level
    # and stop only at its handler's.
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "level": LOG_LEVEL,
            "formatter": LOG_FORMAT,
            "filters": ["request_id"],
        }
    },
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {
        # fpdf2's font subsetting tells every glyph it keeps at INFO: a page of lines per PDF.
        "fontTools": {"level": "WARNING"},
        # Its "Bad Request: /v1.1/orders" warning per 4xx repeats the request's own line
        # (museum.request); its errors (a 500's traceback) still go out.
        "django.request": {"level": "ERROR"},
        # Each request's URL at INFO: an APNs push's names the device's push token.
        "httpx": {"level": "WARNING"},
    },
}

# GET /metrics (museum/monitoring.py): never public. A scraper sends this token as a Bearer
# token, or comes from one of these addresses or networks (as MUSEUM_NUM_PROXIES reads them).
MUSEUM_METRICS_TOKEN = os.environ.get("MUSEUM_METRICS_TOKEN", "")
try:
    MUSEUM_METRICS_ADDRESSES = [
        ipaddress.ip_network(item) for item in envlist("MUSEUM_METRICS_ADDRESSES", "")
    ]
except ValueError as exc:
    raise ImproperlyConfigured(f"MUSEUM_METRICS_ADDRESSES: {exc}") from None
# GET /readyz (museum/health.py): the task queue is not ready when no worker started a task for
# this long (a periodic task is due every minute), or the oldest task due has waited this long.
MUSEUM_READY_TASK_MINUTES = envint("MUSEUM_READY_TASK_MINUTES", 5)

# How long a response every visitor shares (hours, events) or a drawn ticket image is kept in the
# cache; writes replace it at once (museum/response_cache.py, tickets/selectors.py). 0: not kept.
# A write replaces it only in the cache its own process sees, so it needs a cache every worker
# shares: off without one, and a value asking for it anyway is refused rather than ignored.
MUSEUM_RESPONSE_CACHE_SECONDS = envint("MUSEUM_RESPONSE_CACHE_SECONDS", 600 if SHARED_CACHE else 0)
if MUSEUM_RESPONSE_CACHE_SECONDS > 0 and not SHARED_CACHE:
    raise ImproperlyConfigured(
        "MUSEUM_RESPONSE_CACHE_SECONDS needs REDIS_URL: without a cache every worker shares, a "
        "write would not replace the responses other workers keep. Set REDIS_URL, or set "
        "MUSEUM_RESPONSE_CACHE_SECONDS to 0."
    )

# Tickets
# Ed25519 seeds (32 bytes, base64url), newest first; empty: one key derived from SECRET_KEY.
MUSEUM_TICKET_SIGNING_KEYS = envlist("MUSEUM_TICKET_SIGNING_KEYS", "")
# Days after an order's date that its buyer's email and phone are kept; then the worker's hourly
# `anonymise_orders` task replaces them (`manage.py anonymise_tickets` does it at once). A month
# answers a question or complaint about a visit, or about an event called off, and outlasts the
# confirmation email's retries; the order and its tickets (date, type, event, price, codes,
# check-in) stay on record.
MUSEUM_PERSONAL_DATA_RETENTION_DAYS = envint("MUSEUM_PERSONAL_DATA_RETENTION_DAYS", 30)
if MUSEUM_PERSONAL_DATA_RETENTION_DAYS < 0:
    raise ImproperlyConfigured("MUSEUM_PERSONAL_DATA_RETENTION_DAYS must be 0 or more")

# Orders (docs/api.md, "Orders")
MUSEUM_CURRENCY = os.environ.get("MUSEUM_CURRENCY", "EUR").strip().upper()
if not (len(MUSEUM_CURRENCY) == 3 and MUSEUM_CURRENCY.isalpha()):
    raise ImproperlyConfigured("MUSEUM_CURRENCY must be an ISO 4217 code like EUR")
# Whether the prices staff set (visitor categories, events, membership types) include tax, as
# consumer prices in Europe do, or are net, the tax added on top (docs/money.md).
MUSEUM_PRICES_INCLUDE_TAX = envbool("MUSEUM_PRICES_INCLUDE_TAX", True)
MUSEUM_MAX_TICKETS_PER_ORDER = envint("MUSEUM_MAX_TICKETS_PER_ORDER", 20)
# Gift cards (docs/money.md): the least and most one may be sold for, and the years after the
# year of issue it may be spent in (to the end of that year; its balance stays on the books).
MUSEUM_GIFT_CARD_MIN = envint("MUSEUM_GIFT_CARD_MIN", 5)
MUSEUM_GIFT_CARD_MAX = envint("MUSEUM_GIFT_CARD_MAX", 500)
MUSEUM_GIFT_CARD_YEARS = envint("MUSEUM_GIFT_CARD_YEARS", 3)
# Whether a buyer who cancels an order may take its refund onto a new gift card instead of
# back through its payments (staff always may).
MUSEUM_GIFT_CARD_REFUNDS_FOR_BUYERS = envbool("MUSEUM_GIFT_CARD_REFUNDS_FOR_BUYERS", False)
if not 1 <= MUSEUM_GIFT_CARD_MIN <= MUSEUM_GIFT_CARD_MAX or MUSEUM_GIFT_CARD_YEARS < 1:
    raise ImproperlyConfigured(
        "MUSEUM_GIFT_CARD_MIN must be 1+ and at most MUSEUM_GIFT_CARD_MAX; "
        "MUSEUM_GIFT_CARD_YEARS 1+"
    )
# Vouchers (docs/vouchers.md): the most codes one batch makes, and the most of them it mails
# (one an address, each within its mailbox's daily limit of emails).
MUSEUM_VOUCHER_BATCH_MAX = envint("MUSEUM_VOUCHER_BATCH_MAX", 1000)
MUSEUM_VOUCHER_BATCH_MAX_EMAILS = envint("MUSEUM_VOUCHER_BATCH_MAX_EMAILS", 500)
# Groups and schools (docs/groups.md): how long a request holds its places waiting for staff,
# the largest group, its invoice's deposit (percent, due days after approval), its balance (due
# days before the visit), and the final-numbers date (days before the visit).
MUSEUM_GROUP_REQUEST_HOLD_DAYS = envint("MUSEUM_GROUP_REQUEST_HOLD_DAYS", 7)
MUSEUM_GROUP_MAX_PEOPLE = envint("MUSEUM_GROUP_MAX_PEOPLE", 200)
MUSEUM_GROUP_DEPOSIT_PERCENT = envint("MUSEUM_GROUP_DEPOSIT_PERCENT", 30)
MUSEUM_GROUP_DEPOSIT_DAYS = envint("MUSEUM_GROUP_DEPOSIT_DAYS", 7)
MUSEUM_GROUP_BALANCE_DAYS = envint("MUSEUM_GROUP_BALANCE_DAYS", 14)
MUSEUM_GROUP_FINAL_DAYS = envint("MUSEUM_GROUP_FINAL_DAYS", 14)
# A request holds places for days: a mailbox has at most this many waiting for an answer.
MUSEUM_GROUP_OPEN_REQUESTS = envint("MUSEUM_GROUP_OPEN_REQUESTS", 3)
if min(MUSEUM_GROUP_REQUEST_HOLD_DAYS, MUSEUM_GROUP_MAX_PEOPLE) < 1 or not (
    0 <= MUSEUM_GROUP_DEPOSIT_PERCENT <= 100
):
    raise ImproperlyConfigured(
        "MUSEUM_GROUP_REQUEST_HOLD_DAYS and MUSEUM_GROUP_MAX_PEOPLE must be 1+, "
        "MUSEUM_GROUP_DEPOSIT_PERCENT 0 to 100"
    )
# Drops (docs/operations.md, "A blockbuster drop"): the Redis server that keeps the waiting
# rooms' lines (by default the shared cache's; without one no drop sells: it answers 503
# `queue_paused`), how long a command may wait for it, the admissions a minute a new drop
# lets in by default, and above which the admin warns, and the hours a place offered to the
# waiting list is kept for its buyer. `make bench` measured about 7,800 orders a minute on two
# workers (docs/performance.md); `make drop` shows a crowd's polls, not its purchases, are
# what loads the server: by default a thirteenth of that rate goes to purchases (600, whose p99
# stayed under half a second there), and the admin warns above a quarter of it (1,800).
MUSEUM_DROP_REDIS_URL = os.environ.get("MUSEUM_DROP_REDIS_URL", os.environ.get("REDIS_URL", ""))
MUSEUM_DROP_REDIS_TIMEOUT = envfloat("MUSEUM_DROP_REDIS_TIMEOUT", 1.0)
MUSEUM_DROP_OUTFLOW_PER_MINUTE = envint("MUSEUM_DROP_OUTFLOW_PER_MINUTE", 600)
MUSEUM_DROP_OUTFLOW_WARNING = envint("MUSEUM_DROP_OUTFLOW_WARNING", 1800)
MUSEUM_DROP_OFFER_HOURS = envint("MUSEUM_DROP_OFFER_HOURS", 4)
if min(MUSEUM_DROP_OUTFLOW_PER_MINUTE, MUSEUM_DROP_OUTFLOW_WARNING, MUSEUM_DROP_OFFER_HOURS) < 1:
    raise ImproperlyConfigured(
        "MUSEUM_DROP_OUTFLOW_PER_MINUTE, MUSEUM_DROP_OUTFLOW_WARNING and MUSEUM_DROP_OFFER_HOURS "
        "must be 1+"
    )
# Where staff are told of a new group request and of one that expired unanswered (docs/groups.md);
# empty: no email to staff.
MUSEUM_GROUP_STAFF_EMAIL = os.environ.get("MUSEUM_GROUP_STAFF_EMAIL", "").strip()
# A guided tour of a group without an entry time (an untimed day) starts at this time, "HH:MM"
# in the museum's zone (docs/guides.md): its guides are asked for it.
MUSEUM_GROUP_DEFAULT_TOUR_TIME = os.environ.get("MUSEUM_GROUP_DEFAULT_TOUR_TIME", "10:00").strip()
if not re.fullmatch(r"([01]\d|2[0-3]):[0-5]\d", MUSEUM_GROUP_DEFAULT_TOUR_TIME):
    raise ImproperlyConfigured("MUSEUM_GROUP_DEFAULT_TOUR_TIME must be a time of day, HH:MM")
# The front desk sells to groups in front of it (a school class): its own, larger limit.
MUSEUM_DESK_MAX_TICKETS_PER_ORDER = envint("MUSEUM_DESK_MAX_TICKETS_PER_ORDER", 200)
MUSEUM_HOLD_MINUTES = envint("MUSEUM_HOLD_MINUTES", 10)
MUSEUM_CANCEL_HOURS_BEFORE = envint("MUSEUM_CANCEL_HOURS_BEFORE", 24)
# The longest hold an OCTO reseller may ask for (expirationMinutes), in minutes.
MUSEUM_OCTO_MAX_HOLD_MINUTES = envint("MUSEUM_OCTO_MAX_HOLD_MINUTES", 60)
MUSEUM_ENTRY_ALLOWANCE_MINUTES = envint("MUSEUM_ENTRY_ALLOWANCE_MINUTES", 15)
if min(MUSEUM_MAX_TICKETS_PER_ORDER, MUSEUM_DESK_MAX_TICKETS_PER_ORDER, MUSEUM_HOLD_MINUTES) < 1:
    raise ImproperlyConfigured(
        "MUSEUM_MAX_TICKETS_PER_ORDER, MUSEUM_DESK_MAX_TICKETS_PER_ORDER and MUSEUM_HOLD_MINUTES "
        "must be 1+"
    )
if min(MUSEUM_CANCEL_HOURS_BEFORE, MUSEUM_ENTRY_ALLOWANCE_MINUTES) < 0:
    raise ImproperlyConfigured(
        "MUSEUM_CANCEL_HOURS_BEFORE and MUSEUM_ENTRY_ALLOWANCE_MINUTES must be 0 or more"
    )

# Payments (docs/payments.md). A held order awaiting its payment keeps its places this long once
# a payment starts: 3-D Secure and slow banks fit.
MUSEUM_PAYMENT_HOLD_MINUTES = envint("MUSEUM_PAYMENT_HOLD_MINUTES", 30)
# Stripe: the secret key turns the provider on; the webhook's signing secret verifies its calls
# (POST /payments/stripe/webhook). STRIPE_API_BASE points the library at another server (tests).
STRIPE_SECRET_KEY = os.environ.get("STRIPE_SECRET_KEY", "")
STRIPE_WEBHOOK_SECRET = os.environ.get("STRIPE_WEBHOOK_SECRET", "")
STRIPE_API_BASE = os.environ.get("STRIPE_API_BASE", "")
if STRIPE_SECRET_KEY and not STRIPE_WEBHOOK_SECRET:
    raise ImproperlyConfigured("STRIPE_SECRET_KEY needs STRIPE_WEBHOOK_SECRET too")
# The demo provider (a page with "Pay" and "Decline") for local work: never with DEBUG off.
MUSEUM_DEMO_PAYMENTS = envbool("MUSEUM_DEMO_PAYMENTS", DEBUG)
if MUSEUM_DEMO_PAYMENTS and not DEBUG:
    raise ImproperlyConfigured("MUSEUM_DEMO_PAYMENTS takes no money: only with DEBUG on")
# Online accounts may not hoard places: held at once, and per visit date (held or sold), per
# account and per buyer email within it. Staff set an account's own values (a shop, a kiosk).
MUSEUM_MAX_HELD_PLACES = envint("MUSEUM_MAX_HELD_PLACES", 20)
MUSEUM_MAX_PLACES_PER_DAY = envint("MUSEUM_MAX_PLACES_PER_DAY", 40)
# Places one sales partner (on account: /v1.1 and OCTO alike) may hold unpaid at once, unless
# staff set its own value: a reseller's key must not hold a day's places without paying.
MUSEUM_PARTNER_MAX_HELD_PLACES = envint("MUSEUM_PARTNER_MAX_HELD_PLACES", 50)
# Places of free orders (confirmed and mailed without a payment) per online account, and per
# mailbox within it, in 24 hours.
MUSEUM_MAX_FREE_PLACES_PER_DAY = envint("MUSEUM_MAX_FREE_PLACES_PER_DAY", 10)
# Emails of every kind to one mailbox for online accounts' orders, in 24 hours.
MUSEUM_MAX_EMAILS_PER_ADDRESS_PER_DAY = envint("MUSEUM_MAX_EMAILS_PER_ADDRESS_PER_DAY", 10)
if (
    min(
        MUSEUM_PAYMENT_HOLD_MINUTES,
        MUSEUM_MAX_HELD_PLACES,
        MUSEUM_MAX_PLACES_PER_DAY,
        MUSEUM_PARTNER_MAX_HELD_PLACES,
    )
    < 1
):
    raise ImproperlyConfigured(
        "MUSEUM_PAYMENT_HOLD_MINUTES, MUSEUM_MAX_HELD_PLACES, MUSEUM_MAX_PLACES_PER_DAY and "
        "MUSEUM_PARTNER_MAX_HELD_PLACES must be 1+"
    )
if MUSEUM_MAX_FREE_PLACES_PER_DAY < 0:
    raise ImproperlyConfigured("MUSEUM_MAX_FREE_PLACES_PER_DAY must be 0 or more")
# A slot's places kept for members (EntrySlot.member_places) are sold to anyone from this many
# hours before the slot begins.
MUSEUM_MEMBER_PLACES_RELEASE_HOURS = envint("MUSEUM_MEMBER_PLACES_RELEASE_HOURS", 24)
if MUSEUM_MEMBER_PLACES_RELEASE_HOURS < 0:
    raise ImproperlyConfigured("MUSEUM_MEMBER_PLACES_RELEASE_HOURS must be 0 or more")

# Memberships (orders/services/memberships.py). A renewal within this many days after a
# membership lapsed continues it (the new period starts the day after the old one ended); later,
# it starts on the renewal day.
MUSEUM_MEMBERSHIP_GRACE_DAYS = envint("MUSEUM_MEMBERSHIP_GRACE_DAYS", 30)
# Its buyer may cancel a membership's purchase until its period starts or for this many days
# after buying it, whichever is later (a cooling-off period); staff who may cancel any order,
# always.
MUSEUM_MEMBERSHIP_CANCEL_DAYS = envint("MUSEUM_MEMBERSHIP_CANCEL_DAYS", 14)
# How far ahead a membership bought may start.
MUSEUM_MEMBERSHIP_MAX_START_DAYS = envint("MUSEUM_MEMBERSHIP_MAX_START_DAYS", 90)
# Memberships an online account, and each mailbox within it, may buy (held or paid) in 24 hours:
# a flood of unpaid memberships, or of free ones and their emails, stops there.
MUSEUM_MAX_MEMBERSHIPS_PER_DAY = envint("MUSEUM_MAX_MEMBERSHIPS_PER_DAY", 5)
if (
    min(
        MUSEUM_MEMBERSHIP_GRACE_DAYS,
        MUSEUM_MEMBERSHIP_CANCEL_DAYS,
        MUSEUM_MEMBERSHIP_MAX_START_DAYS,
        MUSEUM_MAX_MEMBERSHIPS_PER_DAY,
    )
    < 0
):
    raise ImproperlyConfigured("MUSEUM_MEMBERSHIP_* and MUSEUM_MAX_MEMBERSHIPS_PER_DAY: 0 or more")

# Wallet (docs/wallet.md): Apple Wallet passes for tickets. Apple's pass type id and team id,
# and paths to PEM files: the pass type's certificate, its private key (and the key's password,
# if it has one), and Apple's WWDR intermediate certificate. Apple is configured only with all
# five; without them no pass is offered (404 wallet_not_configured).
MUSEUM_WALLET_APPLE_PASS_TYPE_ID = os.environ.get("MUSEUM_WALLET_APPLE_PASS_TYPE_ID", "").strip()
MUSEUM_WALLET_APPLE_TEAM_ID = os.environ.get("MUSEUM_WALLET_APPLE_TEAM_ID", "").strip()
# django_walletpass reads the files when it is imported: a path to no file is named at start.
MUSEUM_WALLET_APPLE_CERTIFICATE = envfile("MUSEUM_WALLET_APPLE_CERTIFICATE")
MUSEUM_WALLET_APPLE_KEY = envfile("MUSEUM_WALLET_APPLE_KEY")
MUSEUM_WALLET_APPLE_KEY_PASSWORD = os.environ.get("MUSEUM_WALLET_APPLE_KEY_PASSWORD", "")
MUSEUM_WALLET_APPLE_WWDR_CERTIFICATE = envfile("MUSEUM_WALLET_APPLE_WWDR_CERTIFICATE")
# Pushes to the devices holding a pass when it changes (wallet/push.py): APNs with token-based
# auth, the .p8 key of the museum's Apple developer account and its key id (the team id above).
# Without both, passes still update when a device asks (pull to refresh), but none is pushed.
MUSEUM_WALLET_APPLE_APNS_KEY = envfile("MUSEUM_WALLET_APPLE_APNS_KEY")
MUSEUM_WALLET_APPLE_APNS_KEY_ID = os.environ.get("MUSEUM_WALLET_APPLE_APNS_KEY_ID", "").strip()
MUSEUM_WALLET_APPLE_APNS_URL = (
    os.environ.get("MUSEUM_WALLET_APPLE_APNS_URL", "").strip().rstrip("/")
    or "https://api.push.apple.com"
)
if not MUSEUM_WALLET_APPLE_APNS_URL.startswith("https://"):
    raise ImproperlyConfigured("MUSEUM_WALLET_APPLE_APNS_URL must start with https://")


def walletpass_settings(
    *, pass_type_id: str, team_id: str, certificate: str, key: str, key_password: str, wwdr: str
) -> dict:
    """django_walletpass's WALLETPASS, which it reads at import (so it always exists): the
    library opens each path it is given, so a path not set is left out. Its web service is ours
    under /wallet/apple (museum/urls.py); Apple appends /v1/... to this URL."""
    files = {"CERT_PATH": certificate, "KEY_PATH": key, "APPLE_WWDRCA_PEM_PATH": wwdr}
    return {
        "PASS_TYPE_ID": pass_type_id or None,
        "TEAM_ID": team_id or None,
        "SERVICE_URL": MUSEUM_PUBLIC_URL + "/wallet/apple",
        "KEY_PASSWORD": key_password.encode() or None,
        **{name: path for name, path in files.items() if path},
    }


WALLETPASS = walletpass_settings(
    pass_type_id=MUSEUM_WALLET_APPLE_PASS_TYPE_ID,
    team_id=MUSEUM_WALLET_APPLE_TEAM_ID,
    certificate=MUSEUM_WALLET_APPLE_CERTIFICATE,
    key=MUSEUM_WALLET_APPLE_KEY,
    key_password=MUSEUM_WALLET_APPLE_KEY_PASSWORD,
    wwdr=MUSEUM_WALLET_APPLE_WWDR_CERTIFICATE,
)

# The audit log (docs/webhooks.md): records older than this go.
MUSEUM_AUDIT_RETENTION_DAYS = envint("MUSEUM_AUDIT_RETENTION_DAYS", 400)
# Webhooks: at most one slot.availability_changed per slot in this many seconds.
MUSEUM_AVAILABILITY_WEBHOOK_SECONDS = envint("MUSEUM_AVAILABILITY_WEBHOOK_SECONDS", 10)
# Receivers let through although their addresses are private or loopback (internal receivers,
# tests): host names or IP addresses, exactly as in the subscription's URL.
MUSEUM_WEBHOOK_ALLOWED_HOSTS = envlist("MUSEUM_WEBHOOK_ALLOWED_HOSTS", "")
# Plain http receivers: for local work only; in production every receiver is https.
MUSEUM_WEBHOOK_ALLOW_HTTP = envbool("MUSEUM_WEBHOOK_ALLOW_HTTP", DEBUG)
if MUSEUM_WEBHOOK_ALLOW_HTTP and not DEBUG:
    raise ImproperlyConfigured("MUSEUM_WEBHOOK_ALLOW_HTTP is for local work: only with DEBUG on")
if min(MUSEUM_AUDIT_RETENTION_DAYS, MUSEUM_AVAILABILITY_WEBHOOK_SECONDS) < 1:
    raise ImproperlyConfigured(
        "MUSEUM_AUDIT_RETENTION_DAYS and MUSEUM_AVAILABILITY_WEBHOOK_SECONDS must be 1+"
    )

# Wallet, Google (docs/wallet.md, "Google Wallet"): the issuer id from the Google Pay & Wallet
# Console and the path of a service account's JSON key file, both set or the links are absent
# (404 `wallet_not_configured`). Tests point the REST API at a stand-in; its calls are made while
# a visitor waits for the save link, so they give up soon (503 `wallet_unavailable`).
MUSEUM_WALLET_GOOGLE_ISSUER_ID = os.environ.get("MUSEUM_WALLET_GOOGLE_ISSUER_ID", "").strip()
MUSEUM_WALLET_GOOGLE_SERVICE_ACCOUNT = envfile("MUSEUM_WALLET_GOOGLE_SERVICE_ACCOUNT")
MUSEUM_WALLET_GOOGLE_API_URL = (
    os.environ.get("MUSEUM_WALLET_GOOGLE_API_URL", "").strip().rstrip("/")
    or "https://walletobjects.googleapis.com/walletobjects/v1"
)
MUSEUM_WALLET_GOOGLE_TIMEOUT = envfloat("MUSEUM_WALLET_GOOGLE_TIMEOUT", 5.0)
if MUSEUM_WALLET_GOOGLE_ISSUER_ID and not MUSEUM_WALLET_GOOGLE_ISSUER_ID.isdigit():
    raise ImproperlyConfigured("MUSEUM_WALLET_GOOGLE_ISSUER_ID must be the console's number")
if not MUSEUM_WALLET_GOOGLE_API_URL.startswith(("https://", "http://")):
    raise ImproperlyConfigured("MUSEUM_WALLET_GOOGLE_API_URL must start with https:// or http://")
if not 0 < MUSEUM_WALLET_GOOGLE_TIMEOUT <= 30:
    raise ImproperlyConfigured("MUSEUM_WALLET_GOOGLE_TIMEOUT must be more than 0 and at most 30")

# Local work prints each email, its attachments by name (museum/mail.py); production sets SMTP.
EMAIL_BACKEND = os.environ.get("EMAIL_BACKEND", "museum.mail.ConsoleEmailBackend")
EMAIL_HOST = os.environ.get("EMAIL_HOST", "localhost")
EMAIL_PORT = envint("EMAIL_PORT", 25)
EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = envbool("EMAIL_USE_TLS")
EMAIL_TIMEOUT = envint("EMAIL_TIMEOUT", 10)
# The file backend's folder (django.core.mail.backends.filebased.EmailBackend): one file an email.
EMAIL_FILE_PATH = os.environ.get("EMAIL_FILE_PATH") or None
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "tickets@museum.example")
