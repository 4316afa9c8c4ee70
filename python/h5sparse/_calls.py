"""Calls into libh5sparse from Python: under h5py's lock (HDF5 is not re-entered from another
h5py thread meanwhile), and on failure an exception that carries the messages of HDF5's error
stack, which h5py keeps from being printed."""
import ctypes
import gc


class H5SparseError(RuntimeError):
    """An h5sparse call failed; the message holds the records of HDF5's error stack, and
    `records` the records themselves (from the API call down to where the failure was found): dicts with the error class ("HDF5",
    "h5sparse"), file, line, function, minor (h5sparse's error code name for its own records)
    and message."""

    def __init__(self, message, records=()):
        super().__init__(message)
        self.records = list(records)


class _ErrorRecord(ctypes.Structure):  # H5E_error2_t
    _fields_ = [("cls_id", ctypes.c_int64), ("maj_num", ctypes.c_int64), ("min_num", ctypes.c_int64),
                ("line", ctypes.c_uint), ("func_name", ctypes.c_char_p), ("file_name", ctypes.c_char_p),
                ("desc", ctypes.c_char_p)]


_WALK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_uint, ctypes.POINTER(_ErrorRecord), ctypes.c_void_p)
_phil = None


def _text(raw):
    return raw.decode(errors="replace") if raw else ""


def _error_records():
    """Takes the records of HDF5's default error stack (which it leaves empty), outermost first.
    Walked on a copy: the calls that name a record's class and code would clear the default stack."""
    from ._libhdf5 import lib as hdf5
    lib = hdf5()
    if not getattr(lib.H5Ewalk2, "argtypes", None):
        lib.H5Ewalk2.restype = ctypes.c_int
        lib.H5Ewalk2.argtypes = [ctypes.c_int64, ctypes.c_int, _WALK, ctypes.c_void_p]
        lib.H5Eget_class_name.restype = ctypes.c_ssize_t
        lib.H5Eget_class_name.argtypes = [ctypes.c_int64, ctypes.c_char_p, ctypes.c_size_t]
        lib.H5Eget_msg.restype = ctypes.c_ssize_t
        lib.H5Eget_msg.argtypes = [ctypes.c_int64, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
        lib.H5Eget_current_stack.restype = ctypes.c_int64
        lib.H5Eclose_stack.argtypes = [ctypes.c_int64]
    records = []

    def collect(_n, record, _data):
        r = record.contents
        cls, minor = ctypes.create_string_buffer(64), ctypes.create_string_buffer(128)
        lib.H5Eget_class_name(r.cls_id, cls, 64)
        lib.H5Eget_msg(r.min_num, None, minor, 128)
        records.append({"class": _text(cls.value), "file": _text(r.file_name), "line": r.line,
                        "function": _text(r.func_name), "minor": _text(minor.value), "message": _text(r.desc)})
        return 0

    stack = lib.H5Eget_current_stack()
    if stack < 0:
        return records
    lib.H5Ewalk2(stack, 1, _WALK(collect), None)  # H5E_WALK_DOWNWARD
    lib.H5Eclose_stack(stack)
    return records


def _error_text(records):
    messages = [r["message"] for r in records if r["message"]]
    return "; ".join(m for m in messages if not m.startswith(("unable to", "can't"))) or "see the HDF5 error stack"


def guarded(function, *args):
    """(function(*args), None) under h5py's lock, or for a negative result (result, the records
    of the error stack), taken before any other HDF5 call clears them."""
    global _phil
    if _phil is None:
        import h5py  # h5sparse itself does not need h5py to be importable
        _phil = h5py._objects.phil
    with _phil:
        # No garbage collection until the records are taken: a collected h5py object's
        # finalizer calls HDF5 (H5Idec_ref), and any HDF5 call clears the error stack.
        collecting = gc.isenabled()
        gc.disable()
        try:
            rc = function(*args)
            return rc, (_error_records() if rc < 0 else None)
        finally:
            if collecting:
                gc.enable()


def call(lib, what, dset, function, *args, error=H5SparseError):
    """function(dset's id, *args); a negative result raises `error` naming `what` and the dataset."""
    rc, records = guarded(function, dset.id.id, *args)
    if records is not None:
        raise error(f"{what} failed on {dset.name}: {_error_text(records)}", records)
    return rc
