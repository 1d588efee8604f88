"""``mpirun``/``mpiexec`` options (Open MPI, MPICH/Hydra, Intel MPI) before
the program they start: the rank count (``-np``), ranks per node, the
options that name other hosts, and the GPUs each rank drives (nccl-tests
``-g N``). Read by the mpirun parser (:mod:`.launch_commands`) and, for an
MPIJob's Worker pods, by :func:`.launcher.mpi_worker_ranks`.
"""

from __future__ import annotations

import re

from mlcost_lint.lean_dataclass import dataclass
from mlcost_lint.model.core import UNKNOWN, Maybe
from mlcost_lint.link.shell import Word, basename
from mlcost_lint.link.launch_words import _PYTHON, _display, count_of

# mpirun / mpiexec (Open MPI, MPICH/Hydra, Intel MPI): options with one value,
# options with two (``--mca key value``), and the ones that name other hosts.
_MPI_VALUES = frozenset({
    "-np", "--np", "-n", "--n", "-c", "-N", "-npernode", "--npernode", "-npersocket", "--npersocket",
    "-ppn", "-perhost", "-H", "-host", "--host", "-hosts", "-hostfile", "--hostfile", "-machinefile",
    "--machinefile", "-f", "-default-hostfile", "--default-hostfile", "-rf", "--rankfile", "-x", "-bind-to",
    "--bind-to", "-map-by", "--map-by", "-rank-by", "--rank-by", "-wdir", "--wdir", "-wd", "-prefix",
    "--prefix", "-output-filename", "--output-filename", "-path", "--path", "-am", "--am", "-tune", "--tune",
    "-launch-agent", "--launch-agent", "-preload-files", "--preload-files", "-cpus-per-proc", "--cpus-per-proc",
    "-cpus-per-rank", "--cpus-per-rank", "-cpu-set", "--cpu-set", "-timeout", "--timeout", "-app", "--app",
    "-genvlist", "-envlist", "-iface", "-bootstrap", "-bootstrap-exec", "-launcher", "-launcher-exec",
    "-configfile", "-binding", "-tag-output-format", "--personality", "--runtime-options", "-mca-param",
})
_MPI_TWO_VALUES = frozenset({"-mca", "--mca", "-gmca", "--gmca", "-genv", "-env", "--prtemca", "--pmixmca"})
_MPI_HOST_OPTIONS = frozenset({"-H", "-host", "--host", "-hosts", "-hostfile", "--hostfile", "-machinefile",
                               "--machinefile", "-f", "-default-hostfile", "--default-hostfile", "-rf",
                               "--rankfile", "-configfile", "-app", "--app"})
_MPI_NP = ("-np", "--np", "-n", "--n", "-c")
_MPI_PER_NODE = ("-npernode", "--npernode", "-N", "-ppn", "-perhost")
_MPI_HOSTFILE_ENV = re.compile(r"(HOSTFILE|HOST_FILE|MACHINEFILE|OMPI_MCA_orte_default_hostfile)", re.I)


# Programs whose every rank drives several GPUs, and the flag that says how
# many (rules.md, "Ranks that drive several GPUs"): the nccl-tests binaries
# (all_reduce_perf, all_gather_perf, ..., their *_perf_mpi builds) take -g N.
_MULTI_GPU_RANK_PROGRAMS = ((re.compile(r"^[a-z0-9_]+_perf(_mpi)?$"), ("-g", "--ngpus")),)


@dataclass(slots=True)
class MpiOptions:
    np: Maybe[int] | None
    per_node: Maybe[int] | None
    by_node: bool                      # --map-by node / -bynode: round robin over hosts
    hosts: Word | None                 # an option that names hosts / a hostfile
    np_word: Word | None
    shown: str = ""                    # the count options as written
    gpus_per_rank: Maybe[int] = 1      # nccl-tests -g N
    gpus_per_rank_text: str = ""       # "all_reduce_perf -g 2"

    def times_gpus(self, ranks: Maybe[int]) -> Maybe[int]:
        """GPUs that ``ranks`` ranks of this program use."""
        if ranks is UNKNOWN or self.gpus_per_rank is UNKNOWN:
            return UNKNOWN
        return ranks * self.gpus_per_rank


def _gpus_per_rank(program: list[Word]) -> tuple[Maybe[int], str]:
    if not program:
        return 1, ""
    name = basename(program[0].text)
    for pattern, flags in _MULTI_GPU_RANK_PROGRAMS:
        if not pattern.match(name):
            continue
        for i, w in enumerate(program[1:], start=1):
            flag, eq, value = w.text.partition("=")
            if flag in flags:
                if not eq:
                    value = program[i + 1].text if i + 1 < len(program) else ""
                count = count_of(value)
                return (count if count is not None else UNKNOWN), f"{name} {flag} {value}"
        return 1, ""
    return 1, ""


def parse_mpi(words: list[Word]) -> MpiOptions | None:
    """mpirun/mpiexec options before the program; None when they cannot be
    told apart from the program's own (an unknown option that may take a value)."""
    np: Maybe[int] | None = None
    np_word: Word | None = None
    per_node: Maybe[int] | None = None
    by_node = False
    hosts: Word | None = None
    shown: list[str] = []
    i = 0
    while i < len(words):
        w = words[i]
        text = w.text
        if not text.startswith("-") or text == "-":
            break
        name, eq, inline = text.partition("=")
        if not name.startswith("--"):
            name, eq, inline = text, "", ""
        if name in _MPI_TWO_VALUES:
            i += 3
            continue
        if name in _MPI_VALUES:
            value_word = w if eq else (words[i + 1] if i + 1 < len(words) else None)
            value = inline if eq else (value_word.text if value_word is not None else None)
            if name in _MPI_NP or name in _MPI_PER_NODE or name in ("-map-by", "--map-by"):
                shown.append(_display(w, None if eq or value_word is None else value_word))
            if name in _MPI_NP:
                np, np_word = count_of(value), value_word
            elif name in _MPI_PER_NODE:
                per_node = count_of(value)
            elif name in _MPI_HOST_OPTIONS:
                hosts = w
            elif name in ("-map-by", "--map-by") and value is not None:
                ppr = re.match(r"^ppr:(\d+):node", value)
                if ppr:
                    per_node = int(ppr.group(1))
                elif value.split(":")[0] == "node":
                    by_node = True
                elif "$" in value:
                    per_node = UNKNOWN
            i += 1 if eq else 2
            continue
        if name in ("-bynode", "--bynode"):
            by_node = True
        i += 1
    # An unknown option that takes a value would end the options early: a count
    # flag after the "program" and before any python means we cannot tell.
    for w in words[i:]:
        if _PYTHON.match(basename(w.text)) or w.text.endswith(".py"):
            break
        if w.text in _MPI_NP or w.text in _MPI_PER_NODE:
            return None
    per_rank, per_rank_text = _gpus_per_rank(words[i:])
    return MpiOptions(np, per_node, by_node, hosts, np_word, " ".join(shown), per_rank, per_rank_text)
