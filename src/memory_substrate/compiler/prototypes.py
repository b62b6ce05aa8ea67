"""Hand-written prototype tasks and lexical cues per task class (no model call to classify).

The prototypes are embedded once with the default embedder; the cues are word patterns that
mark a class strongly. Neither is drawn from the labelled evaluation set in tests/data, whose
held-out half was never looked at while writing these (docs/context-compiler.md).
"""

from __future__ import annotations

PROTOTYPES: dict[str, tuple[str, ...]] = {
    "debug": (
        "why is the service crashing with this error",
        "fix the failing test",
        "the build is broken after the last change",
        "investigate the timeout in production",
        "stack trace shows a null pointer exception",
        "the job fails intermittently, find the root cause",
        "requests return 500 errors since the deploy",
        "memory leak in the worker process",
        "debug the connection refused error",
        "the migration script throws an exception",
        "users report the page is not loading",
        "troubleshoot high latency on the endpoint",
        "the container keeps restarting in a crash loop",
        "reproduce and fix the bug in the parser",
        "why does this query return wrong results",
    ),
    "architecture": (
        "design the architecture for the new service",
        "should we use a message queue or direct calls between services",
        "how do the components depend on each other",
        "propose a data model for the billing system",
        "what are the tradeoffs of moving to microservices",
        "plan the migration from the monolith",
        "which database should we choose for this workload",
        "how should we structure the modules of the backend",
        "draw the system boundaries and integration points",
        "evaluate options for scaling the API layer",
        "what does the gateway integrate with and what depends on it",
        "design the caching layer and its invalidation strategy",
        "decide between event sourcing and a relational schema",
        "review the overall design of the storage layer",
        "how is the platform deployed across environments",
    ),
    "compliance": (
        "prepare evidence for the SOC 2 audit",
        "who approved this change and when",
        "show the audit trail for access to customer data",
        "are we GDPR compliant in how we store personal data",
        "list the decisions made about data retention with their sources",
        "document the controls for the security review",
        "which policies apply to handling payment card data",
        "trace who changed the production configuration",
        "verify that the vendor meets our regulatory requirements",
        "what did we record about consent and data deletion requests",
        "produce a record of all approvals for the release",
        "check the license obligations of our dependencies",
        "evidence of encryption at rest for the auditors",
        "HIPAA requirements for the patient records system",
        "retention policy and legal hold for the logs",
    ),
    "writing": (
        "write the release notes for this version",
        "draft a blog post about the new feature",
        "summarize the project for the README",
        "write documentation for the API",
        "compose an email to the team announcing the change",
        "draft the design doc introduction",
        "rewrite this paragraph to be clearer",
        "write a changelog entry",
        "prepare a status update for stakeholders",
        "write a tutorial on getting started",
        "edit the onboarding guide",
        "draft a proposal for the new initiative",
        "write a short description of the service for the website",
        "proofread the announcement",
        "create slides summarizing the quarter",
    ),
    "chat": (
        "what did we talk about last time",
        "how are you doing today",
        "what is my favourite book",
        "when did she go to the concert",
        "remind me what my sister said about the trip",
        "what hobbies does he have",
        "tell me about her family",
        "where did they go on vacation",
        "what did I say I would do this weekend",
        "do you remember the name of my dog",
        "what does Melanie like to paint",
        "how long has he been married",
        "what did we decide for dinner",
        "who did she meet at the party",
        "what was the name of the restaurant we liked",
    ),
}

