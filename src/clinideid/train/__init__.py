"""Training workflows: corpora in, model artifacts out (``clinideid train``).

- ``config``: the pydantic training config (YAML in, clear errors);
- ``data``: reading a corpus in a label set, deterministic splits and subsets;
- ``crf``: the CRF workflow (features, (c1, c2) grid chosen on dev, artifact with metrics);
- ``evaluation``: scoring a saved model on a corpus (``evaluate_model``).
"""

from clinideid.train.config import TrainConfig, load_train_config, parse_train_config
from clinideid.train.data import holdout_split, read_training_corpus, subset, to_label_set
from clinideid.train.evaluation import evaluate_model, model_detector

__all__ = [
    "TrainConfig",
    "evaluate_model",
    "holdout_split",
    "load_train_config",
    "model_detector",
    "parse_train_config",
    "read_training_corpus",
    "subset",
    "to_label_set",
]
