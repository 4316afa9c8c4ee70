"""Files: write modes (truncate, append), single or distributed files, one writer process per
locale, and reading a single file or a set of locale files back into objects."""
import glob
import multiprocessing
import os
import traceback
import warnings
from collections import namedtuple

import h5py

from . import distribute
from . import objects as ak
from . import reader
from . import schema
from .writer import Writer, flatten

TRUNCATE, APPEND = "truncate", "append"
SINGLE, DISTRIBUTE = "single", "distribute"

Written = namedtuple("Written", "files writer_pids")


class ObjectExistsError(ValueError):
    """Append mode refuses to write an object whose name is already in the file."""


class OverwriteWarning(UserWarning):
    """Truncate mode replaced existing files."""


def _objects_of(obj, name):
    if isinstance(obj, dict):
        if name is not None:
            raise ValueError("give either a {name: object} dict or one object and its name")
        return flatten(obj)
    if isinstance(obj, ak.DataFrame):
        if name is not None:
            raise ValueError("a DataFrame is stored as its columns, which name themselves: give no name")
        return flatten({"": obj})
    return flatten({name or _default_name(obj): obj})


def _default_name(obj):
    key = "ndarray" if hasattr(obj, "dtype") else type(obj).__name__
    return schema.DEFAULT_NAMES.get(key, key)


def check_append(path, names):
    """Raises ObjectExistsError, before anything is written, when `path` already holds one of
    `names`."""
    if not os.path.exists(path):
        return
    with h5py.File(path, "r") as f:
        taken = [n for n in names if n in f]
    if taken:
        raise ObjectExistsError(
            f"{path}: cannot append {', '.join(repr(n) for n in taken)}: an object of that name is "
            "already in the file (append mode never replaces objects; use mode='truncate' or other names)")


def write_file(path, objects, mode, storage=None, arkouda_version=schema.DEFAULT_ARKOUDA_VERSION,
               naming=schema.SEED):
    """Writes {name: object} into one file. mode 'truncate' starts a new file, 'append' adds to
    an existing one (or creates it) and refuses names the file already holds."""
    writer = Writer(storage, arkouda_version, naming)
    if mode == APPEND:
        check_append(path, list(objects))
    with h5py.File(path, "w" if mode == TRUNCATE else "a") as f:
        for name, obj in objects.items():
            writer.write(f, name, obj)
    return os.getpid()


def _locale_writer(conn, path, objects, mode, storage, arkouda_version, naming):
    try:
        conn.send(("ok", write_file(path, objects, mode, storage, arkouda_version, naming)))
    except BaseException as e:  # reported to the parent, which raises it
        conn.send(("error", f"{type(e).__name__}: {e}\n{traceback.format_exc()}"))
    finally:
        conn.close()


def _write_locales(files, parts, mode, storage, arkouda_version, naming, start_method):
    """One process per locale file, all running at once."""
    if start_method is None:
        start_method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    ctx = multiprocessing.get_context(start_method)
    running = []
    for path, objects in zip(files, parts):
        receive, send = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_locale_writer, args=(send, path, objects, mode, storage, arkouda_version, naming),
                           name=f"arkouda-locale-writer:{os.path.basename(path)}")
        proc.start()
        send.close()
        running.append((path, proc, receive))
    pids, failures = [], []
    for path, proc, receive in running:
        try:
            status, detail = receive.recv()
        except EOFError:
            status, detail = "error", "the writer process ended without reporting"
        proc.join()
        if status == "ok" and proc.exitcode == 0:
            pids.append(detail)
        else:
            failures.append(f"{path}: {detail} (exit code {proc.exitcode})")
    if failures:
        raise RuntimeError("locale writers failed:\n" + "\n".join(failures))
    return pids


