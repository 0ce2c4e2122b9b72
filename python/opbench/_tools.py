"""Where opbench's binaries are, for the Python helpers: the one lookup every module uses."""

import os
import shutil
import sysconfig
from pathlib import Path
from typing import List, Optional

# The repository when this package is used from a checkout (python/opbench/ of it).
REPO = Path(__file__).resolve().parents[2]


def scripts_dir() -> Path:
    """The folder pip installs this environment's commands into (a venv's bin/)."""
    return Path(sysconfig.get_path("scripts"))


def _executable(p: Path) -> bool:
    return p.is_file() and os.access(p, os.X_OK)


def tool_command(name: str, env_var: Optional[str] = None) -> Optional[List[str]]:
    """The command that runs opbench's tool `name`: $env_var, else target/release/<name> of the
    checkout this package is in, else the wheel's launcher in this environment's commands folder
    (`opbench <name>`), else <name> or `opbench <name>` from PATH; None when there is none."""
    if env_var and os.environ.get(env_var):
        return [os.environ[env_var]]
    if (REPO / "Cargo.toml").is_file() and _executable(REPO / "target" / "release" / name):
        return [str(REPO / "target" / "release" / name)]
    launcher = scripts_dir() / "opbench"
    if _executable(launcher):
        return [str(launcher), name]
    if _executable(scripts_dir() / name):
        return [str(scripts_dir() / name)]
    on_path = shutil.which(name)
    if on_path:
        return [on_path]
    launcher_on_path = shutil.which("opbench")
    return [launcher_on_path, name] if launcher_on_path else None
