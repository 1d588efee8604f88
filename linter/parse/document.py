"""What the parse stage produces: located trees, independent of what they mean.

A YAML or JSON document is kept as plain Python data (dicts, lists, scalars)
plus a table of positions keyed by the path of each node, so that rules read
ordinary values and still report exact lines:

    doc.data["spec"]["template"]["spec"]["containers"][0]["resources"]
    doc.position(("spec", "template", "spec", "containers", 0, "resources"))

For a mapping entry the position is the key's; for a sequence item it is the
item's start. Everything here is picklable, so parse results can be cached
and sent between worker processes.
"""

from __future__ import annotations

from dataclasses import field
from enum import Enum
from typing import Any

from mlcost_lint.lean_dataclass import dataclass
from mlcost_lint.model.core import Location
from mlcost_lint.pickling import pickled_by_fields

KeyPath = tuple  # tuple[str | int, ...]


class FileKind(str, Enum):
    TERRAFORM = "terraform"            # .tf
    TERRAFORM_JSON = "terraform-json"  # .tf.json
    TERRAFORM_VARS = "terraform-vars"  # .tfvars, .auto.tfvars (HCL) and .tfvars.json
    TERRAFORM_PLAN = "terraform-plan"  # `terraform show -json` output
    YAML = "yaml"                      # Kubernetes manifests and training configs
    JSON = "json"
    SLURM = "slurm"                    # .sbatch, .slurm: a Slurm batch script
    SHELL = "shell"                    # .sh / a shell shebang: a Slurm job when its header holds #SBATCH


# Kinds read whole by every slice (project_slice): Terraform evaluates
# across files (a JSON file is one too when it holds a plan).
TERRAFORM_KINDS = frozenset({FileKind.TERRAFORM, FileKind.TERRAFORM_JSON, FileKind.TERRAFORM_VARS,
                             FileKind.TERRAFORM_PLAN})


@dataclass(slots=True)
class Document:
    """One YAML document (or a whole JSON file) with its positions."""

    path: str
    index: int                     # 0-based document index in a multi-document file
    data: Any
    positions: dict[KeyPath, tuple[int, int]] = field(default_factory=dict)
    start_line: int = 1
    end_line: int = 1
    # Literal block scalars (``run: |``) that are mapping values: key path ->
    # (line, column) of the first character of their content, so positions
    # inside the text map back to the file (indentation indicators and CRLF
    # included). Empty for JSON and for documents built by hand.
    blocks: dict[KeyPath, tuple[int, int]] = field(default_factory=dict)

    def position(self, key_path: KeyPath) -> tuple[int, int] | None:
        return self.positions.get(tuple(key_path))

    def location(self, key_path: KeyPath = ()) -> Location:
        """The location of ``key_path``, or of its nearest located ancestor."""
        key_path = tuple(key_path)
        while True:
            pos = self.positions.get(key_path)
            if pos is not None:
                return Location(self.path, pos[0], pos[1])
            if not key_path:
                return Location(self.path, self.start_line, 1)
            key_path = key_path[:-1]

    def get(self, key_path: KeyPath, default: Any = None) -> Any:
        node = self.data
        for key in key_path:
            if isinstance(node, dict) and key in node:
                node = node[key]
            elif isinstance(node, list) and isinstance(key, int) and 0 <= key < len(node):
                node = node[key]
            else:
                return default
        return node


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class Suppression:
    """A ``# mlcost-lint: ignore[...]`` comment. ``codes`` empty means all."""

    line: int
    codes: tuple[str, ...]
    whole_file: bool
    comment_only_line: bool   # the comment stands alone on its line (applies to the next line)
    reason: str = ""
    column: int = 1           # where the comment starts (MLC002 points there)


@pickled_by_fields
@dataclass(slots=True)
class ParseError:
    """A file that is ours but could not be read: becomes an MLC001 finding."""

    path: str
    line: int
    column: int
    message: str


@dataclass(slots=True, frozen=True)
class HclOutline:
    """What the model reads from a .tf file before any root module is
    evaluated: the ``source`` strings of its module blocks (which folders
    are roots) and the variables it declares ``sensitive`` (which tfvars
    values are secrets). A .tf file taken from the parse cache carries this
    instead of its tree; the tree is loaded only if a root module has to be
    evaluated (model/terraform, cache_trees.HclTrees)."""

    module_sources: tuple[str, ...] = ()
    sensitive_variables: tuple[str, ...] = ()


@dataclass(slots=True)
class ParsedFile:
    """Everything the later stages need from one file; cached by content hash."""

    path: str                   # display path
    kind: FileKind
    documents: list[Document] = field(default_factory=list)   # YAML / JSON
    hcl: Any = None             # mlcost_lint.parse.hcl.HclBody for .tf/.tfvars
    slurm: Any = None           # mlcost_lint.parse.slurm.SlurmScript for Slurm batch scripts
    errors: list[ParseError] = field(default_factory=list)
    suppressions: list[Suppression] = field(default_factory=list)
    comment_lines: frozenset[int] = frozenset()  # lines holding only a comment
    skipped_reason: str | None = None   # e.g. "Helm template"; not ours, no finding
    # This file's secret-looking values on their own (mlcost_lint.secrets.
    # file_secrets), found where the file is parsed (in parallel, cached);
    # None: not collected here (.tfvars, whose values depend on other files).
    secrets: frozenset[str] | None = None
    # Set (and ``hcl`` None) on a .tf file whose tree stays in the parse
    # cache until a root module needs it (HclOutline).
    hcl_outline: HclOutline | None = None
    # The file's meaning to the model: a hash of its tree or documents (with
    # positions), errors and secrets, not of its bytes (cache_trees.meaning_of,
    # document_meaning), set where the result is cached. Equal after an edit
    # of comments alone that moved no line: the incremental run then reads
    # no Terraform for a .tf file, and takes another file's findings from
    # the last run (mlcost_lint.incremental). None: not known, compare the bytes.
    meaning: str | None = field(default=None, compare=False)
    # What the file adds to the model on its own (model.build.FileModel),
    # read where it is parsed when the result is cached, and cached with it;
    # None: not read yet. Derived from the rest: not compared.
    model: Any = field(default=None, compare=False)
