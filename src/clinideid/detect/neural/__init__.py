"""The neural tagger: BiLSTM-CRF with character, word, affix and n-gram context embeddings and attention.

- ``config``: ``NeuralConfig`` (torch-free settings);
- ``vocab``, ``embeddings``, ``affix``, ``context``, ``attention``, ``crf``: the blocks;
- ``model``: ``NeuralTaggerModule``, the configurable network;
- ``tagger``: ``NeuralModel`` (vocabularies + network, windows, batched inference, save/load) and the
  ``"neural"`` detector (``NeuralDetector``).
"""
