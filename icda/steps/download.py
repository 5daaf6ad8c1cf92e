"""``python -m icda download``: fetch the missing files of public datasets (workflow rule ``download``).

Files come from the dataset's ``url`` + relative path and are written under ``data_dir`` (to a
temporary name, renamed once its md5 matches the dataset's ``md5`` entry where one is known).
Datasets that are not public are reported with how to get them.

The datasets come from ``--spec`` (JSON {name, data_dir, ...spec}) or from ``--config`` (YAML
with data_dir and datasets) and ``--dataset`` (repeatable; default: all). A dataset named
explicitly that cannot be downloaded (not public, no url) is an error; with ``--config`` and no
``--dataset`` such datasets are only reported. Each download is checked against the known md5
sums (and git blob ids) of its spec (:func:`download`).
"""

from __future__ import annotations

import argparse
import hashlib
import logging
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from icda.data.dataset_spec import describe_missing, downloadable, missing_files, validate_spec
from icda.data.dataset_spec_files import load_specs
from icda.errors import DataError
from icda.guard import add_input
from icda.io import atomic_path

log = logging.getLogger(__name__)

#: seconds one file's download may take in all (``timeout`` bounds each read): a server that
#: trickles its answer byte by byte is given up on after this long
DOWNLOAD_DEADLINE = 30 * 60.0
#: what a downloaded file may start with (after whitespace and a byte-order mark, lower-cased)
#: that marks it as a web page (a login, error or redirect page) rather than data
_HTML_STARTS = (b"<!doctype html", b"<html")


def file_md5(path: str | Path) -> str:
    """The md5 hex digest of a file's bytes."""
    digest = hashlib.md5()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def file_git_blob(path: str | Path) -> str:
    """The git blob id of a file (what ``git hash-object FILE`` prints): the SHA-1 of
    ``b"blob <size>\\0"`` followed by the file's bytes."""
    digest = hashlib.sha1(f"blob {Path(path).stat().st_size}\0".encode())
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


#: the checksums a spec may know of a file: spec key → the function that computes it
CHECKSUMS = {"md5": file_md5, "git_blob": file_git_blob}


def unreachable(urls: list[str], timeout: float = 5.0) -> dict[str, str]:
    """{url: why} for the ``urls`` whose server cannot be reached (no network, unknown host,
    refused or timed-out connection). One HEAD request per server (scheme and host), the first
    of its URLs: an HTTP error status means the server answers, so its URLs count as reachable
    (the download itself then reports the error). Never raises."""
    verdict: dict[str, str | None] = {}  # server → why it cannot be reached, or None
    out = {}
    for url in urls:
        parts = urllib.parse.urlsplit(url)
        server = f"{parts.scheme}://{parts.netloc}"
        if server not in verdict:
            try:
                urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=timeout).close()
                verdict[server] = None
            except urllib.error.HTTPError:
                verdict[server] = None
            except (urllib.error.URLError, OSError, ValueError) as exc:
                verdict[server] = str(getattr(exc, "reason", exc))
        if verdict[server] is not None:
            out[url] = verdict[server]
    return out


def download(name: str, spec: dict, data_dir: str | Path, timeout: float = 60.0) -> list[Path]:
    """Fetch the missing files of a public dataset from ``spec["url"] + relative path``.

    Each file is written to a temporary name beside its final path; its md5 and git blob id are
    checked against ``spec["md5"]`` and ``spec["git_blob"]`` where known (otherwise its md5 is
    logged), and only then is it
    renamed to its final path, so a failed, stalled or corrupt download, or a web page served in
    place of the file, leaves nothing behind.

    Returns:
        The paths downloaded (empty when nothing was missing).

    Raises:
        ConfigError: the spec is invalid (among others: a path that is absolute or climbs out of
            ``data_dir``, a URL that is not http(s), or file:// without ``allow_file_url``).
        DataError: the dataset is not public or has no ``url`` (the message says how to get it);
            a file's path leads out of ``data_dir`` through a symbolic link; a download failed
            (offline, a URL not found, a server that stalls or sends so slowly that the file
            misses its :data:`DOWNLOAD_DEADLINE`: the message names the URL and the path to put
            the file at); what arrived is a web page (Content-Type text/html, or it starts with
            ``<!DOCTYPE html`` or ``<html``), not data; or a file's checksum differs from the known one
            (the message names the file, both checksums and the fix).
    """
    spec = validate_spec(name, spec)
    missing = missing_files(spec, data_dir)
    if not missing:
        return []
    if not downloadable(spec):
        raise DataError(missing[0], None, "file not found and not downloadable",
                        describe_missing(name, spec, data_dir))
    data_dir = Path(data_dir)
    root = data_dir.resolve()
    for path in missing:  # validate_spec refused '..' and absolute paths; a link may still lead out
        if not path.resolve().is_relative_to(root):
            raise DataError(path, None, f"dataset {name!r}: the file would be written to "
                            f"{path.resolve()}, outside data_dir {root} (a symbolic link leads out)",
                            "put the file there by hand, or replace the link by a folder")
    base = spec["url"] if spec["url"].endswith("/") else spec["url"] + "/"
    done = []
    for path in missing:
        rel = path.relative_to(data_dir).as_posix()
        url = base + rel
        log.info("%s: downloading %s to %s", name, url, path)
        with atomic_path(path) as tmp:  # removed on any failure: no partial file is kept
            _fetch(name, url, path, tmp, timeout)
            checked = [key for key in CHECKSUMS if (spec[key] or {}).get(rel)]
            if not checked:
                log.info("%s: %s has no known checksum; its md5 is %s", name, path, file_md5(tmp))
            for key in checked:
                expected, actual = spec[key][rel].lower(), CHECKSUMS[key](tmp)
                if actual != expected:
                    raise DataError(path, None,
                                    f"dataset {name!r}: the file downloaded from {url} has {key} {actual}, "
                                    f"expected {expected} (datasets.{name}.{key})",
                                    "rerun to download it again (it was not kept); if the checksum "
                                    "still differs, the upstream file changed: place the right file "
                                    f"at {path.resolve()} by hand, or correct datasets.{name}.{key} / "
                                    "url")
                log.info("%s: %s %s %s verified", name, path, key, actual)
        done.append(path)
    return done


