"""Discovery's folder walks, kept between runs by the stamps of what they read.

Walking a folder lists every folder under it, asks each for a
``.gitignore`` and a ``pyvenv.cfg``, and classifies every file by name: on
bench/'s 8,000-file tree that was 0.14 s of every run, the largest part of
a pre-commit hook that reads a slice of the project (project_slice). What
a walk found depends only on the listings of the folders it walked, the
folders it passed over, the files it sniffed, the ``.gitignore`` files it
asked for (there or not), the links it met (and what they point at), and
what the folders above the walked one hold (a ``.git`` there changes the
git root; a link there, what paths resolve to: the key has the real paths). Any entry made, removed or renamed
in a folder moves that folder's stamp, and any write to a file moves its
ctime, which no program can set back; so a walk whose stamps are all as
recorded finds what it found then (the argument and the stamp are
replay.py's, and git's index trusts the same). A folder whose stamp moved
but which is the same folder and lists the same names with the same types
gives the same walk too (a file deleted and written again: git checkout,
pre-commit's stash, an editor's save by rename): that folder alone is
listed again and compared with what the walk saw (``FolderWalk.listings``).
A folder that lists other names now (a file made, removed or renamed
there: the first hook after a pull or a new file) is walked again alone,
with what is under it, and spliced into the recorded walk
(discover.rewalk_folders: the same walk as a new one), when everything else
that moved is under such a folder; anything else that moved (an ignore
file's content, a sniffed file, a link's target, what is above the walk)
walks the whole folder again, as before.
A walk with a stamp younger than replay.margin_ns() (3 s) before it began is
not recorded (a second write in the same clock tick would keep the stamp):
the next run walks again; unless that stamp is a folder's the walk listed,
which is then checked by its listing on every run (``RecordedWalk.racy``)
until the walk is recorded again with the stamp old enough.

Entries are the parse cache's, keyed by the tool version, the working
folder, the folder given and the settings discovery reads (exclude
patterns, the project root, whether .gitignore is respected); signed and
loaded by its unpickler, like every entry.
"""

from __future__ import annotations

import hashlib
import os
import stat
import time
from pathlib import Path
from typing import TYPE_CHECKING

from mlcost_lint.discover import FolderWalk, listing_digest, rewalk_folders, under
from mlcost_lint.lean_dataclass import dataclass
from mlcost_lint.pickling import pickled_by_fields
from mlcost_lint.replay import margin_ns, names_above, path_stamp, too_recent

if TYPE_CHECKING:
    from mlcost_lint.cache import ParseCache

# "w" + hex: walks sit in shard folders w0..wf, apart from the other entries.
WALK_PREFIX = "w"
_ABOVE_NAMES = (".git", ".gitignore", ".git/info/exclude")


@pickled_by_fields
@dataclass(slots=True)
class RecordedWalk:
    stamps: list[tuple[str, tuple]]     # path -> replay.path_stamp when the walk was recorded
    walk: FolderWalk
    # Folders whose stamps were too recent to trust when the walk was
    # recorded: their listings are checked instead, on every run.
    racy: tuple[str, ...] = ()


class WalkCache:
    """Walks of folders given to discovery, each by the arguments it was
    walked with (discover.walk_folder's)."""

    def __init__(self, cache: "ParseCache") -> None:
        self.cache = cache
        self._began_ns = time.time_ns()

    def _key(self, start: str, exclude: list[str], root: "Path", cwd: "Path", respect_gitignore: bool) -> str:
        h = hashlib.sha256()
        # Real paths too: a link above the project that now leads elsewhere
        # changes what display paths resolve to (discover.excluded_by).
        for part in ("walk", self.cache.salt.decode("utf-8", "surrogatepass"), start, os.path.realpath(start),
                     os.fspath(cwd), os.path.realpath(cwd), os.fspath(root), os.path.realpath(root),
                     str(respect_gitignore), *exclude):
            h.update(part.encode("utf-8", "surrogatepass") + b"\0")
        return WALK_PREFIX + h.hexdigest()[1:]

    def get(self, start: str, *how) -> FolderWalk | None:
        """The recorded walk of ``start`` with ``how`` (exclude, root, cwd,
        respect_gitignore) when nothing it read has moved, or when what
        moved is folders whose listings are as the walk saw them (recorded
        again then, with their stamps now, when these are old enough)."""
        found = self.cache.get(self._key(start, *how))
        if not isinstance(found, RecordedWalk) or not isinstance(found.walk, FolderWalk):
            return None
        racy = set(found.racy)
        again = False   # recorded again: a stamp moved, or a racy one is old enough now
        before = self._began_ns - margin_ns()
        listings = found.walk.listings
        relist: list[str] = []      # walked folders that list other names now
        moved: list[str] = []       # anything else that moved
        for path, stamp in found.stamps:
            now = path_stamp(path)
            if now != stamp or path in racy:
                if _same_listing(path, stamp, now, listings):
                    again = again or now != stamp or not too_recent(now, before, time.time_ns())
                elif path in listings and _is_folder(now):
                    relist.append(path)
                else:
                    moved.append(path)
        walk = found.walk
        if relist:
            # only those folders walked again (and what is under them), when all that moved is there
            if not all(any(under(path, folder) for folder in relist) for path in moved):
                return None
            walk = rewalk_folders(walk, relist, Path(start), *how)
            if walk is None:
                return None
            again = True
        elif moved:
            return None
        if again:
            self.put(walk, start, *how)
        return walk

    def put(self, walk: FolderWalk, start: str, exclude: list[str], root: "Path", cwd: "Path",
            respect_gitignore: bool) -> None:
        before, now = self._began_ns - margin_ns(), time.time_ns()
        # What discovery looks for above the walked folder and the working
        # folder: a .git (gitignore.git_root) and the ignore files.
        above = names_above([start, os.fspath(cwd)], _ABOVE_NAMES)
        stamps, racy = [], []
        for path in dict.fromkeys([*walk.watched, *walk.links, *above]):
            stamp = path_stamp(path)
            if too_recent(stamp, before, now):
                # a folder the walk listed is checked by its listing instead (the
                # first hooks after a pull or a checkout); anything else: not recorded
                if path not in walk.listings or not _is_folder(stamp):
                    return
                racy.append(path)
            stamps.append((path, stamp))
        self.cache.put(self._key(start, exclude, root, cwd, respect_gitignore),
                       RecordedWalk(stamps, walk, tuple(racy)))


def _same_listing(path: str, then: tuple, now: tuple, listings: dict[str, bytes]) -> bool:
    """Whether ``path``, a folder the walk listed whose stamp moved from
    ``then`` to ``now``, is the same folder (not a link, same device and
    inode) and lists the same names with the same types: then the walk finds
    what it found (a folder gives a walk only its listing; the files it
    sniffed, the ignore files and the folders below have stamps of their
    own). A file deleted and written again under its name moves its
    folder's stamp: git checkout and pre-commit's stash of unstaged changes
    do that to every changed file, an editor that saves by renaming a new
    file over the old one too, and for 3 s (replay.margin_ns) no new walk is
    recorded: every run walked the whole tree again (0.1 s on bench/'s 8,000
    files)."""
    recorded = listings.get(path)
    if recorded is None or not _is_folder(then) or not _is_folder(now) or then[1:3] != now[1:3]:
        return False
    return listing_digest(path) == recorded


def _is_folder(stamp: tuple) -> bool:
    """A replay.path_stamp of a folder itself (not absent, unaskable or a link)."""
    return len(stamp) == 6 and stat.S_ISDIR(stamp[0])


__all__ = ["RecordedWalk", "WalkCache", "WALK_PREFIX"]
