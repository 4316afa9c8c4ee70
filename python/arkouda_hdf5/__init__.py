"""Arkouda's HDF5 schema (file_version 2.0) for plain h5py + numpy, both ways.

    import arkouda_hdf5 as ah
    ah.to_hdf("data.h5", {"x": np.arange(10), "s": ah.Strings.from_list(["a", "b"])})
    ah.to_hdf("data.h5", ah.ArrayView(np.ones((2, 3))), name="m", mode="append")
    ah.to_hdf("dist.h5", {"x": big}, file_type="distribute", locales=4)   # dist_LOCALE0000.h5 ...
    ah.read_hdf("data.h5")            # {"x": ndarray, "s": Strings, "m": ArrayView}
    ah.to_hdf("z.h5", {"x": x}, storage=ah.Storage(compression="blosc", sparse="auto"))
    ah.to_hdf("srv.h5", {"s": s}, naming="arkouda")   # s/values, not s/s_values (schema.py)

Objects: pdarray (1-D numpy array), ArrayView, Strings, SegArray, Categorical, GroupBy,
DataFrame, Index (objects.py). Layout and attributes: schema.py, writer.py, reader.py;
locale split: distribute.py; files and write modes: io.py.
"""
from .distribute import block, locale_filename, locale_filenames, merge, part, split
from .io import (ObjectExistsError, OverwriteWarning, Written, files_of, ls, read_dataframe, read_hdf,
                 read_index, to_hdf, write_file)
from .objects import ArrayView, Categorical, DataFrame, GroupBy, Index, SegArray, Strings, same
from .reader import SchemaError, read_object
from .schema import ObjType
from .storage import Storage
from .writer import Writer

__all__ = ["ArrayView", "Categorical", "DataFrame", "GroupBy", "Index", "ObjType", "ObjectExistsError",
           "OverwriteWarning", "SchemaError", "SegArray", "Storage", "Strings", "Writer", "Written",
           "block", "files_of", "locale_filename", "locale_filenames", "ls", "merge", "part",
           "read_dataframe", "read_hdf", "read_index", "read_object", "same", "split", "to_hdf",
           "write_file"]
