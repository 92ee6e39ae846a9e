"""PHI detectors. See ``base`` for the contract and registry."""

from clinideid.detect.base import Detector, available_detectors, build_detector, register_detector

__all__ = ["Detector", "available_detectors", "build_detector", "register_detector"]
