"""Chat models for optional, asynchronous extraction. Never on the hot path."""
