"""`ragjudge.yml`: a model per section (`endpoint_config`, `judge_config`, ...), the whole file (`model`), its loader
(`loader`), and what loading needs (env substitution, safe YAML, headers, template paths)."""
