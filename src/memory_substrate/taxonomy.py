"""Vocabularies of the knowledge graph: entity types, canonical predicates, evidence statuses, trust.

Everything here is data with a reason; docs/knowledge-graph.md explains each choice.
"""

from __future__ import annotations

import re
import unicodedata

ENTITY_TYPES = (
    "person",
    "organization",
    "project",
    "service",
    "technology",
    "pattern",
    "environment",
    "document",
    "metric",
    "decision",
)
MAX_ENTITIES_PER_EPISODE = 10

# The canonical predicates of the knowledge graph, in four categories. The design calls them "24 verbs"
# but lists 25; all 25 listed are canonical here (docs/knowledge-graph.md notes the discrepancy).
PREDICATE_CATEGORIES: dict[str, tuple[str, ...]] = {
    "structure": ("uses", "used_by", "contains", "contained_in", "depends_on", "dependency_of"),
    "implementation": (
        "implements",
        "implemented_by",
        "integrates_with",
        "authored",
        "authored_by",
        "owns",
        "owned_by",
    ),
    "change": ("replaced", "replaced_by", "decided", "decided_by", "deployed_to"),
    "operation": ("hosts", "manages", "managed_by", "configured_with", "targets", "blocks", "blocked_by"),
}
CANONICAL_PREDICATES: tuple[str, ...] = tuple(p for group in PREDICATE_CATEGORIES.values() for p in group)
assert len(CANONICAL_PREDICATES) == 25 and len(set(CANONICAL_PREDICATES)) == 25

# Predicates that naturally hold many objects at once for one subject: a new object is an
# addition, never a change, so they do not supersede (nor conflict). Every other predicate,
# canonical or custom, is single-valued: a new object for the same subject replaces the old
# one over time. `uses` stays single-valued: a project that switches tools replaces what it uses.
MANY_VALUED_PREDICATES = frozenset(
    {
        "used_by",
        "contains",
        "depends_on",
        "dependency_of",
        "implements",
        "implemented_by",
        "integrates_with",
        "authored",
        "owns",
        "decided",
        "hosts",
        "manages",
        "configured_with",
        "targets",
        "blocks",
        "blocked_by",
    }
)

PROCEDURE_KINDS = ("workflow", "decision_rule", "best_practice", "convention", "troubleshooting")
PROCEDURE_START_CONFIDENCE = 0.3
PROCEDURE_PROMOTION_EPISODES = 3
PROCEDURE_PROMOTION_CONFIDENCE = 0.8

# Evidence statuses of the knowledge graph with the score the compiler's stability dimension reads, the
# trust rank that decides who may supersede or contest whom, and the memory_remember knowledge status
# each maps onto (docs/knowledge-graph.md has the table).
EVIDENCE_SCORES: dict[str, float] = {
    "user_asserted": 1.0,
    "observed": 0.9,
    "promoted": 0.85,
    "extracted": 0.7,
    "inferred": 0.5,
    "deprecated": 0.2,
    "superseded": 0.0,
}
EVIDENCE_STATUSES = tuple(EVIDENCE_SCORES)
TRUST_RANK: dict[str, int] = {
    "user_asserted": 4,
    "observed": 3,
    "promoted": 3,
    "extracted": 2,
    "inferred": 1,
    "deprecated": 0,
    "superseded": 0,
}
KNOWLEDGE_STATUS_OF: dict[str, str] = {
    "user_asserted": "active",
    "observed": "active",
    "promoted": "active",
    "extracted": "active",
    "inferred": "candidate",
    "deprecated": "stale",
    "superseded": "superseded",
}


def default_evidence_status(memory_source: str | None, *, has_evidence: bool) -> str:
    """The evidence status a write earns from who made it and whether it cites captured evidence."""
    if memory_source in ("user_declared", "human_curated"):
        return "user_asserted"
    if memory_source == "system_generated":
        return "observed" if has_evidence else "inferred"
    return "extracted" if has_evidence else "inferred"


def evidence_status_of(metadata: dict[str, object], memory_source: str | None, has_evidence: bool) -> str:
    status = metadata.get("evidence_status")
    if isinstance(status, str) and status in EVIDENCE_SCORES:
        return status
    return default_evidence_status(memory_source, has_evidence=has_evidence)


def trust_rank(metadata: dict[str, object], memory_source: str | None, has_evidence: bool) -> int:
    """Trust of a claim. User-declared and human-curated claims outrank everything a model or
    agent wrote; a lower rank never supersedes, contests or demotes a higher one."""
    if memory_source in ("user_declared", "human_curated"):
        return TRUST_RANK["user_asserted"]
    return TRUST_RANK[evidence_status_of(metadata, memory_source, has_evidence)]


# --- names -------------------------------------------------------------------------------
_SEPARATORS = re.compile(r"[\s\-_./:]+")


def normalize_name(name: str) -> str:
    """Case-, width- and separator-insensitive form of a name ("customer-portal" == "Customer Portal")."""
    text = unicodedata.normalize("NFKC", name).casefold().replace("\x00", "")
    return _SEPARATORS.sub(" ", text).strip()


