"""Where opbench's binaries are, for the Python helpers: the one lookup every module uses."""

import os
import shutil
import sysconfig
from pathlib import Path
from typing import Optional

# The repository when this package is used from a checkout (python/opbench/ of it).
REPO = Path(__file__).resolve().parents[2]


def scripts_dir() -> Path:
    """The folder pip installs this environment's commands into (a venv's bin/)."""
    return Path(sysconfig.get_path("scripts"))


def tool_path(name: str, env_var: Optional[str] = None) -> Optional[str]:
    """`name`'s binary: $env_var, else target/release/ of the checkout this package is in, else
    the commands folder of this Python environment (where the wheel puts them), else PATH's;
    None when there is none."""
    if env_var and os.environ.get(env_var):
        return os.environ[env_var]
    candidates = []
    if (REPO / "Cargo.toml").is_file():
        candidates.append(REPO / "target" / "release" / name)
    candidates.append(scripts_dir() / name)
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return str(c)
    return shutil.which(name)
