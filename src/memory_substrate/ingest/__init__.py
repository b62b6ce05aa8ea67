"""memory_ingest: capture evidence (repos, files, web pages, PDFs, conversations) as sources with segments."""
