"""Sparse-dataset tests run with the h5sparse connector on: HDF5 reads HDF5_VOL_CONNECTOR once,
when h5py loads it, so it is set here, before any test module imports h5py."""
import os

os.environ["HDF5_VOL_CONNECTOR"] = "h5sparse under_vol=0;under_info={}"
