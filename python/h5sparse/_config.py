"""h5plugin-config of a wheel install: where the plugins for this environment's h5py are and
what to export for programs that do not import h5sparse. (Source trees, builds and Debian
packages have the shell script h5plugin-config, with the same options where they apply.)"""
import argparse
import sys

from . import _bundle

_FILTERS = ((45100, "h5sparse-structured-chunk", "structured chunk: selection + values, each section its own pipeline"),
            (32001, "blosc", "hdf5-blosc cd_values: 0,0,0,0,clevel,shuffle,compressor"),
            (32000, "lzf", "h5py's LZF cd_values: 4,0x0105,chunk bytes"))


def _series():
    """The HDF5 series of this environment's h5py, read from its wheel when it is one."""
    found = _bundle._series_in_h5py_libs()
    if found:
        return found
    import h5py
    return _bundle.series_of(h5py.version.hdf5_version_tuple)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="h5plugin-config", description=__doc__.split("\n\n")[0])
    for option, text in (("--plugin-path", "directory to put on HDF5_PLUGIN_PATH"),
                         ("--vol-connector", "value of HDF5_VOL_CONNECTOR that turns the connector on"),
                         ("--env", "shell exports of both"),
                         ("--filters", "the filters: ID, name, options"),
                         ("--flavour", "the HDF5 flavour of the plugins (a wheel's are serial)"),
                         ("--hdf5", "the HDF5 series the plugins are for"),
                         ("--version", "h5sparse version")):
        parser.add_argument(option, action="store_true", help=text)
    args = parser.parse_args(argv)
    if not _bundle.present():
        parser.error("this h5sparse has no plugins of its own (not a wheel): use the h5plugin-config of its build")
    try:
        series = _series()
    except ImportError as e:
        print(f"h5plugin-config: {e}", file=sys.stderr)
        return 1
    plugins = _bundle.plugin_dir(series)
    if args.plugin_path:
        print(plugins)
    if args.vol_connector:
        print(_bundle.CONNECTOR)
    if args.env:
        print(f"export HDF5_PLUGIN_PATH='{plugins}'\nexport HDF5_VOL_CONNECTOR='{_bundle.CONNECTOR}'")
    if args.filters:
        for filter_id, name, text in _FILTERS:
            print(f"{filter_id}\t{name}\t{text}")
    if args.flavour:
        print("serial")
    if args.hdf5:
        print(f"{'1.14.x' if series == '1.14' else '2.x'} serial")
    if args.version:
        from importlib import metadata
        print(metadata.version("hdf5-sparse"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
