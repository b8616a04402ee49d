"""Work kept between runs: documents and walks in the cache, rule-set indexes, shipped releases."""