def normalize_predicate(predicate: str) -> str:
    text = unicodedata.normalize("NFKC", predicate).strip().casefold()
    return re.sub(r"[\s\-]+", "_", text)


# Generic concepts are refused as entities ("authentication is not an entity"). A name
# is generic when every word of it is a common technical word below and it carries no
# proper-name signal: one such word alone ("Authentication", "database") is always refused; a
# phrase of them is refused when written as plain lower-case words ("event delivery system") and
# kept when written as a name ("Webhook Gateway"), an identifier ("webhook-gateway") or with a
# digit ("auth service v2").
GENERIC_WORDS = frozenset(
    [
        "access",
        "account",
        "accounts",
        "action",
        "actions",
        "admin",
        "agent",
        "agents",
        "alert",
        "alerts",
        "algorithm",
        "analytics",
        "api",
        "apis",
        "app",
        "application",
        "applications",
        "architecture",
        "async",
        "auth",
        "authentication",
        "authorization",
        "automation",
        "backend",
        "backup",
        "backups",
        "batch",
        "bug",
        "bugs",
        "build",
        "builds",
        "cache",
        "caching",
        "call",
        "calls",
        "change",
        "changes",
        "check",
        "checks",
        "cli",
        "client",
        "clients",
        "cloud",
        "cluster",
        "clusters",
        "code",
        "codebase",
        "component",
        "components",
        "compute",
        "concurrency",
        "config",
        "configuration",
        "connection",
        "connections",
        "consistency",
        "container",
        "containers",
        "content",
        "context",
        "control",
        "cost",
        "customer",
        "customers",
        "dashboard",
        "dashboards",
        "data",
        "database",
        "databases",
        "debugging",
        "delivery",
        "dependency",
        "dependencies",
        "deploy",
        "deployment",
        "deployments",
        "design",
        "dev",
        "development",
        "device",
        "devices",
        "docs",
        "documentation",
        "domain",
        "email",
        "encryption",
        "endpoint",
        "endpoints",
        "engine",
        "environment",
        "error",
        "errors",
        "event",
        "events",
        "feature",
        "features",
        "file",
        "files",
        "flow",
        "framework",
        "frontend",
        "function",
        "functions",
        "gateway",
        "handler",
        "infrastructure",
        "input",
        "integration",
        "interface",
        "issue",
        "issues",
        "job",
        "jobs",
        "key",
        "keys",
        "latency",
        "layer",
        "library",
        "libraries",
        "load",
        "log",
        "logging",
        "logs",
        "management",
        "memory",
        "message",
        "messages",
        "metric",
        "metrics",
        "microservice",
        "microservices",
        "middleware",
        "migration",
        "migrations",
        "model",
        "models",
        "module",
        "modules",
        "monitoring",
        "network",
        "networking",
        "notification",
        "notifications",
        "observability",
        "operation",
        "operations",
        "optimization",
        "output",
        "package",
        "packages",
        "page",
        "pages",
        "payment",
        "payments",
        "performance",
        "permission",
        "permissions",
        "pipeline",
        "pipelines",
        "platform",
        "plugin",
        "policy",
        "process",
        "processing",
        "production",
        "project",
        "protocol",
        "proxy",
        "queue",
        "queues",
        "rate",
        "release",
        "releases",
        "reliability",
        "report",
        "reporting",
        "repository",
        "request",
        "requests",
        "resource",
        "resources",
        "response",
        "retry",
        "retries",
        "review",
        "role",
        "roles",
        "routing",
        "runtime",
        "scaling",
        "schema",
        "scheduler",
        "search",
        "security",
        "server",
        "servers",
        "service",
        "services",
        "session",
        "sessions",
        "setting",
        "settings",
        "storage",
        "stream",
        "streaming",
        "support",
        "sync",
        "system",
        "systems",
        "table",
        "task",
        "tasks",
        "team",
        "test",
        "testing",
        "tests",
        "thing",
        "things",
        "token",
        "tokens",
        "tool",
        "tooling",
        "tools",
        "traffic",
        "transaction",
        "transactions",
        "ui",
        "update",
        "updates",
        "upload",
        "user",
        "users",
        "validation",
        "version",
        "versioning",
        "web",
        "webhook",
        "webhooks",
        "work",
        "worker",
        "workers",
        "workflow",
    ]
)
_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "for",
        "and",
        "or",
        "to",
        "in",
        "on",
        "with",
        "by",
        "our",
        "my",
        "your",
        "their",
        "this",
        "that",
    ]
)


def generic_reason(name: str) -> str | None:
    """Why ``name`` is not specific enough to be an entity, or None if it is fine."""
    words = [w for w in normalize_name(name).split() if w not in _STOP]
    if not words or len(" ".join(words)) < 2:
        return "too_short"
    if not all(w in GENERIC_WORDS for w in words):
        return None
    if len(words) == 1:
        return "generic_concept"
    if any(ch.isupper() or ch.isdigit() or ch in "-_./" for ch in name.strip()):
        return None  # written as a name or an identifier ("Webhook Gateway", "webhook-gateway")
    return "generic_concept"