# (pattern, weight): a regular expression over the lower-cased task, and how strongly it marks
# the class. Patterns are whole words unless they end with "*" semantics built into the regex.
CUES: dict[str, tuple[tuple[str, float], ...]] = {
    "debug": (
        (
            r"\b(bug|bugs|error|errors|exception|traceback|stack ?trace|crash\w*|fail(s|ed|ing|ure)?|broken|"
            r"regression|flaky|hang(s|ing)?|deadlock|leak\w*|segfault|timeouts?|timing out|5\d\d|4\d\d)\b",
            1.0,
        ),
        (
            r"\b(debug\w*|troubleshoot\w*|fix(es|ing)?|root cause|repro\w*|diagnos\w*|not working|doesn'?t work|"
            r"won'?t start|keeps? (restarting|failing|crashing)|investigate|why (is|does|did|are)\b.*\b(fail|slow|wrong|broken|null|empty))\b",
            0.8,
        ),
        (
            r"\b(oom|out of memory|panic|npe|nullpointer|undefined is not|permission denied|connection refused|"
            r"econnrefused|502|503|504|latency spike|slow quer(y|ies)|high cpu)\b",
            0.8,
        ),
        (
            r"\b(stuck|times? out|timed out|oomkilled|too many open files|skips?|skipped|ran twice|double.charged|"
            r"stale|dropp(ed|ing)|missing|garbled|wrong (result|value|output)s?|spik(e|es|ing)|keeps? growing|"
            r"unexpected(ly)?|intermittent\w*|since (yesterday|the (deploy|upgrade|release|update)))\b",
            0.6,
        ),
    ),
    "architecture": (
        (
            r"\b(architect\w*|design(ing)?|tradeoffs?|trade-offs?|scalab\w*|microservices?|monolith|"
            r"data model|schema design|system design|boundar(y|ies)|topology|components?)\b",
            1.0,
        ),
        (
            r"\b(should we (use|adopt|choose|move|switch|split)|which (database|queue|framework|approach|pattern)|"
            r"migrat(e|ion) (from|to)|integrat(e|es|ion) with|depends? on|dependenc(y|ies) between|"
            r"event.driven|event sourcing|cqrs|sharding|replication|caching (layer|strategy))\b",
            0.8,
        ),
        (
            r"\b(adr|rfc|high.level|layers?|modules?|interfaces?|api contract|deployment model|package|"
            r"better fit|approach|versioning|should (it|the \w+) (live|go|be)|own(s)? its own|split)\b",
            0.5,
        ),
        # how a codebase is laid out: "inspect repository structure", "where does the CLI live"
        (
            r"\b((repo|repository|project|code ?base|directory|folder|package|source) (structure|layout|tree|map)|"
            r"structure of the (repo|repository|project|code ?base)|laid out|where (does|do) (the )?\w+ live)\b",
            0.8,
        ),
    ),
    "compliance": (
        (
            r"\b(complian\w*|audit\w*|regulat\w*|gdpr|hipaa|soc ?2|sox|pci(.dss)?|iso ?27001|ccpa|fedramp|"
            r"legal hold|retention polic\w*|data retention|dpa|dpia)\b",
            1.0,
        ),
        (
            r"\b(who approved|approv(al|als|ed) (for|of|by)|sign.off|evidence (of|for)|controls?|attest\w*|"
            r"polic(y|ies)|consent|personal data|pii|phi|licen[cs]e obligations?|auditors?|accountab\w*|"
            r"provenance|chain of custody|record of|signed? off|incident response|breach|access reviews?|"
            r"reviewed|who (changed|granted|had access)|exceptions? to)\b",
            0.8,
        ),
    ),
    "writing": (
        (
            r"^(please |can you |help me )?(write|draft|compose|rewrite|edit|prepare|create|polish|turn)\b",
            0.8,
        ),
        (r"\b(write|rewrite|draft\w*|compose|proofread|edit(ing)?|polish|reword|paraphrase)\b", 1.0),
        (
            r"\b(blog( post)?|release notes|changelog|readme|documentation|docs|announcement|newsletter|"
            r"email|essay|article|tutorial|guide|summary|summari[sz]e|press release|slides?|copy|paragraph|"
            r"status update|report for|proposal|post|tweet|thread|abstract|introduction|talking points|story|"
            r"memo|bio|cover letter|message|note|outline)\b",
            0.6,
        ),
    ),
    "chat": (
        (
            r"\b(what did (i|we|you|he|she|they) (say|talk|mention|tell)|do you remember|remind me|"
            r"how (are|was|were) (you|things)|tell me about (my|her|his|their))\b",
            1.0,
        ),
        (
            r"\b(favou?rite|hobb(y|ies)|family|friends?|kids?|children|wife|husband|partner|sister|brother|"
            r"mom|mother|dad|father|birthday|vacation|trip|weekend|dinner|movie|book|song|pet|dog|cat|"
            r"feel(s|ing)?|like(s|d)? to|enjoy\w*|married|went|go to|meet|met)\b",
            0.5,
        ),
        (r"^(when|where|who|what|how long|how many|did|does|is|was|would|has)\b", 0.3),
    ),
}
