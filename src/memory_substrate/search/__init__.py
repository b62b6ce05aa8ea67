"""Retrieval: the search engine, its lexical and vector streams, segment windows and result plans.

Both surfaces that read build on it: memory_query's search (``query/``) and the context compiler
(``compiler/``)."""
