"""HTTP stubs of the judge APIs on 127.0.0.1, reusable by tests, benchmarks and notebooks.

``tests.stubs.anthropic_stub`` (Messages API, batches, count_tokens) and
``tests.stubs.openai_stub`` (chat completions). Import them with the repository root on
``sys.path`` (pytest's rootdir conftest arranges it; elsewhere run from the root).
"""
