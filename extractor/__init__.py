"""sglang-constraints: static extraction of SGLang's server-argument constraints into JSON rules."""

__version__ = "0.1.0"
