"""The config file a release reads with --config: its JSON Schema and typed module."""
