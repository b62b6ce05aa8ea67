"""The multi-session projects bench/sessions_bench.py runs through the real clients.

A scenario is a project (a git repository with files the model's tool calls read), a second
project sharing the same store (whose memory must never reach the first one), and an ordered
list of sessions:

- a ``Learn`` session finds something out through real tool calls (shell commands the client
  runs) and says it in its last answer: a cause found, a decision taken, the provider in use
  after a switch, who owns what;
- a ``Use`` session's prompt needs facts learned earlier; its prompt never contains the fact's
  key phrases (checked on import), so a phrase in the model's first request came from memory.
  When the facts did not reach it, the scripted model looks them up again (``lookup``); a
  ``Use`` with no ``needs`` is a prompt memory does not cover.

``DEV`` (a web shop) is the set the bench is developed against. ``HELD_OUT`` (a data-pipeline
team) was written together with it, before any figure was seen, and is never tuned on: the
bench reports it separately, labelled held-out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal


@dataclass(frozen=True)
class Fact:
    key: str
    kind: Literal["cause", "decision", "provider", "owner"]
    phrases: tuple[str, ...]  # every one must reach the model (matched case-insensitively)


@dataclass(frozen=True)
class Learn:
    prompt: str
    tools: tuple[str, ...]  # shell commands the model runs, in order, before it answers
    says: str  # its last answer: what the session found
    learns: tuple[str, ...] = ()


@dataclass(frozen=True)
class Use:
    prompt: str
    needs: tuple[str, ...]  # fact keys; empty: a prompt memory does not cover
    lookup: tuple[str, ...]  # what the model runs when the facts did not reach it
    answer: str


Session = Learn | Use


@dataclass(frozen=True)
class Project:
    name: str
    origin: str  # the git remote: the project's namespace follows it, wherever the folder is
    files: dict[str, str]
    facts: tuple[Fact, ...]

    def fact(self, key: str) -> Fact:
        return next(f for f in self.facts if f.key == key)


@dataclass(frozen=True)
class Scenario:
    name: str
    split: Literal["dev", "held-out"]
    project: Project
    other: Project
    sessions: tuple[tuple[str, Session], ...]  # (project name, session) in the order they run
    quick: tuple[int, ...] = field(default=())  # indexes of the sessions a --quick run keeps
    # Texts that must never be stored nor reach a later session: a secret a tool call prints, a
    # <private> span of a prompt.
    secrets: tuple[str, ...] = field(default=())

    def projects(self) -> dict[str, Project]:
        return {self.project.name: self.project, self.other.name: self.other}

    def check(self) -> None:
        """Every needed fact exists and was learned earlier; no prompt carries its own answer."""
        learned: set[tuple[str, str]] = set()
        for name, session in self.sessions:
            project = self.projects()[name]
            if isinstance(session, Learn):
                for key in session.learns:
                    fact = project.fact(key)
                    assert all(p.lower() in session.says.lower() for p in fact.phrases), (self.name, key)
                    learned.add((name, key))
                continue
            for key in session.needs:
                assert (name, key) in learned, f"{self.name}: {key} is needed before it is learned"
                for phrase in project.fact(key).phrases:
                    assert phrase.lower() not in session.prompt.lower(), (self.name, key, phrase)
        for project in self.projects().values():
            for fact in project.facts:
                assert (project.name, fact.key) in learned, f"{self.name}: {fact.key} is never learned"


# --- dev: a web shop --------------------------------------------------------------------------
SHOP_KEY = "sk-proj-Q7vN2xLp9RtY4mKc8WbZ3hJd6FsA1eGu5TqXoPiVnBy0"
SHOP_PRIVATE = "Tom is out until the 20th for surgery"
SHOP = Project(
    name="shop",
    origin="git@github.com:acme/shop.git",
    files={
        "README.md": "# shop\n\nThe acme web shop: catalog, cart, checkout, billing, search.\n",
        "ci/nightly.yml": (
            "name: nightly\non:\n  schedule:\n    - cron: '30 23 * * *'\njobs:\n  test:\n"
            "    runs-on: ubuntu-latest\n    env:\n      DATABASE_URL: postgres://ci@localhost/shop\n"
            "    steps:\n      - uses: actions/checkout@v4\n      - run: pip install -e .\n"
            "      - run: pytest tests/test_reports.py\n"
        ),
        "tests/test_reports.py": (
            "from datetime import datetime\nfrom shop.reports import report_day\n\n\n"
            "def test_late_order_counts_for_its_local_day():\n"
            "    # 23:30 in Berlin is still the 5th; in UTC it would be the 6th.\n"
            "    assert report_day(datetime(2026, 12, 5, 23, 30)).day == 5\n"
        ),
        "docs/adr/0007-order-events.md": (
            "# ADR 0007: order events\n\nStatus: accepted (2026-10-02)\n\n"
            "Order events go on Redis Streams, not Kafka: we already run Redis, the volume is\n"
            "about 200 events/s, and consumer groups give us replay. Revisit above 5k/s.\n"
        ),
        "services/payments/gateway.py": (
            'PROVIDER = "stripe"\nWEBHOOK_PATH = "/webhooks/stripe"\n\n\n'
            "def charge(order, amount_cents):\n    ...\n"
        ),
        "CODEOWNERS": "/services/billing/ @dana\n/services/search/ @priya\n/web/ @tom\n",
        "docker-compose.yml": (
            "services:\n  redis:\n    image: redis:7\n  app:\n    build: .\n    depends_on:\n"
            "      - redis\n  e2e:\n    build: .\n    command: pytest tests/e2e\n    depends_on:\n      - redis\n"
        ),
        "tests/e2e/test_checkout.py": (
            "import redis\n\n\ndef test_checkout_places_order():\n"
            "    r = redis.Redis(host='redis')  # connects at import time of the fixture\n"
            "    assert r.ping()\n"
        ),
        "shop/money.py": (
            "from dataclasses import dataclass\n\n\n@dataclass(frozen=True)\nclass Money:\n"
            "    cents: int  # prices are integer cents; never floats\n    currency: str = 'EUR'\n"
        ),
        "config/email.toml": '[email]\nprovider = "postmark"\nfrom = "orders@acme.example"\n',
        ".env": f"OPENAI_API_KEY={SHOP_KEY}\nPOSTMARK_SENDER=orders@acme.example\n",
        "scripts/export_csv.py": "import csv\nimport sys\n\n\ndef main():\n    csv.writer(sys.stdout).writerow(['id'])\n",
    },
    facts=(
        Fact("nightly-tz", "cause", ("TZ is unset",)),
        Fact("order-events", "decision", ("Redis Streams", "Kafka")),
        Fact("payments-adyen", "provider", ("Adyen",)),
        Fact("billing-owner", "owner", ("Dana",)),
        Fact("checkout-flaky", "cause", ("healthcheck",)),
        Fact("money-cents", "decision", ("integer cents",)),
        Fact("email-postmark", "provider", ("Postmark",)),
        Fact("search-owner", "owner", ("Priya",)),
    ),
)

BLOG = Project(
    name="blog",
    origin="git@github.com:acme/blog.git",
    files={
        "README.md": "# blog\n\nThe acme engineering blog, a static site.\n",
        "deploy/bucket-policy.json": '{"Statement": [{"Effect": "Deny", "Action": "s3:PutObject"}]}\n',
        "OWNERS": "theme/ marco\n",
    },
    facts=(
        Fact("blog-deploy", "cause", ("bucket policy denies PutObject",)),
        Fact("theme-owner", "owner", ("Marco",)),
    ),
)

DEV = Scenario(
    name="web shop",
    split="dev",
    project=SHOP,
    other=BLOG,
    sessions=(
        (
            "shop",
            Learn(
                "The nightly build has been red since Monday. Find out why.",
                ("cat ci/nightly.yml", "cat tests/test_reports.py"),
                "Found it: the nightly build fails because TZ is unset in CI. ci/nightly.yml sets no TZ, so "
                "the report tests run in UTC and the 23:30 order lands on the next day. Setting TZ=Europe/Berlin "
                "in the job's env fixes it.",
                ("nightly-tz",),
            ),
        ),
        (
            "blog",
            Learn(
                "The blog deploy fails with AccessDenied. Why?",
                ("cat deploy/bucket-policy.json",),
                "The deploy fails because the bucket policy denies PutObject for every principal, the deploy "
                "role included.",
                ("blog-deploy",),
            ),
        ),
        (
            "shop",
            Learn(
                "Should order events go to Kafka or Redis? Read the ADR and settle it.",
                ("cat docs/adr/0007-order-events.md",),
                "Settled by ADR 0007 (accepted): we chose Redis Streams over Kafka for order events, since we "
                "already run Redis and the volume is about 200 events/s. Revisit above 5k events/s.",
                ("order-events",),
            ),
        ),
        (
            "shop",
            Learn(
                "Which payment provider does checkout use today?",
                ("grep -rn PROVIDER services/payments",),
                'Checkout charges through Stripe: services/payments/gateway.py has PROVIDER = "stripe" and the '
                "webhook at /webhooks/stripe.",
            ),
        ),
        (
            "shop",
            Learn(
                f"Who owns billing and who owns search? I need reviewers for next week. <private>{SHOP_PRIVATE}</private>",
                ("cat CODEOWNERS",),
                "From CODEOWNERS: Dana owns the billing service (services/billing) and Priya owns the search "
                "service (services/search); Tom has the web frontend.",
                ("billing-owner", "search-owner"),
            ),
        ),
        (
            "shop",
            Learn(
                "We signed with Adyen. Switch the payment gateway over.",
                (
                    "sed -i 's/stripe/adyen/g' services/payments/gateway.py",
                    "cat services/payments/gateway.py",
                ),
                "Done: payments moved from Stripe to Adyen. services/payments/gateway.py now has "
                'PROVIDER = "adyen" and the webhook path /webhooks/adyen; Stripe is no longer called.',
                ("payments-adyen",),
            ),
        ),
        (
            "blog",
            Learn(
                "Who maintains the blog theme?",
                ("cat OWNERS",),
                "Marco maintains the blog theme (OWNERS lists marco for theme/).",
                ("theme-owner",),
            ),
        ),
        (
            "shop",
            Learn(
                "The checkout e2e test fails every few runs on CI. Why?",
                ("cat docker-compose.yml", "cat tests/e2e/test_checkout.py"),
                "The checkout e2e test is flaky because the redis service has no healthcheck: depends_on only "
                "waits for the container to start, so the test sometimes connects before Redis accepts "
                "connections. Adding a healthcheck with condition: service_healthy fixes it.",
                ("checkout-flaky",),
            ),
        ),
        (
            "shop",
            Learn(
                "Are prices floats or ints in this codebase? I am about to touch the cart.",
                ("cat shop/money.py",),
                "We decided to store prices as integer cents: shop/money.py's Money holds cents: int and a "
                "currency, and floats are not allowed for amounts.",
                ("money-cents",),
            ),
        ),
        (
            "shop",
            Learn(
                "Order confirmation emails stopped arriving in staging. What changed?",
                ("cat config/email.toml", "cat .env", "git log --oneline -3"),
                "Transactional email moved from SendGrid to Postmark (config/email.toml now says provider = "
                '"postmark"); staging still has only the old SendGrid key, so its sends fail.',
                ("email-postmark",),
            ),
        ),
        # Later sessions: each prompt needs what an earlier one found.
        (
            "shop",
            Use(
                "The nightly is red again this morning. Same problem as last time?",
                ("nightly-tz",),
                ("cat ci/nightly.yml",),
                "Yes, the same cause as before; the fix is in the job's env.",
            ),
        ),
        (
            "shop",
            Use(
                "Add a 5% loyalty discount to the cart total.",
                (),
                ("cat shop/money.py",),
                "Added the loyalty discount to the cart total.",
            ),
        ),
        (
            "shop",
            Use(
                "I am adding a consumer for order events. Which broker do we publish them to?",
                ("order-events",),
                ("cat docs/adr/0007-order-events.md",),
                "Publish to the order events stream as the ADR says.",
            ),
        ),
        (
            "shop",
            Use(
                "Write the refund call for checkout. Which payment provider's API should it use?",
                ("payments-adyen",),
                ("cat services/payments/gateway.py",),
                "The refund goes through the current gateway.",
            ),
        ),
        (
            "shop",
            Use(
                "Add a --verbose flag to scripts/export_csv.py that prints the row count to stderr.",
                (),
                ("cat scripts/export_csv.py",),
                "Added --verbose.",
            ),
        ),
        (
            "shop",
            Use(
                "I changed how invoices round. Who should review my billing change?",
                ("billing-owner",),
                ("cat CODEOWNERS",),
                "Ask the billing owner for the review.",
            ),
        ),
        (
            "shop",
            Use(
                "test_checkout failed on CI again. Is that a known issue?",
                ("checkout-flaky",),
                ("cat docker-compose.yml",),
                "Yes, a known flake in the compose setup.",
            ),
        ),
        (
            "blog",
            Use(
                "The blog deploy is failing again. Anything known about it?",
                ("blog-deploy",),
                ("cat deploy/bucket-policy.json",),
                "A known deploy problem.",
            ),
        ),
        (
            "shop",
            Use(
                "For the new gift-card code, how should I store the amounts?",
                ("money-cents",),
                ("cat shop/money.py",),
                "Store them the way Money does.",
            ),
        ),
        (
            "shop",
            Use(
                "Explain what a Python dataclass __post_init__ is for, with a short example.",
                (),
                (),
                "__post_init__ runs after the generated __init__.",
            ),
        ),
        (
            "shop",
            Use(
                "Customers say their order confirmation emails are missing. Which email service do we "
                "send them with?",
                ("email-postmark",),
                ("cat config/email.toml",),
                "We send them through the configured provider.",
            ),
        ),
        (
            "shop",
            Use(
                "Who should I ask about the search ranking bug?",
                ("search-owner",),
                ("cat CODEOWNERS",),
                "Ask the search owner.",
            ),
        ),
    ),
    # learn: nightly, blog deploy, ADR, owners; use: nightly, uncovered, owners, blog
    quick=(0, 1, 2, 4, 10, 11, 15, 17),
    secrets=(SHOP_KEY, SHOP_PRIVATE),
)


# --- held-out: a data-pipeline team (written with DEV, before any result; never tuned on) -------
PIPELINE_PASSWORD = "Wq83-trellis-Vapor"
PIPELINE_PRIVATE = "Omar asked not to be paged at night"
PIPELINE = Project(
    name="pipeline",
    origin="git@github.com:datateam/pipeline.git",
    files={
        "README.md": "# pipeline\n\nHourly event ingest, nightly aggregates, dashboards.\n",
        "jobs/ingest_hourly.py": (
            "import pyarrow.parquet as pq\n\n\ndef write(partition, rows):\n"
            "    table = build_table(list(rows))  # materialises the whole partition\n"
            "    pq.write_table(table, f'out/{partition}.parquet')\n"
        ),
        "logs/ingest-2026-12-01.log": "12:00:03 start partition=2026-12-01T11\n12:15:00 killed: timeout after 900 s, rss=14.8 GB\n",
        "docs/decisions.md": (
            "# Decisions\n\n2026-09-14 nightly aggregates: DuckDB on one large VM instead of a Spark\n"
            "cluster. Data is 300 GB/day; Spark's cluster cost is not worth it below a few TB.\n"
        ),
        "profiles.yml": "warehouse:\n  type: bigquery\n  project: datateam-prod\n  dataset: events\n",
        "OWNERS.md": "| area | owner |\n|---|---|\n| airflow DAGs | Lena |\n| schema registry | Omar |\n| dashboards | Sam |\n",
        "jobs/dedupe.sql": "SELECT DISTINCT ON (event_id) * FROM raw_events ORDER BY event_id, received_at\n",
        "models/events.sql": "{{ config(partition_by={'field': 'event_date'}) }}\nSELECT * FROM staging_events\n",
        "alerting/routes.yml": "receiver: opsgenie\nteam: data-oncall\n",
        ".env": f"WAREHOUSE_URL=postgres://etl:{PIPELINE_PASSWORD}@db.internal:5432/warehouse\n",
    },
    facts=(
        Fact("ingest-timeout", "cause", ("whole partition in memory",)),
        Fact("aggregates-duckdb", "decision", ("DuckDB", "Spark")),
        Fact("warehouse-bigquery", "provider", ("BigQuery",)),
        Fact("dags-owner", "owner", ("Lena",)),
        Fact("sunday-drop", "cause", ("without the source",)),
        Fact("partition-event-date", "decision", ("event date, not ingest date",)),
        Fact("alerts-opsgenie", "provider", ("Opsgenie",)),
        Fact("registry-owner", "owner", ("Omar",)),
    ),
)

MOBILE = Project(
    name="mobile",
    origin="git@github.com:datateam/mobile-app.git",
    files={
        "README.md": "# mobile-app\n\nThe iOS and Android app.\n",
        "RELEASES.md": "iOS release train: Kim. Android release train: Ravi.\n",
        "push/config.json": '{"provider": "firebase"}\n',
    },
    facts=(
        Fact("ios-release-owner", "owner", ("Kim",)),
        Fact("push-firebase", "provider", ("Firebase Cloud Messaging",)),
    ),
)

HELD_OUT = Scenario(
    name="data pipeline",
    split="held-out",
    project=PIPELINE,
    other=MOBILE,
    sessions=(
        (
            "pipeline",
            Learn(
                "The hourly ingest job keeps timing out. Find the cause.",
                ("cat logs/ingest-2026-12-01.log", "cat jobs/ingest_hourly.py"),
                "The hourly ingest times out because the Parquet writer builds the whole partition in memory "
                "before writing: the log shows 14.8 GB RSS when it was killed at 900 s. Writing row groups "
                "as they come (pq.ParquetWriter) fixes it.",
                ("ingest-timeout",),
            ),
        ),
        (
            "mobile",
            Learn(
                "Who runs the iOS release train?",
                ("cat RELEASES.md",),
                "Kim runs the iOS release train; Ravi runs Android's.",
                ("ios-release-owner",),
            ),
        ),
        (
            "pipeline",
            Learn(
                "Spark or DuckDB for the nightly aggregates? Check what we decided.",
                ("cat docs/decisions.md",),
                "We chose DuckDB over Spark for the nightly aggregates (decided 2026-09-14): 300 GB a day "
                "runs on one large VM, and a Spark cluster is not worth its cost below a few TB.",
                ("aggregates-duckdb",),
            ),
        ),
        (
            "pipeline",
            Learn(
                "Which warehouse do the models load into now? The old docs say Redshift.",
                ("cat profiles.yml", "cat .env"),
                "The warehouse moved from Redshift to BigQuery: profiles.yml targets BigQuery (project "
                "datateam-prod, dataset events). The Redshift docs are out of date.",
                ("warehouse-bigquery",),
            ),
        ),
        (
            "pipeline",
            Learn(
                f"Who owns the Airflow DAGs and who owns the schema registry? <private>{PIPELINE_PRIVATE}</private>",
                ("cat OWNERS.md",),
                "Per OWNERS.md, Lena owns the Airflow DAGs and Omar owns the schema registry; Sam has the "
                "dashboards.",
                ("dags-owner", "registry-owner"),
            ),
        ),
        (
            "mobile",
            Learn(
                "Which push provider does the app use?",
                ("cat push/config.json",),
                "Push notifications go through Firebase Cloud Messaging (push/config.json).",
                ("push-firebase",),
            ),
        ),
        (
            "pipeline",
            Learn(
                "The dashboard event counts drop every Sunday. Why?",
                ("cat jobs/dedupe.sql",),
                "The Sunday drop comes from the dedupe step: it keys on event_id without the source, and on "
                "Sundays the web and app sources replay overlapping ids, so real events are dropped as "
                "duplicates. Keying on (source, event_id) fixes it.",
                ("sunday-drop",),
            ),
        ),
        (
            "pipeline",
            Learn(
                "How should the events table be partitioned? I see both dates in the code.",
                ("cat models/events.sql",),
                "We decided to partition the events table by event date, not ingest date: late events then "
                "land in their own day and the daily aggregates stay correct.",
                ("partition-event-date",),
            ),
        ),
        (
            "pipeline",
            Learn(
                "Where do pipeline alerts go these days?",
                ("cat alerting/routes.yml",),
                "Alerts moved from PagerDuty to Opsgenie: alerting/routes.yml sends them to the data-oncall "
                "team in Opsgenie.",
                ("alerts-opsgenie",),
            ),
        ),
        (
            "pipeline",
            Use(
                "The hourly ingest failed overnight again. Do we know what causes that?",
                ("ingest-timeout",),
                ("cat jobs/ingest_hourly.py",),
                "The known cause; the writer needs fixing.",
            ),
        ),
        (
            "pipeline",
            Use(
                "Rename the column usr_id to user_id in models/events.sql.",
                (),
                ("cat models/events.sql",),
                "Renamed the column.",
            ),
        ),
        (
            "pipeline",
            Use(
                "I need a new weekly rollup job. Which engine should it run on?",
                ("aggregates-duckdb",),
                ("cat docs/decisions.md",),
                "Use the engine we decided on.",
            ),
        ),
        (
            "pipeline",
            Use(
                "Write the connection settings for the new model. Which warehouse do we target?",
                ("warehouse-bigquery",),
                ("cat profiles.yml",),
                "Target the current warehouse.",
            ),
        ),
        (
            "mobile",
            Use(
                "Who should sign off the next iOS release?",
                ("ios-release-owner",),
                ("cat RELEASES.md",),
                "The release train owner signs off.",
            ),
        ),
        (
            "pipeline",
            Use(
                "Who should review my change to the Airflow DAGs?",
                ("dags-owner",),
                ("cat OWNERS.md",),
                "The DAG owner.",
            ),
        ),
        (
            "pipeline",
            Use(
                "What does SQL's COALESCE do? One sentence.",
                (),
                (),
                "It returns its first non-null argument.",
            ),
        ),
        (
            "pipeline",
            Use(
                "Sunday numbers on the dashboard look low again. Known problem?",
                ("sunday-drop",),
                ("cat jobs/dedupe.sql",),
                "Yes, the dedupe step.",
            ),
        ),
        (
            "pipeline",
            Use(
                "I am adding a late-arriving events backfill. Which date column partitions the events table?",
                ("partition-event-date",),
                ("cat models/events.sql",),
                "The decided one.",
            ),
        ),
        (
            "pipeline",
            Use(
                "Set up the on-call alert for the new job. Which alerting service do we route to?",
                ("alerts-opsgenie",),
                ("cat alerting/routes.yml",),
                "The current alerting service.",
            ),
        ),
        (
            "pipeline",
            Use(
                "A producer wants to add a field to the events schema. Who approves that?",
                ("registry-owner",),
                ("cat OWNERS.md",),
                "The schema registry owner.",
            ),
        ),
    ),
    quick=(0, 1, 2, 4, 9, 10, 13, 14),
    secrets=(PIPELINE_PASSWORD, PIPELINE_PRIVATE),
)

SCENARIOS = (DEV, HELD_OUT)
for _scenario in SCENARIOS:
    _scenario.check()
