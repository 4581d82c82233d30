"""Helpers the notebooks share: where the inputs are, reading the database, the feature layout v2.

Inputs come from environment variables (set by `make notebooks`), with defaults under out/notebooks:
SOUNDTRACK_EVAL_JSON (offline `eval --json`), SOUNDTRACK_ONLINE_JSON (`eval --online --json`),
SOUNDTRACK_NB_DB (a Soundtrack SQLite database), SOUNDTRACK_BINS_JSON (`eval bins --json`),
SOUNDTRACK_FIGURES (where PNGs are written).
"""
import json
import os
import sqlite3

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath("__file__")), ".."))
if not os.path.isdir(os.path.join(ROOT, "notebooks")):
    ROOT = os.path.abspath(".")
OUT = os.path.join(ROOT, "out", "notebooks")


def path(var, default):
    return os.environ.get(var) or os.path.join(OUT, default)


def figures_dir():
    d = path("SOUNDTRACK_FIGURES", "figures")
    os.makedirs(d, exist_ok=True)
    return d


def load_json(var, default):
    with open(path(var, default), encoding="utf-8") as f:
        return json.load(f)


# Feature layout v2 (docs/features.md, Sources/SoundtrackContext/FeatureLayout.swift): 100 slots. The
# place.p* and tags.t* slots are each user's own (their meaning is in users.place_names / tag_names).
LAYOUT_VERSION = 2


def _layout():
    names = []
    def add(prefix, items):
        names.extend(f"{prefix}.{n}" for n in items)
    add("time", ["tod_sin", "tod_cos", "dow_sin", "dow_cos", "weekend", "daylight"])
    add("movement", ["speed", "moving"])
    add("location", ["accuracy"])
    add("place", ["home", "work", "school", "library", "gym", "cafe", "outdoors", "shop", "transit", "other"])
    add("place", [f"p{i}" for i in range(8)])
    add("weather", ["temp", "wind", "clouds", "humidity", "precip"])
    add("weather", ["cond_" + g for g in ["clear", "cloudy", "wet", "snow", "murky", "other"]])
    add("calendar", ["workout", "study", "work", "social", "travel", "rest", "other", "busy", "next_soon"])
    add("bluetooth", ["car", "headphones", "speaker", "watch", "other"])
    add("motion", ["stationary", "walking", "running", "cycling", "automotive", "unknown", "cadence", "hr_zone", "steps_today"])
    add("audio", ["speaker", "headphones", "bluetooth", "car", "airplay", "other", "volume"])
    add("tags", [f"t{i}" for i in range(32)])
    return names


SLOTS = _layout()
assert len(SLOTS) == 100


def vector(blob):
    """A stored vector: little-endian Float32 values (docs/architecture.md, Persistence)."""
    return np.frombuffer(blob, dtype="<f4").astype(np.float64)


def bins(db):
    """Every bin: (user, number, label, centroid, observed, likes) with vectors as numpy arrays."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    rows = con.execute(
        "SELECT b.user_id, b.number, b.label, b.layout_version, b.centroid, b.observed, "
        "COALESCE((SELECT SUM(likes) FROM bin_songs s WHERE s.bin_id = b.id), 0) "
        "FROM bins b ORDER BY b.user_id, b.number").fetchall()
    con.close()
    out = []
    for user, number, label, version, centroid, observed, likes in rows:
        assert version == LAYOUT_VERSION, f"layout version {version}"
        out.append((user, number, label, vector(centroid), vector(observed), likes))
    return out


def weights(db):
    """Per-user feature weights: (users, matrix users × 100)."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    rows = con.execute("SELECT user_id, layout_version, vector FROM weights ORDER BY user_id").fetchall()
    con.close()
    users = [r[0] for r in rows]
    return users, np.array([vector(r[2]) for r in rows]) if rows else np.zeros((0, len(SLOTS)))


def pca_2d(x):
    """The first two principal components of the rows of x (centred), via SVD."""
    xc = x - x.mean(axis=0)
    _, s, vt = np.linalg.svd(xc, full_matrices=False)
    explained = (s ** 2) / max((s ** 2).sum(), 1e-12)
    return xc @ vt[:2].T, explained[:2]
