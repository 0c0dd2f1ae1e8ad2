"""`ragjudge serve`: canary analyses over HTTP for Flagger webhooks, Argo Rollouts and Prometheus."""
