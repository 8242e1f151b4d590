"""packaging/icu_data.py: the ICU data filter keeps what Qt needs and rewrites packages exactly."""

import importlib.util
from pathlib import Path

import PySide6

REPO = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("icu_data", REPO / "packaging" / "icu_data.py")
icu_data = importlib.util.module_from_spec(spec)
spec.loader.exec_module(icu_data)

LIBRARY = next((Path(PySide6.__file__).parent / "Qt" / "lib").glob("libicudata.so.*"))


def test_the_filter_keeps_core_data_and_english_and_drops_other_locales():
    kept = ["icudt73l/uprops.icu", "icudt73l/ucase.icu", "icudt73l/nfkc.nrm",
            "icudt73l/root.res", "icudt73l/en.res", "icudt73l/pool.res",
            "icudt73l/res_index.res", "icudt73l/zoneinfo64.res", "icudt73l/coll/root.res",
            "icudt73l/coll/ucadata.icu", "icudt73l/brkitr/line.brk",
            "icudt73l/zone/en_GB.res", "icudt73l/likelySubtags.res"]  # fmt: skip
    dropped = ["icudt73l/de.res", "icudt73l/zh_Hant_TW.res", "icudt73l/coll/sv.res",
               "icudt73l/ibm-943_P15A-2003.cnv", "icudt73l/brkitr/cjdict.dict",
               "icudt73l/translit/root.res", "icudt73l/lang/fr.res"]  # fmt: skip
    assert [name for name in kept if not icu_data.keep(name)] == []
    assert [name for name in dropped if icu_data.keep(name)] == []


def test_a_package_read_and_written_back_is_identical():
    _symbol, package = icu_data.package_of(LIBRARY)
    header, items = icu_data.read_package(package)
    assert len(items) > 1000
    assert icu_data.write_package(header, items) == package


def test_the_filtered_package_lists_exactly_the_kept_items():
    _symbol, package = icu_data.package_of(LIBRARY)
    header, items = icu_data.read_package(package)
    kept = [(name, item) for name, item in items if icu_data.keep(name)]
    small = icu_data.write_package(header, kept)
    assert len(small) < len(package) / 5
    assert icu_data.read_package(small)[1] == kept
