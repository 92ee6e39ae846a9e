"""Character language models trained on unlabelled clinical text, and Flair-style contextual string
embeddings computed from a forward and a backward model.

- ``charlm``: ``CharVocab``, ``CharLMConfig``, the ``CharLM`` network wrapper and its model artifacts;
- ``data``: unlabelled text sources and the held-out split;
- ``train``: ``train_charlm`` (checkpointed, resumable) and ``train_charlm_pair`` (both directions);
- ``embedder``: ``ContextualStringEmbedder`` and ``load_embedder``.

``train`` (and with it the training machinery) is imported on first use only.
"""

from clinideid.lm.charlm import CharLM, CharLMConfig, CharVocab
from clinideid.lm.data import UnlabelledText, heldout_split, iter_unlabelled_documents, iter_unlabelled_texts
from clinideid.lm.embedder import ContextualStringEmbedder, load_embedder

__all__ = [
    "CharLM",
    "CharLMConfig",
    "CharVocab",
    "ContextualStringEmbedder",
    "UnlabelledText",
    "heldout_split",
    "iter_unlabelled_documents",
    "iter_unlabelled_texts",
    "load_embedder",
]
