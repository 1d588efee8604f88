"""Parse a config text the way the pipeline does and read it."""

from __future__ import annotations

from pathlib import Path

from mlcost_lint.model.training import TrainingConfig, read_training_config
from mlcost_lint.parse.yamljson import parse_json, parse_yaml

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures" / "training"
CORPUS = ROOT.parent / "shared" / "corpus"


def corpus_file(relative: str) -> Path:
    """A file of the shared corpus (../shared/corpus, only in the team's
    workspace): the calling test is skipped with a reason without it."""
    import pytest

    path = CORPUS / relative
    if not path.is_file():
        pytest.skip(f"../shared/corpus/{relative} is not beside the repository")
    return path


def read_text(text: str, path: str = "config.yaml") -> TrainingConfig | None:
    docs = [parse_json(text, path)] if path.endswith(".json") else parse_yaml(text, path)
    return read_training_config(docs[0])


def read_file(path: Path) -> TrainingConfig | None:
    return read_text(path.read_text(encoding="utf-8"), path.name)


def written(setting):
    """(value, explicit, line, key) of a setting, for one-line assertions."""
    line = setting.location.line if setting.location is not None else None
    return setting.value, setting.explicit, line, setting.key


def default(value):
    return value, False, None, ""
