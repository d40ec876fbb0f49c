"""Finding memories and past turns: keyword candidates and BM25 (keywords.py, bm25.py), embeddings,
the fusion of both (recall.py) and conversation search (conversations.py). A keyword search reads
from keywords.py down: the tables it walks (keyword_tables.py), how it asks each dialect's index
(index_queries.py), the scope's row count kept between searches (scope_counts.py)."""
