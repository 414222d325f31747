"""Django settings, all driven by environment variables (.env.example, docs/operations.md)."""

from __future__ import annotations

from pathlib import Path

from qalab.env import (
    envbool,
    envchoice,
    envdb,
    envhosts,
    envint,
    envlist,
    envshare,
    envstr,
    envthresholds,
)

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(envstr("QALAB_VAR_DIR") or BASE_DIR / "var")
VAR_DIR.mkdir(parents=True, exist_ok=True)

DEBUG = envbool("DJANGO_DEBUG", default=False)
# The embedded demo needs no configuration; a deployment must set its own key.
SECRET_KEY = envstr("DJANGO_SECRET_KEY") or "qalab-insecure-demo-key-set-DJANGO_SECRET_KEY"
ALLOWED_HOSTS = [h for h in envstr("DJANGO_ALLOWED_HOSTS", "127.0.0.1,localhost").split(",") if h]
CSRF_TRUSTED_ORIGINS = [o for o in envstr("DJANGO_CSRF_TRUSTED_ORIGINS").split(",") if o]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "django_htmx",
    "template_partials",
    "qalab",
    "runs",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "qalab.middleware.RejectNulMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "qalab.middleware.ContentSecurityPolicyMiddleware",
]

# Scripts only from this site (no inline scripts or handlers); styles may be inline (the admin
# and htmx set a few); nothing is framed, embedded or posted elsewhere.
QALAB_CONTENT_SECURITY_POLICY = envstr(
    "QALAB_CONTENT_SECURITY_POLICY",
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; object-src 'none'; base-uri 'self'; form-action 'self'; "
    "frame-ancestors 'none'",
)

ROOT_URLCONF = "qalab.urls"
WSGI_APPLICATION = "qalab.wsgi.application"

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

DATABASES = {"default": envdb("DATABASE_URL", VAR_DIR / "qalab.sqlite3")}
# Optional second role on the same database: the schema owner. When set, migrations run as it
# (`manage.py migrate --database owner`) and then grant the app role (DATABASE_URL) row access
# only; a plain `migrate` is refused (qalab/db_roles.py).
if envstr("DATABASE_OWNER_URL"):
    DATABASES["owner"] = envdb("DATABASE_OWNER_URL", VAR_DIR / "qalab.sqlite3")
# The role the owner grants row access to after a migrate (default: DATABASE_URL's user).
QALAB_DB_APP_ROLE = envstr("QALAB_DB_APP_ROLE") or str(DATABASES["default"].get("USER") or "")
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "staticfiles"
# Serve static files from the app folders directly: no collectstatic step for the demo.
WHITENOISE_USE_FINDERS = True
# WhiteNoise also serves STATIC_ROOT and warns at start-up ("No directory at ...") when it is
# missing, as it is on a fresh clone: the folder exists, empty until a collectstatic.
STATIC_ROOT.mkdir(exist_ok=True)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    # Every log line passes the redaction filter: no API key or auth value reaches a log.
    "filters": {"redact": {"()": "qalab.redact.RedactingFilter"}},
    "handlers": {
        "console": {"class": "logging.StreamHandler", "formatter": "plain", "filters": ["redact"]}
    },
    "loggers": {
        "qalab": {"handlers": ["console"], "level": envstr("QALAB_LOG_LEVEL", "INFO")},
        # A 500 (and the traceback) reaches the log, not only an unconfigured admin mailbox.
        "django.request": {"handlers": ["console"], "level": "ERROR", "propagate": False},
    },
}

# --------------------------------------------------------------------------- Celery
# With no broker configured the demo uses a folder on disk, so it needs no Redis.
_BROKER_DIR = VAR_DIR / "broker"
CELERY_BROKER_URL = envstr("CELERY_BROKER_URL") or "filesystem://"
if CELERY_BROKER_URL.startswith("filesystem://"):
    for sub in ("queue", "processed", "control"):
        (_BROKER_DIR / sub).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_BROKER_DIR / "queue"),
        "data_folder_out": str(_BROKER_DIR / "queue"),
        "processed_folder": str(_BROKER_DIR / "processed"),
        # Exchange tables; kombu's default is a `control/` folder in the working directory.
        "control_folder": str(_BROKER_DIR / "control"),
        "store_processed": False,
    }
else:
    # Tasks must finish (or be reaped) well inside the visibility timeout, or Redis redelivers.
    CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 3600}
