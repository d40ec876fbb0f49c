"""Finding memories and past turns: keyword candidates and BM25 (keywords.py, bm25.py), embeddings,
the fusion of both (recall.py) and conversation search (conversations.py)."""
