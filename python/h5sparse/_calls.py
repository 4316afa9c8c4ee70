"""Calls into libh5sparse from Python: under h5py's lock (HDF5 is not re-entered from another
h5py thread meanwhile), and on failure an exception that carries the messages of HDF5's error
stack, which h5py keeps from being printed."""
import ctypes


class H5SparseError(RuntimeError):
    """An h5sparse call failed; the message holds the records of HDF5's error stack."""


class _ErrorRecord(ctypes.Structure):  # H5E_error2_t
    _fields_ = [("cls_id", ctypes.c_int64), ("maj_num", ctypes.c_int64), ("min_num", ctypes.c_int64),
                ("line", ctypes.c_uint), ("func_name", ctypes.c_char_p), ("file_name", ctypes.c_char_p),
                ("desc", ctypes.c_char_p)]


_WALK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_uint, ctypes.POINTER(_ErrorRecord), ctypes.c_void_p)
_phil = None


def _error_text(lib):
    if not getattr(lib.H5Ewalk2, "argtypes", None):  # HDF5 itself, through libh5sparse's dependencies
        lib.H5Ewalk2.restype = ctypes.c_int
        lib.H5Ewalk2.argtypes = [ctypes.c_int64, ctypes.c_int, _WALK, ctypes.c_void_p]
    messages = []

    def collect(_n, record, _data):
        if record.contents.desc:
            messages.append(record.contents.desc.decode(errors="replace"))
        return 0

    lib.H5Ewalk2(0, 1, _WALK(collect), None)  # H5E_DEFAULT, H5E_WALK_DOWNWARD
    return "; ".join(m for m in messages if not m.startswith(("unable to", "can't"))) or "see the HDF5 error stack"


def call(lib, what, dset, function, *args, error=H5SparseError):
    """function(dset's id, *args); a negative result raises `error` naming `what` and the dataset."""
    global _phil
    if _phil is None:
        import h5py  # h5sparse itself does not need h5py to be importable
        _phil = h5py._objects.phil
    with _phil:
        rc = function(dset.id.id, *args)
        if rc < 0:
            text = _error_text(lib)  # first: any HDF5 call (dset.name too) clears the error stack
            raise error(f"{what} failed on {dset.name}: {text}")
    return rc