CELERY_TASK_DEFAULT_QUEUE = envstr("QALAB_CELERY_QUEUE", "qalab")
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_IGNORE_RESULT = True
# On SIGTERM (with REMAP_SIGTERM=SIGQUIT in the worker's environment, as the demo and
# docker-compose set it) a worker waits this long for its tasks, then stops them; their cases
# are resumed by the next worker after their last written turn.
CELERY_WORKER_SOFT_SHUTDOWN_TIMEOUT = float(envint("QALAB_WORKER_STOP_SECONDS", 20, minimum=1))
CELERY_TASK_SOFT_TIME_LIMIT = 1200
CELERY_TASK_TIME_LIMIT = 1500
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# How often beat asks for work left behind by dead workers (expired case leases, stalled runs).
QALAB_REAP_SECONDS = envint("QALAB_REAP_SECONDS", 60, minimum=1)
CELERY_BEAT_SCHEDULE = {
    "reap-stale-work": {
        "task": "runs.tasks.reap_stale_work_task",
        "schedule": float(QALAB_REAP_SECONDS),
    },
}

# --------------------------------------------------------------------------- AI QA Lab
QALAB_LLM_ENGINE = envchoice("QALAB_LLM_ENGINE", "offline", ("offline", "openai"))
QALAB_LLM_BASE_URL = envstr("QALAB_LLM_BASE_URL")
# Checked when the openai engine is built (qalab.llm.get_engine), never at import.
QALAB_LLM_API_KEY = envstr("QALAB_LLM_API_KEY") or envstr("OPENAI_API_KEY")
QALAB_LLM_JSON_MODE = envchoice(
    "QALAB_LLM_JSON_MODE", "json_schema", ("json_schema", "json_object", "text", "auto")
)
# Above this share of LLM tasks done by the offline implementation instead of the model (replies
# that never validated), a run ends `error` rather than carry a verdict the model did not earn.
QALAB_LLM_MAX_FALLBACK_SHARE = envshare("QALAB_LLM_MAX_FALLBACK_SHARE", 0.2)
# How system messages reach the server: as they are, as user messages, or merged into the first
# user message (for chat templates that drop or refuse the system role); `auto`: one probe per
# endpoint picks `system` or `merge` (qalab.llm.probe.probe_system_role).
QALAB_LLM_SYSTEM_ROLE = envchoice(
    "QALAB_LLM_SYSTEM_ROLE", "system", ("system", "user", "merge", "auto")
)
QALAB_LLM_TIMEOUT_SECONDS = envint("QALAB_LLM_TIMEOUT_SECONDS", 60, minimum=1)
QALAB_LLM_MAX_RETRIES = envint("QALAB_LLM_MAX_RETRIES", 4, minimum=0)
# LLM calls of one stage that may be in flight at once from one worker: a run's fixture items,
# and its per-case reviews and confirmations, do not depend on each other (1 = one at a time).
QALAB_LLM_CONCURRENCY = envint("QALAB_LLM_CONCURRENCY", 8, minimum=1)
# A folder of recorded replies to replay (empty = off): reruns cost no tokens.
QALAB_LLM_REPLAY_DIR = envstr("QALAB_LLM_REPLAY_DIR")
QALAB_GENERATOR_MODEL = envstr("QALAB_GENERATOR_MODEL", "gpt-4o-mini")
QALAB_SIMULATOR_MODEL = envstr("QALAB_SIMULATOR_MODEL", "gpt-4o-mini")
QALAB_JUDGE_MODEL = envstr("QALAB_JUDGE_MODEL", "gpt-4o-mini")
QALAB_RESPONDER_MODEL = envstr("QALAB_RESPONDER_MODEL", "gpt-4o-mini")
# Responders reached over HTTP: timeouts, a reply size cap, and an optional auth header whose
# value is read from the environment variable named here (never stored in a run).
QALAB_RESPONDER_CONNECT_TIMEOUT = envint("QALAB_RESPONDER_CONNECT_TIMEOUT", 5, minimum=1)
QALAB_RESPONDER_READ_TIMEOUT = envint("QALAB_RESPONDER_READ_TIMEOUT", 30, minimum=1)
# The whole reply, however slowly it trickles in (well inside the case lease).
QALAB_RESPONDER_TOTAL_TIMEOUT = envint("QALAB_RESPONDER_TOTAL_TIMEOUT", 120, minimum=1)
QALAB_RESPONDER_MAX_REPLY_BYTES = envint("QALAB_RESPONDER_MAX_REPLY_BYTES", 1_000_000, minimum=1024)
QALAB_RESPONDER_AUTH_HEADER = envstr("QALAB_RESPONDER_AUTH_HEADER", "Authorization")
QALAB_RESPONDER_AUTH_ENV = envstr("QALAB_RESPONDER_AUTH_ENV")
# Where an http(s):// responder may point besides public addresses: comma-separated host names
# and networks (CIDR). Empty: public addresses only; private, loopback, link-local, multicast,
# unspecified, reserved and cloud metadata addresses are refused, at run creation and again at
# every connection (runs/simulator/outbound.py).
QALAB_RESPONDER_ALLOWED_HOSTS = envhosts("QALAB_RESPONDER_ALLOWED_HOSTS")
# `python:module:function` responders the web form may start (comma-separated specs). The web
# accepts `reference`, `canary:...` and `http(s)://...` (where the outbound policy above lets
# it point) always, other Python code only from here; the command line (an operator's shell)
# may run any spec.
QALAB_WEB_PYTHON_RESPONDERS = envlist("QALAB_WEB_PYTHON_RESPONDERS")
# Folders an `openai-chat:` responder's `prompt=file:` may read from (comma-separated; relative
# to the project). The command line also reads from anywhere in the project; the web form only
# from these, since the project holds settings and var/.
QALAB_RESPONDER_PROMPT_DIRS = envlist("QALAB_RESPONDER_PROMPT_DIRS") or ("docs/prompts",)
# An `openai-chat:` bot on the offline engine calls no model: the reference bot would answer in
# its place, so such a run is refused at creation. On: it is made, as one of the lab's own runs
# (left out of lists, trends, baselines and triage carry-over), every report saying the bot was
# not called (tests and demos of the responder's plumbing).
QALAB_OPENAI_CHAT_STAND_IN = envbool("QALAB_OPENAI_CHAT_STAND_IN", False)
# The bot's own token budget per run when the lab runs the bot (role `responder`: an
# `openai-chat:` bot, the reference bot), metered apart from the lab's roles; empty = the
# preset's budget. The Start run form and `qalab_run --responder-budget` override it.
QALAB_RESPONDER_TOKEN_BUDGET: int | None = (
    envint("QALAB_RESPONDER_TOKEN_BUDGET", 0, minimum=1) or None
)
# At most this many cases of one run talk to the responder at the same time.
QALAB_RUN_MAX_CONCURRENT_CASES = envint("QALAB_RUN_MAX_CONCURRENT_CASES", 4, minimum=1)
# What one org folder may hold (qalab_import_org): bytes of any one file (org.yaml, a kb/*.md),
# and of all its KB documents together. A larger folder is refused naming the file and limit.
QALAB_ORG_MAX_FILE_BYTES = envint("QALAB_ORG_MAX_FILE_BYTES", 2 * 2**20, minimum=1024)
QALAB_ORG_MAX_KB_BYTES = envint("QALAB_ORG_MAX_KB_BYTES", 10 * 2**20, minimum=1024)
QALAB_FIXTURES_DIR = Path(envstr("QALAB_FIXTURES_DIR") or BASE_DIR / "docs" / "kb-fixtures")
QALAB_CASE_LEASE_SECONDS = envint("QALAB_CASE_LEASE_SECONDS", 300, minimum=10)
# The judge's semantic layer (judge/semantic/: a sentence encoder and small heads): `off` runs the
# deterministic checks alone. Its model files come from the installed packages, or from
# QALAB_SEMANTIC_MODEL_DIR (the pinned files, checked by sha256 either way); per-rule threshold
# overrides as RULE=VALUE,... (judge/semantic/thresholds.py has the rules and defaults).
QALAB_SEMANTIC = envchoice("QALAB_SEMANTIC", "on", ("on", "off"))
QALAB_SEMANTIC_MODEL_DIR = envstr("QALAB_SEMANTIC_MODEL_DIR")
QALAB_SEMANTIC_THRESHOLDS = envthresholds("QALAB_SEMANTIC_THRESHOLDS")
# CPU seconds the judge's checks may spend on one case (issue 33): past them the remaining
# checks and the semantic layer are skipped, and the report names them.
QALAB_JUDGE_DEADLINE_S = envint("QALAB_JUDGE_DEADLINE_S", 10, minimum=1)
# Characters of each customer message, bot reply and extracted value the judge reads (issue
# 33): a longer text is judged on its prefix, and the report names the turns cut.
QALAB_JUDGE_MAX_CHARS = envint("QALAB_JUDGE_MAX_CHARS", 20_000, minimum=1_000)
# The judge accuracy page (issue 36): a rule whose precision on the organization's triage labels
# is below the floor, once it has at least that many labels, is flagged with its worst examples.
QALAB_JUDGE_PRECISION_FLOOR = envshare("QALAB_JUDGE_PRECISION_FLOOR", 0.7)
QALAB_JUDGE_PRECISION_MIN_LABELS = envint("QALAB_JUDGE_PRECISION_MIN_LABELS", 20, minimum=1)
QALAB_RUN_STALL_SECONDS = envint("QALAB_RUN_STALL_SECONDS", 900, minimum=30)
