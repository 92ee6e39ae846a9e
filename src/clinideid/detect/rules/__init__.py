"""Rule-based PHI detection: an engine of ordered, iterative passes driven by per-language rule packs.

Packs are YAML data (``packs/*.yaml``, format in ``packs/README.md``). Importing this package registers
the ``"rules"`` detector type.
"""

from clinideid.detect.rules.compiler import CompiledPack, compile_pack
from clinideid.detect.rules.detector import RuleDetector
from clinideid.detect.rules.engine import Found, RuleEngine
from clinideid.detect.rules.loader import available_packs, load_merged_pack
from clinideid.detect.rules.masking import MASK, mask, mask_char

__all__ = [
    "MASK",
    "CompiledPack",
    "Found",
    "RuleDetector",
    "RuleEngine",
    "available_packs",
    "compile_pack",
    "load_merged_pack",
    "mask",
    "mask_char",
]
