"""Analysis above the pipeline: any workload as arrays (``workload``), what a comparison
reads of one (``digest``; a log streamed: ``logdigest``), self-similarity (``selfsim``),
model-vs-trace comparison (``compare``), the keep-alive advisor (``keepalive``)."""