def to_hdf(path, obj, name=None, mode=TRUNCATE, file_type=SINGLE, locales=None, storage=None,
           arkouda_version=schema.DEFAULT_ARKOUDA_VERSION, naming=schema.SEED, start_method=None):
    """Writes an object, a DataFrame (its columns, plus "Index" when it has an index) or a
    {name: object} dict, in Arkouda's HDF5 schema.

    mode: 'truncate' replaces existing files (with an OverwriteWarning naming them); 'append'
      adds to existing files and raises ObjectExistsError, before writing anything, if a name is
      already taken.
    file_type: 'single' writes `path`; 'distribute' splits every object over `locales` (default
      os.cpu_count()) locale files <prefix>_LOCALE####<ext>, each written by its own process, all
      concurrently.
    storage: a storage.Storage (compression, sparse pdarrays).
    naming: link names inside Strings groups: 'seed' (default; `<name>/<name>_values` and
      `<name>/<name>_segments`, as the schema document states) or 'arkouda' (`<name>/values`,
      `<name>/segments`, what Arkouda's server reads). read_hdf reads both.
    start_method: how locale writers start (multiprocessing); default 'fork' where the platform
      has it, because it needs no `if __name__ == "__main__"` guard in the calling script (no
      HDF5 file is open in this process when the writers start). 'spawn' works from a guarded
      main module.
    Returns Written(files, writer_pids)."""
    if mode not in (TRUNCATE, APPEND):
        raise ValueError(f"mode must be 'truncate' or 'append', got {mode!r}")
    if file_type not in (SINGLE, DISTRIBUTE):
        raise ValueError(f"file_type must be 'single' or 'distribute', got {file_type!r}")
    schema.check_naming(naming)  # before any file changes
    objects = _objects_of(obj, name)
    if file_type == SINGLE:
        files = [str(path)]
    else:
        n = (os.cpu_count() or 1) if locales is None else int(locales)
        if n < 1:
            raise ValueError(f"locales must be at least 1, got {n}")
        files = distribute.locale_filenames(path, n)
    if mode == APPEND:
        if file_type == DISTRIBUTE:
            existing = distribute.existing_locale_files(path)
            if existing and len(existing) != len(files):
                raise ObjectExistsError(f"{path}: append to {len(files)} locale files, but "
                                        f"{len(existing)} exist; a distributed object needs one file per locale")
        for f in files:
            check_append(f, list(objects))
    else:
        replaced = [f for f in files if os.path.exists(f)]
        if file_type == DISTRIBUTE:
            # Locale files of an earlier, wider write would be read back as part of this one.
            stale = [f for i, f in sorted(distribute.locale_files_on_disk(path).items()) if i >= len(files)]
            for f in stale:
                os.remove(f)
            replaced += stale
        if replaced:
            warnings.warn(f"truncate mode overwrote {', '.join(replaced)}", OverwriteWarning, stacklevel=2)
    if file_type == SINGLE:
        return Written(files, [write_file(files[0], objects, mode, storage, arkouda_version, naming)])
    parts = [{k: distribute.part(v, i, len(files)) for k, v in objects.items()} for i in range(len(files))]
    return Written(files, _write_locales(files, parts, mode, storage, arkouda_version, naming, start_method))


def files_of(path):
    """The files an object set lives in, as Arkouda's read_hdf takes them: a list of several files
    as given; a file name, a one-element list, or a glob pattern (`prefix_LOCALE*`) expanded and
    sorted by name; else the locale files of `path` (`path` minus extension + `_LOCALE####`)."""
    if isinstance(path, (list, tuple)):
        if len(path) != 1:
            return _listed_files(path)
        path = path[0]
    path = os.fspath(path)
    if not path.strip():
        raise ValueError("read_hdf: the file name is empty")
    if os.path.isfile(path):
        return [path]
    if glob.has_magic(path):
        files = sorted(glob.glob(path))
        if not files:
            raise FileNotFoundError(f"no file matches the pattern {path}")
        return files
    files = distribute.existing_locale_files(path)
    if not files:
        raise FileNotFoundError(f"no file {path} and no {path} locale files")
    return files


def _listed_files(paths):
    """Several files named one by one (Arkouda does not expand patterns among them)."""
    if not paths:
        raise ValueError("read_hdf: the list of files is empty")
    files = [os.fspath(p) for p in paths]
    missing = [f for f in files if not os.path.isfile(f)]
    if missing:
        raise FileNotFoundError(f"no file {missing[0]}" + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""))
    return files


def ls(path):
    """{name: ObjType} of the top-level objects (of the first file of a distributed set)."""
    with h5py.File(files_of(path)[0], "r") as f:
        return {name: reader.object_type(f[name]) for name in f}


def read_hdf(path, names=None):
    """{name: object} read from `path`: a file, a list of files, a glob pattern, or the prefix of
    locale files (files_of); the files' parts are merged in that order. names: one name, a list
    of names, or None for every top-level object."""
    files = files_of(path)
    single = isinstance(names, str)
    parts = {}
    for file_name in files:
        with h5py.File(file_name, "r") as f:
            wanted = list(f) if names is None else ([names] if single else list(names))
            for n in wanted:
                if n not in f:
                    raise KeyError(f"{file_name}: no object named {n!r}")
                parts.setdefault(n, []).append(reader.read_object(f[n]))
    if any(len(p) != len(files) for p in parts.values()):
        raise reader.SchemaError(f"the files of {path} do not all hold the same objects")
    out = {n: (p[0] if len(p) == 1 else distribute.merge(p)) for n, p in parts.items()}
    return out[names] if single else out


def read_dataframe(path, columns=None):
    """A DataFrame from its column objects; an "Index" column becomes the index."""
    data = read_hdf(path, columns)
    index = data.pop(schema.INDEX_COLUMN, None)
    return ak.DataFrame(data, ak.Index(index) if index is not None else None)


def read_index(path, name=schema.DEFAULT_NAMES["Index"]):
    return ak.Index(read_hdf(path, name))