class _DeadlinePassed(Exception):
    pass


def _fetch(name: str, url: str, path: Path, tmp: Path, timeout: float) -> None:
    """Download ``url`` into ``tmp`` within :data:`DOWNLOAD_DEADLINE` seconds and check that it
    is not a web page; ``path`` (where the file goes) and ``name`` (its dataset) are for messages.

    Raises:
        DataError: the URL is not found or answers another HTTP error, the server cannot be
            reached or stalls, the deadline passes, or what arrived is a web page.
    """
    deadline = time.monotonic() + DOWNLOAD_DEADLINE
    where = (f"fetch {url} elsewhere and put it at {path.resolve()}; or leave {name!r} out of "
             "run_datasets (or set `download: false` to list it as unavailable)")
    try:
        with urllib.request.urlopen(url, timeout=min(timeout, DOWNLOAD_DEADLINE)) as response, \
                open(tmp, "wb") as fh:
            content_type = response.headers.get_content_type()
            head = b""
            while True:
                block = response.read1(1 << 16)
                if not block:
                    break
                fh.write(block)
                if len(head) < 1024:
                    head += block[:1024]
                if time.monotonic() > deadline:
                    raise _DeadlinePassed
    except _DeadlinePassed:
        raise DataError(path, None, f"dataset {name!r}: the download of {url} did not finish within its "
                        f"deadline of {DOWNLOAD_DEADLINE:g} s (the server sends too slowly)",
                        f"rerun later; or {where}") from None
    except urllib.error.HTTPError as exc:
        if exc.code in (404, 410):
            problem = f"{url} was not found on the server (HTTP {exc.code} {exc.reason})"
        else:
            problem = f"the server answered {url} with HTTP {exc.code} {exc.reason}"
        raise DataError(path, None, f"dataset {name!r}: {problem}",
                        f"check datasets.{name}.url (the file is fetched from url + its path); or "
                        f"{where}") from exc
    except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
        reason = getattr(exc, "reason", exc)
        raise DataError(path, None, f"dataset {name!r}: could not download {url} ({reason})",
                        f"connect to the internet and rerun; or {where}") from exc
    start = head.lstrip(b"\xef\xbb\xbf").lstrip().lower()
    if content_type == "text/html" or start.startswith(_HTML_STARTS):
        why = "Content-Type text/html" if content_type == "text/html" else "it starts with " + repr(
            start[:15].decode("utf-8", "replace"))
        raise DataError(path, None, f"dataset {name!r}: {url} answered with a web page, not data ({why}); "
                        "it was not kept",
                        f"check datasets.{name}.url (a login, error or moved page answers there); or "
                        f"{where}")


# --------------------------------------------------------------------------- the command


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "download",
        help="fetch missing public data files; say how to get the others",
        description=(
            "Download the missing train/dev/test files of public datasets from url + relative "
            "path into data_dir. The datasets come from --spec (JSON {name, data_dir, ...spec}) or "
            "from --config (YAML with data_dir and datasets) and --dataset (repeatable; default: "
            "all). A dataset named explicitly that cannot be downloaded (not public, no url) is an "
            "error; with --config and no --dataset such datasets are only reported."
        ),
    )
    add_input(p, "--spec", help="JSON spec: {\"name\": ..., \"data_dir\": ..., **spec}")
    add_input(p, "--config", help="YAML config with data_dir and datasets (instead of --spec)")
    p.add_argument("--dataset", action="append", help="dataset name in --config (repeatable; default all)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    every = args.config is not None and not args.dataset
    for name, spec, data_dir in load_specs(args.spec, args.config, args.dataset):
        full = validate_spec(name, spec)
        missing = missing_files(full, data_dir)
        if not missing:
            print(f"{name}: all files present")
        elif every and not downloadable(full):
            print(f"{name}: cannot download. {describe_missing(name, full, data_dir)}")
        else:
            paths = download(name, full, data_dir)
            print(f"{name}: downloaded " + ", ".join(str(p) for p in paths))
    return 0
