"""Task classification: accuracy floors on the labelled set (measured with bench/classify_bench.py),
the dual-profile rule, and classification without an embedder."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from memory_substrate.compiler.classify import classify, given
from memory_substrate.compiler.profiles import DUAL_PROFILE_GAP, TASK_CLASSES
from memory_substrate.embed.static import StaticEmbedder

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from classify_bench import evaluate, load, split_of

# Measured on 2026-11-23 (bench/classify_bench.py): held-out 0.882, all 0.940, cues only 0.676 held out.
HELDOUT_FLOOR = 0.85
ALL_FLOOR = 0.92
CUES_ONLY_FLOOR = 0.60


@pytest.fixture(scope="module")
def embedder() -> StaticEmbedder:
    return StaticEmbedder()


def test_labelled_set_is_large_balanced_and_split() -> None:
    rows = load()
    assert len(rows) >= 150 and len({r["text"] for r in rows}) == len(rows)
    assert {r["label"] for r in rows} == set(TASK_CLASSES)
    heldout = [r for r in rows if split_of(r["text"]) == "heldout"]
    assert 0.25 < len(heldout) / len(rows) < 0.45
    assert {r["label"] for r in heldout} == set(TASK_CLASSES)


def test_accuracy_floors(embedder: StaticEmbedder) -> None:
    rows = load()
    heldout = [r for r in rows if split_of(r["text"]) == "heldout"]
    acc_heldout, _ = evaluate(heldout, embedder)
    acc_all, _ = evaluate(rows, embedder)
    acc_cues, _ = evaluate(heldout, None)
    assert acc_heldout >= HELDOUT_FLOOR
    assert acc_all >= ALL_FLOOR
    assert acc_cues >= CUES_ONLY_FLOOR


def test_confidences_and_dual_profile(embedder: StaticEmbedder) -> None:
    c = classify("Fix the NullPointerException thrown by the checkout service since the deploy", embedder)
    assert c.primary == "debug" and c.method == "prototypes+cues"
    assert abs(sum(c.scores.values())) > 0 and 0 < c.confidence <= 1
    assert c.secondary is not None and c.secondary != c.primary
    assert c.dual == (c.confidence - (c.secondary_confidence or 0) < DUAL_PROFILE_GAP)
    assert c.classes == ([c.primary, c.secondary] if c.dual else [c.primary])
    d = c.to_dict()
    assert d["primary"]["class"] == "debug" and "crash" not in d["cues"].get("writing", [])


def test_ambiguous_task_runs_both_profiles(embedder: StaticEmbedder) -> None:
    c = classify("Write up why the payment service crashed last night", embedder)
    assert {c.primary, c.secondary} == {"writing", "debug"}
    assert c.dual and c.classes == [c.primary, c.secondary]


def test_without_embedder_cues_decide_and_chat_is_the_fallback() -> None:
    assert classify("GDPR audit evidence for the data retention policy", None).primary == "compliance"
    plain = classify("hmm", None)
    assert plain.primary == "chat" and plain.method == "cues"


def test_given_class_skips_classification() -> None:
    g = given("architecture")
    assert g.classes == ["architecture"] and g.method == "given" and g.confidence == 1.0


FOREIGN_TASKS = [
    ("debug", "Warum stürzt der Bezahldienst seit dem letzten Deployment mit einem Timeout ab?"),
    ("debug", "¿Por qué falla la conexión a la base de datos después de actualizar el servidor?"),
    ("debug", "为什么部署后网关一直返回错误？"),
    (
        "architecture",
        "Sollen wir für die Ereignisse eine Nachrichtenwarteschlange oder direkte Aufrufe zwischen den Diensten verwenden?",
    ),
    ("architecture", "¿Cómo deberíamos dividir el monolito en servicios y qué base de datos usa cada uno?"),
    ("architecture", "我们应该如何设计服务之间的数据流和缓存层？"),
    (
        "compliance",
        "Welche Nachweise brauchen wir für das DSGVO-Audit zur Aufbewahrung personenbezogener Daten?",
    ),
    ("compliance", "¿Quién aprobó el acceso a los datos de clientes y dónde está el registro de auditoría?"),
    ("compliance", "我们的数据保留政策是否符合审计要求？"),
    ("writing", "Schreibe die Versionshinweise für Version 2.0 für unsere Kunden."),
    ("writing", "Redacta un resumen de la reunión de ayer para el equipo."),
    ("writing", "为2.0版本写一份发布说明。"),
    ("chat", "Wie war dein Wochenende, hast du etwas Schönes gemacht?"),
    ("chat", "¿Qué tal tu fin de semana con la familia?"),
    ("chat", "你周末过得怎么样？"),
]


@pytest.mark.parametrize("provider", ["use-gated", "static-multilingual"])
def test_tasks_in_other_languages_are_classified_with_the_default_embedder(provider: str) -> None:
    """The default (language-gated) embedder reads a German, Spanish or Chinese task with its
    multilingual model, which the English prototypes meet only from the query side: compared the
    other way round every prototype scored 0 and every such task was 'debug' at 0.2 (5 of these 15
    right on 7a2813e, 9 with f2967fb's English-only default). English tasks score as before. The
    default (use-gated) and the round-6 default (static-multilingual) gate alike."""
    from memory_substrate.embed import create_embedder

    gated = create_embedder(provider)
    got = [(want, classify(text, gated)) for want, text in FOREIGN_TASKS]
    right = sum(want == c.primary for want, c in got)
    assert right >= 13, [(want, c.primary, round(c.confidence, 2)) for want, c in got]
    assert all(c.confidence > 0.3 for _, c in got)
    rows = load()
    assert evaluate(rows, gated)[0] == evaluate(rows, StaticEmbedder())[0]
