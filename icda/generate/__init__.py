"""LLM-generated datasets (``source: llm``; paper appendix "Generating the Connectivity/Restaurant
Dataset").

* :mod:`icda.generate.records` — the request and response records and the append-only cache.
* :mod:`icda.generate.backends` — an OpenAI-compatible HTTP endpoint or a local transformers model.
* :mod:`icda.generate.run` — plan the requests, resume from the cache, retry, write the responses.
* :mod:`icda.generate.postprocess` — responses to train/dev/test documents (``prepare``).

The ``llm`` block of a dataset spec, validated, with defaults, is :mod:`icda.data.llm_spec`: a
dataset spec is checked without this package, which builds on :mod:`icda.data`, not the reverse.
"""
