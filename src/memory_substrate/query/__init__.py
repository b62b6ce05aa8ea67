"""memory_query: search, page, expand, recent, graph views, traces and packages over one namespace."""
