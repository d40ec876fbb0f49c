"""The rolling summary: `models` (its table), `section` (what a request sends of it), `fold` (the
model call that folds turns in), `jobs` (the fold after each turn), `offline` (the offline model's
extractive summarizer)."""
