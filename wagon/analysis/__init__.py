"""Analysis above the pipeline: any workload as arrays (``workload``), self-similarity
(``selfsim``), model-vs-trace comparison (``compare``), the keep-alive advisor (``keepalive``)."""
